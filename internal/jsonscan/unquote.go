package jsonscan

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote decodes a quoted JSON string as encoding/json does.
func Unquote(q []byte) (string, bool) {
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
			if run := s[r : r+j]; IsASCII(run) || utf8.Valid(run) {
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
