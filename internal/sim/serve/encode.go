package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// field is one member of an event, kept in declaration order as fuseraft writes them.
type field struct {
	k string
	v any
}

// encodeEvent writes an event object with its fields in order. Nullable values are passed as
// nil and come out as null, never omitted.
func encodeEvent(typ string, fields ...field) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	writeJSON(&b, typ)
	for _, f := range fields {
		b.WriteByte(',')
		writeJSON(&b, f.k)
		b.WriteByte(':')
		if raw, ok := f.v.(json.RawMessage); ok {
			b.Write(raw)
			continue
		}
		writeJSON(&b, f.v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("serve: encoding %T: %v", v, err))
	}
	b.Truncate(b.Len() - 1) // Encode's newline
}

// dotnetJSON rewrites a compact JSON line the way .NET's default encoder writes it: pure ASCII,
// with non-ASCII characters and < > & ' " + ` inside strings as \uXXXX in upper-case hex.
func dotnetJSON(in []byte) []byte {
	out := make([]byte, 0, len(in)+len(in)/8)
	inStr := false
	for i := 0; i < len(in); {
		c := in[i]
		if !inStr {
			if c == '"' {
				inStr = true
			}
			out = append(out, c)
			i++
			continue
		}
		switch {
		case c == '\\':
			// An existing escape: normalise \" and \u00xx to upper case, keep the rest.
			if i+1 < len(in) && in[i+1] == '"' {
				out = append(out, `\u0022`...)
				i += 2
				continue
			}
			if i+1 < len(in) && in[i+1] == 'u' && i+6 <= len(in) {
				out = append(out, '\\', 'u')
				out = append(out, bytes.ToUpper(in[i+2:i+6])...)
				i += 6
				continue
			}
			out = append(out, in[i:min(i+2, len(in))]...)
			i += 2
		case c == '"':
			inStr = false
			out = append(out, c)
			i++
		case c == '<' || c == '>' || c == '&' || c == '\'' || c == '+' || c == '`':
			out = fmt.Appendf(out, `\u%04X`, c)
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, n := utf8.DecodeRune(in[i:])
			if r > 0xFFFF {
				r -= 0x10000
				out = fmt.Appendf(out, `\u%04X\u%04X`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			} else {
				out = fmt.Appendf(out, `\u%04X`, r)
			}
			i += n
		}
	}
	return out
}
