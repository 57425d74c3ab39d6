package render

import (
	"strings"
	"unicode"

	"github.com/fuseraft/fr/internal/termsafe"
)

// Strings from the stream are untrusted: tool output, file contents and model text may carry
// ANSI escape sequences or other control characters meant to drive the terminal. Every string
// is shown through internal/termsafe before it is written (ESC shows as ␛).

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
	return termsafe.Line(s)
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
