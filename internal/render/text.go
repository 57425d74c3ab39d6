package render

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Strings from the stream are untrusted: tool output, file contents and model text may carry
// ANSI escape sequences or other control characters meant to drive the terminal. Every string
// is sanitized before it is written: controls become visible Control Pictures (ESC shows as ␛),
// C1 controls and invalid UTF-8 become U+FFFD, and bidirectional overrides (which can make
// text read differently from what it is) are dropped.

// Sanitize makes s safe to print on a terminal as a single line: every control character,
// newlines and tabs included, is shown as a visible symbol.
func Sanitize(s string) string { return sanitize(s, false) }

// sanitize replaces control characters. With keepLayout, newlines and tabs are kept (for
// streamed text and diff bodies, where they are layout, not commands); \r is dropped before a
// newline (CRLF) and shown elsewhere.
func sanitize(s string, keepLayout bool) string {
	if isClean(s, keepLayout) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune(utf8.RuneError)
		case keepLayout && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case keepLayout && r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// CRLF line end: the \n follows.
		case !keepLayout && r == '\t':
			b.WriteByte(' ')
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('␡')
		case r >= 0x80 && r < 0xa0:
			b.WriteRune(utf8.RuneError)
		case isBidiControl(r):
			// dropped
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func isClean(s string, keepLayout bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return cleanSlow(s[i:], keepLayout)
		}
		if c < 0x20 || c == 0x7f {
			if keepLayout && (c == '\n' || c == '\t') {
				continue
			}
			return false
		}
	}
	return true
}

func cleanSlow(s string, keepLayout bool) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return false
			}
		}
		if r < 0x20 || r == 0x7f {
			if keepLayout && (r == '\n' || r == '\t') {
				continue
			}
			return false
		}
		if (r >= 0x80 && r < 0xa0) || isBidiControl(r) {
			return false
		}
	}
	return true
}

func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// runeWidth is the number of terminal columns r takes: 0 for combining marks and zero-width
// characters, 2 for East Asian wide and fullwidth characters and most emoji, else 1.
func runeWidth(r rune) int {
	switch {
	case r < 0x300:
		return 1
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || unicode.Is(unicode.Cf, r):
		return 0
	case r == 0x200b:
		return 0
	case isWide(r):
		return 2
	}
	return 1
}

func isWide(r rune) bool {
	return (r >= 0x1100 && r <= 0x115f) ||
		(r >= 0x2e80 && r <= 0x303e) ||
		(r >= 0x3041 && r <= 0x33ff) ||
		(r >= 0x3400 && r <= 0x4dbf) ||
		(r >= 0x4e00 && r <= 0x9fff) ||
		(r >= 0xa000 && r <= 0xa4cf) ||
		(r >= 0xac00 && r <= 0xd7a3) ||
		(r >= 0xf900 && r <= 0xfaff) ||
		(r >= 0xfe30 && r <= 0xfe4f) ||
		(r >= 0xff00 && r <= 0xff60) ||
		(r >= 0xffe0 && r <= 0xffe6) ||
		(r >= 0x1f300 && r <= 0x1f64f) ||
		(r >= 0x1f900 && r <= 0x1f9ff) ||
		(r >= 0x20000 && r <= 0x3fffd)
}

// StringWidth is the number of terminal columns s takes (s holds no escape sequences).
func StringWidth(s string) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

// cut shortens s to at most width columns, ending it with "…" when anything was cut.
func cut(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if len(s) <= width { // fast path: ASCII-sized
		ascii := true
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				ascii = false
				break
			}
		}
		if ascii {
			return s
		}
	}
	w := 0
	for i, r := range s {
		rw := runeWidth(r)
		if w+rw > width-1 {
			// Does the rest fit exactly?
			if w+StringWidth(s[i:]) <= width {
				return s
			}
			return s[:i] + "…"
		}
		w += rw
	}
	return s
}

// cutMarked is cut for a string already known to be shortened: it always ends with "…".
func cutMarked(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := 0
	for i, r := range s {
		rw := runeWidth(r)
		if w+rw > width-1 {
			return s[:i] + "…"
		}
		w += rw
	}
	return s + "…"
}

// oneLine squeezes s onto one line: runs of white space (newlines included) become one space,
// then the result is sanitized.
func oneLine(s string) string {
	if len(s) > previewBytes {
		s = s[:previewBytes]
	}
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return Sanitize(s)
}

// stripSGR removes colour and style sequences (ESC [ digits ; m) from s; any other escape is
// left for sanitize to show.
func stripSGR(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + 2
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == ':') {
			j++
		}
		if j < len(s) && s[j] == 'm' {
			b.WriteString(s[:i])
			s = s[j+1:]
			continue
		}
		b.WriteString(s[:i+2])
		s = s[i+2:]
	}
}
