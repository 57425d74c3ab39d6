package policy

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// detailBar says why an allow rule whose detail patterns match a tool action's detail must
// not allow it ("" when nothing bars it): a detail holding a line break or another control or
// format character never matches an allow's detail pattern, and one holding more than one URL,
// or a URL and more words, never matches a pattern written for a URL (a single-URL allow).
func detailBar(ps Patterns, detail string) string {
	if len(ps) == 0 {
		return ""
	}
	for i := 0; i < len(detail); {
		r, n := utf8.DecodeRuneInString(detail[i:])
		if r == utf8.RuneError && n <= 1 || unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return "the detail holds a line break or a control character"
		}
		i += n
	}
	if !urlPatterns(ps) {
		return ""
	}
	if strings.Count(detail, "://") > 1 {
		return "the detail holds more than one URL, and the rule's detail pattern is for one"
	}
	if strings.IndexFunc(detail, unicode.IsSpace) >= 0 {
		return "the detail holds more than a URL, and the rule's detail pattern is for one"
	}
	return ""
}

// urlPatterns reports whether the patterns are written for URLs (one of them spells ://).
func urlPatterns(ps Patterns) bool {
	for _, p := range ps {
		if strings.Contains(p.Src, "://") || strings.Contains(p.Src, `:\/\/`) {
			return true
		}
	}
	return false
}
