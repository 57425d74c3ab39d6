package filter

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/jsonscan"
)

// encoder writes values as gojq's command line does: keys sorted, jq's string escapes, jq's
// number formatting, compact or indented. It appends to a reused buffer.
type encoder struct {
	indent int  // spaces per level; <0 compact
	tab    bool // one tab per level
	depth  int
	keys   []string // scratch for sorting keys
}

func (e *encoder) encode(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		b = append(b, "null"...)
	case bool:
		if v {
			b = append(b, "true"...)
		} else {
			b = append(b, "false"...)
		}
	case int:
		b = strconv.AppendInt(b, int64(v), 10)
	case float64:
		b = appendFloat(b, v)
	case *big.Int:
		b = v.Append(b, 10)
	case json.Number:
		b = append(b, v...)
	case string:
		b = appendString(b, v)
	case []any:
		b = append(b, '[')
		e.depth++
		for i, x := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.newline(b)
			b = e.encode(b, x)
		}
		e.depth--
		if len(v) > 0 {
			b = e.newline(b)
		}
		b = append(b, ']')
	case map[string]any:
		b = append(b, '{')
		base := len(e.keys)
		for k := range v {
			e.keys = append(e.keys, k)
		}
		keys := e.keys[base:]
		slices.SortFunc(keys, strings.Compare)
		e.depth++
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.newline(b)
			b = appendString(b, k)
			b = append(b, ':')
			if e.indent >= 0 {
				b = append(b, ' ')
			}
			b = e.encode(b, v[k])
		}
		e.depth--
		clear(e.keys[base:])
		e.keys = e.keys[:base]
		if len(v) > 0 {
			b = e.newline(b)
		}
		b = append(b, '}')
	default:
		panic(fmt.Sprintf("invalid type: %[1]T (%[1]v)", v))
	}
	return b
}

func (e *encoder) newline(b []byte) []byte {
	if e.indent < 0 {
		return b
	}
	b = append(b, '\n')
	if e.tab {
		for range e.depth {
			b = append(b, '\t')
		}
	} else {
		for range e.depth * e.indent {
			b = append(b, ' ')
		}
	}
	return b
}

func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) {
		return append(b, "null"...)
	}
	f = min(max(f, -math.MaxFloat64), math.MaxFloat64)
	format := byte('f')
	if x := math.Abs(f); x != 0 && x < 1e-6 || x >= 1e21 {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9
		if n := len(b) - start; n >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start, i := 0, 0
	for i < len(s) {
		if i+8 <= len(s) && jsonscan.Plain8(binary.LittleEndian.Uint64([]byte(s[i:i+8]))) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if ' ' <= c && c <= '~' && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"':
				b = append(b, `\"`...)
			case '\\':
				b = append(b, `\\`...)
			case '\b':
				b = append(b, `\b`...)
			case '\f':
				b = append(b, `\f`...)
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\t':
				b = append(b, `\t`...)
			default:
				const hex = "0123456789abcdef"
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
