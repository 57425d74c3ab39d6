package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Unquote decodes a quoted JSON string as encoding/json does.
func Unquote(q []byte) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	s := q[1 : len(q)-1]
	out := make([]byte, 0, len(s)+utf8.UTFMax)
	for r := 0; r < len(s); {
		// Copy the run up to the next backslash or non-ASCII byte at once.
		j := plainEnd(s, r)
		out = append(out, s[r:j]...)
		r = j
		if r >= len(s) {
			break
		}
		if c := s[r]; c >= utf8.RuneSelf {
			// Valid UTF-8 is copied as it is, a run at a time; each invalid byte becomes U+FFFD.
			k := r
			for k < len(s) && s[k] >= utf8.RuneSelf {
				k++
			}
			if run := s[r:k]; utf8.Valid(run) {
				out = append(out, run...)
				r = k
				continue
			}
			// Not valid: character by character, each invalid byte U+FFFD (in one pass: a
			// long run with one bad byte at its end is not checked again from each character).
			for r < k {
				rr, size := utf8.DecodeRune(s[r:k])
				if rr == utf8.RuneError && size == 1 {
					out = utf8.AppendRune(out, rr)
				} else {
					out = append(out, s[r:r+size]...)
				}
				r += size
			}
			continue
		}
		if r+1 >= len(s) {
			return "", false
		}
		switch e := s[r+1]; e {
		case '"', '\\', '/', '\'', 'b', 'f', 'n', 'r', 't':
			out = append(out, unescape[e])
			r += 2
		case 'u':
			rr := HexEscape(s[r:])
			if rr < 0 {
				return "", false
			}
			r += 6
			if utf16.IsSurrogate(rr) {
				rr1 := HexEscape(s[r:])
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
	}
	// out is never written again: the string shares its bytes instead of copying them.
	return unsafe.String(unsafe.SliceData(out), len(out)), true
}

// unescape maps the letter of a one-letter escape to the byte it stands for.
var unescape = [256]byte{'"': '"', '\\': '\\', '/': '/', '\'': '\'', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// plainEnd returns the index of the first backslash or non-ASCII byte in s at or after i, or
// len(s), looking at eight bytes at a time: code-like text has an escape every few dozen bytes.
func plainEnd(s []byte, i int) int {
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		b := w ^ (lsb * '\\')
		if m := ((b-lsb)&^b | w) & msb; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(s) && s[i] != '\\' && s[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// HexEscape decodes the escape \uXXXX at the start of s: the value of its four hex digits, or
// -1 when s does not start with one.
func HexEscape(s []byte) rune {
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
