package jsonscan

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
	"unsafe"
)

// Decoder turns one line into the values gojq's own command line gets from encoding/json with
// UseNumber: map[string]any, []any, string, json.Number, bool and nil, with the same string
// unescaping (invalid UTF-8 and lone surrogates become U+FFFD) and the same rule for repeated
// keys (the last wins). It works on one string copy of the line, and strings without escapes
// are slices of it, so a line costs few allocations. It assumes the line is valid JSON
// (Scan said so) and stays memory-safe when it is not.
type Decoder struct {
	s     string
	stack []any // elements of the arrays being decoded
}

// Decode decodes the valid JSON line b. The Decoder may be reused; it is not safe for
// concurrent use.
func (d *Decoder) Decode(b []byte) any {
	d.s = string(b)
	i := skipWSs(d.s, 0)
	v, _ := d.value(i)
	d.s = ""
	return v
}

func skipWSs(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func (d *Decoder) value(i int) (any, int) {
	s := d.s
	if i >= len(s) {
		return nil, i
	}
	switch c := s[i]; c {
	case '"':
		str, end := d.str(i)
		return str, end
	case '{':
		m := make(map[string]any)
		i = skipWSs(s, i+1)
		if i < len(s) && s[i] == '}' {
			return m, i + 1
		}
		for i < len(s) {
			k, end := d.str(i)
			i = skipWSs(s, end)
			i = skipWSs(s, i+1) // ':'
			var v any
			v, i = d.value(i)
			m[k] = v
			i = skipWSs(s, i)
			if i >= len(s) || s[i] == '}' {
				return m, i + 1
			}
			i = skipWSs(s, i+1) // ','
		}
		return m, i
	case '[':
		base := len(d.stack)
		i = skipWSs(s, i+1)
		if i < len(s) && s[i] == ']' {
			return []any{}, i + 1
		}
		for i < len(s) {
			var v any
			v, i = d.value(i)
			d.stack = append(d.stack, v)
			i = skipWSs(s, i)
			if i >= len(s) || s[i] == ']' {
				i++
				break
			}
			i = skipWSs(s, i+1)
		}
		a := make([]any, len(d.stack)-base)
		copy(a, d.stack[base:])
		clear(d.stack[base:])
		d.stack = d.stack[:base]
		return a, i
	case 't':
		return true, i + 4
	case 'f':
		return false, i + 5
	case 'n':
		return nil, i + 4
	default:
		end := i + 1
		for end < len(s) {
			c := s[end]
			if '0' <= c && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
				end++
				continue
			}
			break
		}
		return json.Number(s[i:end]), end
	}
}

// str decodes the string starting at d.s[i] == '"'. The line is valid JSON, so the string
// ends at the first quote after an even run of backslashes.
func (d *Decoder) str(i int) (string, int) {
	b := unsafe.Slice(unsafe.StringData(d.s), len(d.s))
	end, ok := QuickStringEnd(b, i+1)
	if !ok {
		return "", len(d.s)
	}
	raw := b[i+1 : end-1]
	if bytes.IndexByte(raw, '\\') < 0 && (IsASCII(raw) || utf8.Valid(raw)) {
		return d.s[i+1 : end-1], end
	}
	u, _ := Unquote(b[i:end])
	return u, end
}
