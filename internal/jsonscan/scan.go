// Package jsonscan reads fuseraft's JSON lines at the byte level: a validator that accepts
// exactly what encoding/json.Valid accepts and finds, on the way, the top-level "type" of an
// object (the last one, as jq reads duplicate keys). It never builds a value, so classifying a
// line, deciding fr-filter's --type or a select(.type=="X") prefilter costs one pass over the
// bytes. Strings, most of a fuseraft line, are skipped eight bytes at a time.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit: deeper input is not valid JSON to it, so not to us.
const maxDepth = 10000

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stringStop returns a mask with the high bit set in the lowest byte of w that is a quote, a
// backslash or a control character (and maybe in bytes above it): the first byte a string
// scan has to look at. Bytes >= 0x80 never match.
func stringStop(w uint64) uint64 {
	q := w ^ (lsb * '"')
	s := w ^ (lsb * '\\')
	return ((q-lsb)&^q | (s-lsb)&^s | (w-lsb*0x20)&^w) & msb
}

// Plain8 reports whether none of the 8 bytes in w needs escaping in a JSON string (all in
// ' '..'~' except '"' and '\\'), so an encoder can copy them as they are.
func Plain8(w uint64) bool {
	d := w ^ (lsb * 0x7f)
	return stringStop(w)|(w&msb)|((d-lsb)&^d&msb) == 0
}

// stringEndCareful scans a JSON string whose opening quote is at b[i-1], one stop (quote,
// backslash, control character) at a time. It returns the index just past the closing quote,
// whether the string holds escapes, and ok=false when the string is not valid JSON (control
// character, bad escape, no closing quote), with end where it stops being valid. stringEnd
// gives the same answers faster; this is the reference it falls back on.
func stringEndCareful(b []byte, i int) (end int, esc, ok bool) {
	for {
		for i+8 <= len(b) {
			m := stringStop(binary.LittleEndian.Uint64(b[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			return i, esc, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, esc, true
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return i, esc, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return i, esc, false
				}
				i += 6
			default:
				return i, esc, false
			}
		case c < 0x20:
			return i, esc, false
		default:
			i++
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// IsSpace reports whether c is JSON whitespace.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && IsSpace(b[i]) {
		i++
	}
	return i
}

// numberEnd returns the index past the JSON number starting at b[i], or ok=false.
func numberEnd(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, false
	}
	switch {
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digitsEnd(b, i+1)
	default:
		return i, false
	}
	var ok bool
	if i < len(b) && b[i] == '.' {
		if i, ok = digitsAfter(b, i+1); !ok {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		return digitsAfter(b, i)
	}
	return i, true
}

// digitsEnd returns the index past the digits starting at b[i].
func digitsEnd(b []byte, i int) int {
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
	}
	return i
}

// digitsAfter returns the index past the digits starting at b[i], of which there must be one
// at least.
func digitsAfter(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] < '0' || b[i] > '9' {
		return i, false
	}
	return digitsEnd(b, i+1), true
}

func literalEnd(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// valueEnd validates the JSON value starting at b[i] (no leading space) at nesting depth
// depth, and returns the index past it.
func valueEnd(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; c {
	case '"':
		end, _, ok := stringEnd(b, i+1)
		return end, ok
	case '{':
		return objectEnd(b, i, depth)
	case '[':
		return arrayEnd(b, i, depth)
	case 't':
		return literalEnd(b, i, "true")
	case 'f':
		return literalEnd(b, i, "false")
	case 'n':
		return literalEnd(b, i, "null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return numberEnd(b, i)
		}
		return i, false
	}
}

// objectEnd validates the object starting at b[i] at nesting depth depth, and returns the
// index past it.
func objectEnd(b []byte, i, depth int) (int, bool) {
	if depth >= maxDepth {
		return i, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		var ok bool
		if i, _, ok = stringEnd(b, i+1); !ok {
			return i, false
		}
		i = skipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		if i, ok = valueEnd(b, skipWS(b, i+1), depth+1); !ok {
			return i, false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		if b[i] == '}' {
			return i + 1, true
		}
		if b[i] != ',' {
			return i, false
		}
		i = skipWS(b, i+1)
	}
}

// arrayEnd validates the array starting at b[i] at nesting depth depth, and returns the
// index past it.
func arrayEnd(b []byte, i, depth int) (int, bool) {
	if depth >= maxDepth {
		return i, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = valueEnd(b, i, depth+1); !ok {
			return i, false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		if b[i] == ']' {
			return i + 1, true
		}
		if b[i] != ',' {
			return i, false
		}
		i = skipWS(b, i+1)
	}
}

// Shape is what the byte level knows of a line.
type Shape struct {
	Valid  bool // valid JSON, as json.Valid says
	Object bool // a JSON object
	// Typed: the object's last "type" key has a string value, held (still quoted, escapes
	// and all) in RawType.
	Typed   bool
	RawType []byte
	TypeEsc bool // RawType holds escapes or bytes >= 0x80 and must be unquoted to compare
}

// Scan validates b and finds the top-level "type". The result agrees with json.Valid and with
// a full decode of the object on every input (see FuzzScan).
func Scan(b []byte) Shape {
	valid, object, rawType, typeEsc := ScanType(b)
	return Shape{Valid: valid, Object: object, Typed: rawType != nil, RawType: rawType, TypeEsc: typeEsc}
}

// ScanType is Scan with the Shape's fields as results, for a hot path: rawType is nil unless
// the Shape is Typed.
//
// An object is walked as Fields walks it, with no call per member. A key is only unescaped
// when it holds escapes, as only then can it spell "type" without being the bytes type
// (unescaped, a key is its bytes, invalid UTF-8 turned to U+FFFD).
func ScanType(b []byte) (valid, object bool, rawType []byte, typeEsc bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return valueOnly(b, i), false, nil, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		if skipWS(b, i+1) != len(b) {
			return false, false, nil, false
		}
		return true, true, nil, false
	}
	for {
		var isType, ok bool
		if i == 1 && len(b) >= 8 && binary.LittleEndian.Uint64(b) == typeFirst {
			// The line starts {"type": as fuseraft writes its events.
			isType, i = true, 7
		} else if i, isType, ok = memberKey(b, i); !ok {
			return false, false, nil, false
		}
		if i < len(b) && b[i] != ':' {
			i = skipWS(b, i)
		}
		if i >= len(b) || b[i] != ':' {
			return false, false, nil, false
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return false, false, nil, false
		}
		var raw []byte
		var esc bool
		if i, raw, esc, ok = memberValue(b, i, isType); !ok {
			return false, false, nil, false
		}
		if isType {
			rawType, typeEsc = raw, esc
		}
		if i < len(b) && b[i] != ',' && b[i] != '}' {
			i = skipWS(b, i)
		}
		if i >= len(b) {
			return false, false, nil, false
		}
		if b[i] == '}' {
			if skipWS(b, i+1) != len(b) {
				return false, false, nil, false
			}
			return true, true, rawType, typeEsc
		}
		if b[i] != ',' {
			return false, false, nil, false
		}
		i = skipWS(b, i+1)
	}
}

// memberKey reads the key of an object member starting at b[i] and returns the index past
// it, and whether it is "type". A key is only unescaped when it holds escapes, as only then
// can it spell "type" without being the bytes type.
func memberKey(b []byte, i int) (end int, isType, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false, false
	}
	kStart := i
	end = wordStringEnd(b, i+1)
	esc := false
	if end < 0 {
		if end, esc, ok = stringEnd(b, i+1); !ok {
			return end, false, false
		}
	}
	if esc {
		s, ok := Unquote(b[kStart:end])
		return end, s == "type", ok
	}
	return end, end-kStart == 6 && string(b[kStart+1:end-1]) == "type", true
}

// memberValue validates the value of an object member starting at b[i] (no leading space)
// and returns the index past it; for the value of "type" (isType), also the value when it is
// a string (still quoted) and whether it must be unquoted to compare (escapes, bytes >= 0x80).
func memberValue(b []byte, i int, isType bool) (end int, raw []byte, esc, ok bool) {
	vStart := i
	if b[i] != '"' {
		if c := b[i]; '0' <= c && c <= '9' || c == '-' {
			end, ok = numberEnd(b, i)
		} else {
			end, ok = valueEnd(b, i, 1)
		}
		return end, nil, false, ok
	}
	if end = wordStringEnd(b, i+1); end >= 0 {
		if isType {
			raw, esc = b[vStart:end], !wordASCII(b, vStart+1, end-vStart-2)
		}
		return end, raw, esc, true
	}
	if end, esc, ok = stringEnd(b, vStart+1); !ok {
		return end, nil, false, false
	}
	if isType {
		raw, esc = b[vStart:end], esc || !IsASCII(b[vStart+1:end-1])
	}
	return end, raw, esc, true
}

// typeFirst is the first eight bytes of a line that starts {"type":, as a little-endian word.
var typeFirst = binary.LittleEndian.Uint64([]byte(`{"type":`))

// valueOnly reports whether b is one valid JSON value starting at b[i], with nothing but space
// after it.
func valueOnly(b []byte, i int) bool {
	end, ok := valueEnd(b, i, 0)
	return ok && skipWS(b, end) == len(b)
}

// Type returns the decoded type of a typed Shape.
func (sh *Shape) Type() string {
	if !sh.TypeEsc {
		return string(sh.RawType[1 : len(sh.RawType)-1])
	}
	s, _ := Unquote(sh.RawType)
	return s
}

// TypeIs reports whether the Shape's type equals t without allocating in the common case.
func (sh *Shape) TypeIs(t string) bool {
	if !sh.TypeEsc {
		return string(sh.RawType[1:len(sh.RawType)-1]) == t
	}
	s, _ := Unquote(sh.RawType)
	return s == t
}

func IsASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&msb != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// QuickType finds the top-level "type" of a line that looks like an object without checking
// that the line is valid JSON: strings are skipped with a memchr-speed search for their
// closing quote, and nothing inside them is looked at. When it returns sure, the Shape's
// typed and rawType are what Scan would report if the line is valid; a line that is not
// valid is not JSON, so it is never output either way. Only lines it drops are spared the
// full check. sure is false whenever the structure cannot be followed.
func QuickType(b []byte) (sh Shape, sure bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return sh, false
	}
	sh.Object = true
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return sh, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return sh, false
		}
		kStart := i
		end, ok := QuickStringEnd(b, i+1)
		if !ok {
			return sh, false
		}
		key := b[kStart+1 : end-1]
		isType := string(key) == "type"
		if !isType && bytesHasBackslash(key) {
			s, ok := Unquote(b[kStart:end])
			if !ok {
				return sh, false
			}
			isType = s == "type"
		}
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return sh, false
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return sh, false
		}
		vStart := i
		if b[i] == '"' {
			if i, ok = QuickStringEnd(b, i+1); !ok {
				return sh, false
			}
		} else if i, ok = quickValueEnd(b, i); !ok {
			return sh, false
		}
		if isType {
			sh.Typed = b[vStart] == '"'
			sh.RawType, sh.TypeEsc = nil, false
			if sh.Typed {
				sh.RawType = b[vStart:i]
				inner := b[vStart+1 : i-1]
				sh.TypeEsc = bytesHasBackslash(inner) || !IsASCII(inner)
				if sh.TypeEsc {
					if _, ok := Unquote(sh.RawType); !ok {
						return sh, false
					}
				}
			}
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return sh, false
		}
		if b[i] == '}' {
			return sh, skipWS(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return sh, false
		}
		i = skipWS(b, i+1)
	}
}

func bytesHasBackslash(b []byte) bool { return indexByte(b, '\\') >= 0 }

// QuickStringEnd returns the index past the closing quote of the string whose opening quote
// is at b[i-1]: the first quote preceded by an even number of backslashes.
func QuickStringEnd(b []byte, i int) (int, bool) {
	for {
		j := indexByte(b[i:], '"')
		if j < 0 {
			return len(b), false
		}
		q := i + j
		n := 0
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		i = q + 1
	}
}

// quickValueEnd skips a non-string value: a scalar, or a nested object or array (strings
// inside skipped as above).
func quickValueEnd(b []byte, i int) (int, bool) {
	switch b[i] {
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, ok := QuickStringEnd(b, i+1)
				if !ok {
					return i, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	}
	start := i
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, i > start
		case '"', '{', '[', ':':
			return i, false
		}
		i++
	}
	return i, false
}

func indexByte(b []byte, c byte) int { return bytes.IndexByte(b, c) }
