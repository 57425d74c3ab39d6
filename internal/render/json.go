package render

import (
	"bytes"
	"encoding/json"
	"math"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/internal/termsafe"
)

// obj reads an event's fields leniently. A missing or null field reads as its zero value (the
// protocol is additive, and old releases omit fields); a field of the wrong type marks the
// event malformed, and the renderer then shows it in the neutral form instead of guessing.
type obj struct {
	m   map[string]json.RawMessage
	raw []byte
	bad bool
}

func parseObj(raw []byte) (*obj, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, false
	}
	return &obj{m: m, raw: raw}, true
}

func (o *obj) has(k string) bool {
	v, ok := o.m[k]
	return ok && !isNull(v)
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// decode unmarshals field k into dst; a wrong type marks the object bad.
func (o *obj) decode(k string, dst any) bool {
	v, ok := o.m[k]
	if !ok || isNull(v) {
		return false
	}
	if err := json.Unmarshal(v, dst); err != nil {
		o.bad = true
		return false
	}
	return true
}

func (o *obj) str(k string) string {
	var s string
	o.decode(k, &s)
	return s
}

// strp is a nullable string: ok is false when it is missing or null.
func (o *obj) strp(k string) (string, bool) {
	var s string
	ok := o.decode(k, &s)
	return s, ok
}

func (o *obj) num(k string) float64 {
	var f float64
	o.decode(k, &f)
	return f
}

func (o *obj) int(k string) int {
	f := o.num(k)
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		o.bad = true
		return 0
	}
	return int(f)
}

// intp is a nullable int.
func (o *obj) intp(k string) (int, bool) {
	if !o.has(k) {
		return 0, false
	}
	n := o.int(k)
	return n, !o.bad
}

func (o *obj) boolean(k string) bool {
	var b bool
	o.decode(k, &b)
	return b
}

func (o *obj) strs(k string) []string {
	var s []string
	o.decode(k, &s)
	return s
}

// arrayLen is the length of an array field; anything else but null marks the object bad.
func (o *obj) arrayLen(k string) int {
	var a []json.RawMessage
	o.decode(k, &a)
	return len(a)
}

// sub is a nested object; a present non-object marks o bad.
func (o *obj) sub(k string) (*obj, bool) {
	v, ok := o.m[k]
	if !ok || isNull(v) {
		return nil, false
	}
	s, ok := parseObj(v)
	if !ok {
		o.bad = true
		return nil, false
	}
	return s, true
}

// compactJSON squeezes the white space out of JSON (or anything) outside strings, keeping at
// most about limit bytes: enough for a one-line preview of an event of any size, valid or not.
// \uXXXX escapes of printable characters (fuseraft escapes every non-ASCII character and
// < > & ' " + `) are shown as the characters, so the preview reads as text.
func compactJSON(raw []byte, limit int) string {
	var b bytes.Buffer
	inStr := false
	for i := 0; i < len(raw) && b.Len() < limit; i++ {
		c := raw[i]
		switch {
		case inStr && c == '\\':
			if r, n := unicodeEscape(raw[i:]); n > 0 {
				switch {
				case r == '"':
					b.WriteString(`\"`)
				case r >= 0x20 && r != '\\' && !termsafe.Unsafe(r):
					b.WriteRune(r)
				default:
					b.Write(raw[i : i+n])
				}
				i += n - 1
				continue
			}
			b.WriteByte(c)
			if i+1 < len(raw) {
				i++
				b.WriteByte(raw[i])
			}
		case inStr:
			b.WriteByte(c)
			if c == '"' {
				inStr = false
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			if c == '"' {
				inStr = true
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unicodeEscape decodes a \uXXXX escape (or a surrogate pair of two) at the start of b,
// returning the rune and the bytes used, or n == 0.
func unicodeEscape(b []byte) (r rune, n int) {
	hex := func(b []byte) (rune, bool) {
		r := jsonscan.HexEscape(b)
		return r, r >= 0
	}
	r1, ok := hex(b)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r1) {
		r2, ok := hex(b[6:])
		if !ok {
			return 0, 0
		}
		r := utf16.DecodeRune(r1, r2)
		if r == utf8.RuneError {
			return 0, 0
		}
		return r, 12
	}
	return r1, 6
}
