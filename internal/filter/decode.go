package filter

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// decoder turns one line into the values gojq's own command line gets from encoding/json with
// UseNumber: map[string]any, []any, string, json.Number, bool and nil, with the same string
// unescaping (invalid UTF-8 and lone surrogates become U+FFFD) and the same rule for repeated
// keys (the last wins). It works on one string copy of the line, and strings without escapes
// are slices of it, so a line costs few allocations. It assumes the line is valid JSON
// (scanLine said so) and stays memory-safe when it is not.
type decoder struct {
	s     string
	stack []any // elements of the arrays being decoded
}

// decode decodes the valid JSON line b.
func (d *decoder) decode(b []byte) any {
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

func (d *decoder) value(i int) (any, int) {
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
func (d *decoder) str(i int) (string, int) {
	b := unsafe.Slice(unsafe.StringData(d.s), len(d.s))
	end, ok := quickStringEnd(b, i+1)
	if !ok {
		return "", len(d.s)
	}
	raw := b[i+1 : end-1]
	if indexByte(raw, '\\') < 0 && (isASCII(raw) || utf8.Valid(raw)) {
		return d.s[i+1 : end-1], end
	}
	u, _ := unquoteBytes(b[i:end])
	return u, end
}

// unquoteBytes decodes a quoted JSON string as encoding/json does.
func unquoteBytes(q []byte) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	s := q[1 : len(q)-1]
	out := make([]byte, 0, len(s)+utf8.UTFMax)
	for r := 0; r < len(s); {
		// Copy the run up to the next escape at once when it is valid UTF-8.
		if j := indexByte(s[r:], '\\'); j != 0 {
			if j < 0 {
				j = len(s) - r
			}
			if run := s[r : r+j]; isASCII(run) || utf8.Valid(run) {
				out = append(out, run...)
				r += j
				continue
			}
		}
		c := s[r]
		switch {
		case c == '\\':
			if r+1 >= len(s) {
				return "", false
			}
			switch s[r+1] {
			case '"', '\\', '/', '\'':
				out = append(out, s[r+1])
				r += 2
			case 'b':
				out = append(out, '\b')
				r += 2
			case 'f':
				out = append(out, '\f')
				r += 2
			case 'n':
				out = append(out, '\n')
				r += 2
			case 'r':
				out = append(out, '\r')
				r += 2
			case 't':
				out = append(out, '\t')
				r += 2
			case 'u':
				rr := getu4(s[r:])
				if rr < 0 {
					return "", false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
						r += 6
						out = utf8.AppendRune(out, dec)
						break
					}
					rr = utf8.RuneError
				}
				out = utf8.AppendRune(out, rr)
			default:
				return "", false
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			out = utf8.AppendRune(out, rr)
		}
	}
	return string(out), true
}

// getu4 decodes \uXXXX from the beginning of s, returning the hex value, or -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
