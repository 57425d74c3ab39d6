package filter

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/jsonscan"
)

// Colours, as jq 1.7 sets them: JQ_COLORS is a colon-separated list of SGR codes in this order.
const (
	colNull = iota
	colFalse
	colTrue
	colNumber
	colString
	colArray
	colObject
	colKey
	numColors
)

// defaultColors are jq 1.7's.
var defaultColors = [numColors]string{"0;90", "0;39", "0;39", "0;39", "0;32", "1;39", "1;39", "34;1"}

const colReset = "\x1b[0m"

// parseColors reads JQ_COLORS as jq does: the fields given replace the defaults in order; a
// field is digits and semicolons. ok is false for a value jq would refuse (the defaults are
// then used).
func parseColors(s string) (cols [numColors]string, ok bool) {
	cols = defaultColors
	if s == "" {
		return cols, true
	}
	fields := strings.Split(s, ":")
	if len(fields) > numColors {
		return defaultColors, false
	}
	for i, f := range fields {
		if len(f) > 12 || strings.Trim(f, "0123456789;") != "" {
			return defaultColors, false
		}
		cols[i] = f
	}
	return cols, true
}

// formatter rewrites valid JSON bytes as jq prints them with -C and -a: in the same key
// order, indented or compact, coloured as jq colours each token, non-ASCII escaped.
type formatter struct {
	indent int // <0 compact
	tab    bool
	ascii  bool
	colors []string // nil: no colour; else the escape sequence of each colour
}

func newFormatter(indent int, tab, ascii, color bool, cols [numColors]string) *formatter {
	f := &formatter{indent: indent, tab: tab, ascii: ascii}
	if color {
		f.colors = make([]string, numColors)
		for i, c := range cols {
			f.colors[i] = "\x1b[" + c + "m"
		}
	}
	return f
}

func (f *formatter) format(dst, b []byte) []byte {
	dst, _ = f.value(dst, b, 0, 0)
	return dst
}

func (f *formatter) newline(dst []byte, depth int) []byte {
	if f.indent < 0 {
		return dst
	}
	dst = append(dst, '\n')
	if f.tab {
		return append(dst, strings.Repeat("\t", depth)...)
	}
	return append(dst, strings.Repeat(" ", depth*f.indent)...)
}

func (f *formatter) color(i int) string {
	if f.colors == nil {
		return ""
	}
	return f.colors[i]
}

// value writes the value at b[i] (after any whitespace) as jq's jv_dump_term does, and returns
// the index past it.
func (f *formatter) value(dst, b []byte, i, depth int) ([]byte, int) {
	i = jsonscan.SkipSpace(b, i)
	if i >= len(b) {
		return dst, i
	}
	var col string
	switch c := b[i]; c {
	case 'n':
		col = f.color(colNull)
	case 'f':
		col = f.color(colFalse)
	case 't':
		col = f.color(colTrue)
	case '"':
		col = f.color(colString)
	case '[':
		col = f.color(colArray)
	case '{':
		col = f.color(colObject)
	default:
		col = f.color(colNumber)
	}
	dst = append(dst, col...)
	switch b[i] {
	case '"':
		end := jsonscan.SkipString(b, i)
		dst = f.str(dst, b[i:end])
		i = end
	case '[', '{':
		open, close := b[i], byte(']')
		if open == '{' {
			close = '}'
		}
		i = jsonscan.SkipSpace(b, i+1)
		if i < len(b) && b[i] == close {
			dst = append(dst, open, close)
			i++
			break
		}
		dst = append(dst, open)
		for n := 0; i < len(b); n++ {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = f.newline(dst, depth+1)
			if open == '{' {
				if col != "" {
					dst = append(dst, colReset...)
					dst = append(dst, f.colors[colKey]...)
				}
				end := jsonscan.SkipString(b, i)
				dst = f.str(dst, b[i:end])
				if col != "" {
					dst = append(dst, colReset...)
					dst = append(dst, col...)
				}
				dst = append(dst, ':')
				if f.indent >= 0 {
					dst = append(dst, ' ')
				}
				if col != "" {
					dst = append(dst, colReset...)
				}
				i = jsonscan.SkipSpace(b, end)
				i++ // ':'
			}
			dst, i = f.value(dst, b, i, depth+1)
			dst = append(dst, col...)
			i = jsonscan.SkipSpace(b, i)
			if i >= len(b) || b[i] == close {
				i++
				break
			}
			i++ // ','
		}
		dst = f.newline(dst, depth)
		dst = append(dst, col...)
		dst = append(dst, close)
	default:
		end := jsonscan.SkipValue(b, i)
		dst = append(dst, b[i:end]...)
		i = end
	}
	if col != "" {
		dst = append(dst, colReset...)
	}
	return dst, i
}

// str writes a quoted JSON string as it is, or with -a its non-ASCII characters escaped.
func (f *formatter) str(dst, q []byte) []byte {
	if !f.ascii || jsonscan.IsASCII(q) {
		return append(dst, q...)
	}
	return appendASCII(dst, q)
}

// appendASCII appends the quoted JSON string q with every character past ASCII written as
// \uXXXX (a surrogate pair past U+FFFF), as jq -a writes it.
func appendASCII(dst, q []byte) []byte {
	for i := 0; i < len(q); {
		c := q[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(q[i:])
		i += size
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			dst = appendU4(appendU4(dst, r1), r2)
		} else {
			dst = appendU4(dst, r)
		}
	}
	return dst
}

func appendU4(dst []byte, r rune) []byte {
	s := strconv.FormatInt(int64(r), 16)
	dst = append(dst, `\u`...)
	dst = append(dst, "0000"[len(s):]...)
	return append(dst, s...)
}
