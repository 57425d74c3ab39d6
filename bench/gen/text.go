package main

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// words are drawn to build code-like and prose-like text. A few carry characters that need
// escaping in JSON (quotes, backslashes, tabs) or that .NET escapes (non-ASCII, < > & + ').
var words = []string{
	"func", "return", "err", "nil", "if", "for", "range", "package", "import", "type", "struct",
	"string", "int", "byte", "ctx", "context.Context", "parser", "Parse", "tokens", "json",
	"the", "a", "to", "of", "and", "is", "in", "that", "file", "test", "passes", "fails", "value",
	"config", "agent", "session", "model", "tool", "output", "line", "read", "write", "path",
	"\"quoted\"", "`raw`", "a\\b", "x+y", "<T>", "a && b", "it's", "café", "naïve", "—", "→",
	"日本語", "😀", "\t", "0.5", "42", "true", "false", "{", "}", "(", ")", "[]", ":=", "==", "!=",
}

// pool is a long deterministic text that string fields take slices of, so building large
// outputs costs a copy, not a loop over random words.
type pool struct {
	text string
}

func newPool(r *rand.Rand, size int) *pool {
	var b strings.Builder
	b.Grow(size + 200)
	col := 0
	indent := 0
	for b.Len() < size {
		if col == 0 {
			for i := 0; i < indent; i++ {
				b.WriteByte('\t')
			}
		}
		w := words[r.IntN(len(words))]
		b.WriteString(w)
		col += len(w) + 1
		if col > 40+r.IntN(60) {
			b.WriteByte('\n')
			col = 0
			indent = r.IntN(4)
		} else {
			b.WriteByte(' ')
		}
	}
	return &pool{text: b.String()}
}

// slice returns n bytes of pool text (cut at rune boundaries) starting at a random offset.
func (p *pool) slice(r *rand.Rand, n int) string {
	if n <= 0 {
		return ""
	}
	if n > len(p.text)-8 {
		n = len(p.text) - 8
	}
	start := r.IntN(len(p.text) - n)
	end := start + n
	for start > 0 && !runeStart(p.text[start]) {
		start--
	}
	for end < len(p.text) && !runeStart(p.text[end]) {
		end++
	}
	return p.text[start:end]
}

func runeStart(c byte) bool { return c&0xC0 != 0x80 }

// logUniform returns an integer in [lo, hi] whose logarithm is uniform: as many outputs of
// 10-100 bytes as of 10,000-100,000.
func logUniform(r *rand.Rand, lo, hi int) int {
	l, h := math.Log(float64(lo)), math.Log(float64(hi))
	return int(math.Exp(l + r.Float64()*(h-l)))
}

// appendString appends s as a JSON string, escaping what encoding/json must (quote,
// backslash, control characters) and nothing else: non-ASCII stays raw UTF-8.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hex = "0123456789abcdef"

// obj builds one compact JSON object, keys in the order they are added.
type obj struct{ b []byte }

func newObj(b []byte) *obj { return &obj{b: append(b, '{')} }

func (o *obj) key(k string) *obj {
	if o.b[len(o.b)-1] != '{' {
		o.b = append(o.b, ',')
	}
	o.b = appendString(o.b, k)
	o.b = append(o.b, ':')
	return o
}
func (o *obj) str(k, v string) *obj { o.key(k); o.b = appendString(o.b, v); return o }
func (o *obj) num(k string, v int64) *obj {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
	return o
}
func (o *obj) flt(k string, v float64) *obj {
	o.key(k)
	o.b = strconv.AppendFloat(o.b, v, 'f', 3, 64)
	return o
}
func (o *obj) boolean(k string, v bool) *obj {
	o.key(k)
	o.b = strconv.AppendBool(o.b, v)
	return o
}
func (o *obj) null(k string) *obj          { o.key(k); o.b = append(o.b, "null"...); return o }
func (o *obj) raw(k string, v []byte) *obj { o.key(k); o.b = append(o.b, v...); return o }
func (o *obj) end() []byte                 { return append(o.b, '}') }
