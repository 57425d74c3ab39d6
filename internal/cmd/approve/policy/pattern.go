package policy

import (
	"fmt"
	"regexp"
	resyntax "regexp/syntax"
	"strings"
)

// Pattern matches a string: a glob (`*` any run of characters, `?` one, `[...]` a class) that
// must match the whole string, or a regular expression written between slashes (`/^feat/`),
// which matches anywhere unless anchored.
type Pattern struct {
	Src     string
	literal bool // Src has no glob metacharacters: compare as a string
	re      *regexp.Regexp
	IsRegex bool
}

// MatchAll reports whether the pattern accepts every string ("*", "/.*/", "//").
func (p *Pattern) MatchAll() bool {
	if p.IsRegex {
		s := p.re.String()
		return s == "" || s == ".*" || s == "^.*$" || s == "(?s).*" || s == "^.*"
	}
	return strings.Trim(p.Src, "*") == ""
}

// Match reports whether s matches.
func (p *Pattern) Match(s string) bool {
	if p.literal {
		return s == p.Src
	}
	return p.re.MatchString(s)
}

func (p *Pattern) String() string { return p.Src }

// names reports whether the pattern spells out the word it matches, so that matching an
// option with it means that option: a literal, or a glob whose first two characters are
// literal (-o*, --output=*). A regular expression never names a word.
func (p *Pattern) names() bool {
	if p.literal {
		return true
	}
	return !p.IsRegex && len(p.Src) >= 2 && !strings.ContainsAny(p.Src[:2], `*?[\`)
}

// CompilePattern compiles a glob or a /regex/.
func CompilePattern(src string) (*Pattern, error) {
	if len(src) >= 2 && src[0] == '/' && src[len(src)-1] == '/' {
		re, err := regexp.Compile(src[1 : len(src)-1])
		if err != nil {
			return nil, fmt.Errorf("bad regular expression %s: %v", src, regexErrText(err))
		}
		return &Pattern{Src: src, re: re, IsRegex: true}, nil
	}
	if !strings.ContainsAny(src, `*?[\`) {
		return &Pattern{Src: src, literal: true}, nil
	}
	if lit, ok := escapedLiteral(src); ok {
		p := &Pattern{Src: lit, literal: true}
		return p, nil
	}
	re, err := globRegexp(src)
	if err != nil {
		return nil, err
	}
	return &Pattern{Src: src, re: re}, nil
}

func regexErrText(err error) string {
	if e, ok := err.(*resyntax.Error); ok {
		return fmt.Sprintf("%s: %q", e.Code, e.Expr)
	}
	return err.Error()
}

// globRegexp turns a glob into an anchored regular expression. `*` crosses `/`: these globs
// match words and names, not paths (file paths use doublestar).
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 >= len(glob) {
				return nil, fmt.Errorf("bad glob %q: trailing backslash", glob)
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(glob[i])))
		case '[':
			j := i + 1
			if j < len(glob) && (glob[j] == '!' || glob[j] == '^') {
				j++
			}
			if j < len(glob) && glob[j] == ']' {
				j++
			}
			for j < len(glob) && glob[j] != ']' {
				j++
			}
			if j >= len(glob) {
				return nil, fmt.Errorf("bad glob %q: unclosed [", glob)
			}
			class := glob[i+1 : j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("bad glob %q: %v", glob, regexErrText(err))
	}
	return re, nil
}

// Patterns is a list of patterns; it matches when any one does. An empty list matches
// everything.
type Patterns []*Pattern

// Match reports whether any pattern matches s (true for an empty list).
func (ps Patterns) Match(s string) bool {
	if len(ps) == 0 {
		return true
	}
	for _, p := range ps {
		if p.Match(s) {
			return true
		}
	}
	return false
}

// MatchAll reports whether the list accepts everything.
func (ps Patterns) MatchAll() bool {
	if len(ps) == 0 {
		return true
	}
	for _, p := range ps {
		if p.MatchAll() {
			return true
		}
	}
	return false
}

// escapedLiteral returns the glob's text when its only metacharacters are escaped (`\[`).
func escapedLiteral(glob string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*', '?', '[':
			return "", false
		case '\\':
			if i+1 >= len(glob) {
				return "", false
			}
			i++
			b.WriteByte(glob[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// argvMatch is one match of an argv pattern against the words of a simple command. It tries
// the splits of the words among the pattern's `**`s in the order a plain search would (each
// `**` taking as few words as it can, the first first), so it finds the same match and the
// same named words, but it remembers the (pattern word, command word) places it has seen fail
// after a `**`: no place is tried twice, and a match takes at most about (pattern words +
// 1) × (command words + 1) steps, whatever the number of `**`s.
type argvMatch struct {
	c     *CmdPattern
	p     *Part
	allow bool
	named bool // collect the words named (matchNamed)
	steps int  // words compared and places tried after a **: bounded as above

	cols   int       // len(p.Words)+1, once the failures are recorded
	small  [4]uint64 // failed places, when few
	failed []uint64  // failed places, when more than small holds
}

func (m *argvMatch) isFailed(pi, wi int) bool {
	if m.cols == 0 {
		return false
	}
	i := pi*m.cols + wi
	if m.failed != nil {
		return m.failed[i/64]&(1<<(i%64)) != 0
	}
	return m.small[i/64]&(1<<(i%64)) != 0
}

func (m *argvMatch) setFailed(pi, wi int) {
	if m.cols == 0 {
		m.cols = len(m.p.Words) + 1
		if n := (len(m.c.Words) + 1) * m.cols; n > 64*len(m.small) {
			m.failed = make([]uint64, (n+63)/64)
		}
	}
	i := pi*m.cols + wi
	if m.failed != nil {
		m.failed[i/64] |= 1 << (i % 64)
	} else {
		m.small[i/64] |= 1 << (i % 64)
	}
}

// from matches the pattern's words from pi on against the command's words from wi on;
// named holds the words named so far.
func (m *argvMatch) from(pi, wi int, named uint64) (bool, uint64) {
	c, p := m.c, m.p
	for pi < len(c.Words) {
		pw := c.Words[pi]
		if pw == nil { // **: as few words as it can take, then one more
			if pi+1 == len(c.Words) && !c.Anchored {
				return true, named // a last ** of an open pattern takes whatever is left
			}
			k := wi
			for ; k <= len(p.Words); k++ {
				m.steps++
				// a place seen failing from here on fails for every later k too
				if m.isFailed(pi, k) {
					break
				}
				if ok, n := m.from(pi+1, k, named); ok {
					return true, n
				}
			}
			// every place from wi to k fails: remember them, the next ** before this one
			// to come this way stops at the first
			if m.later(pi) {
				for j := wi; j < k; j++ {
					m.setFailed(pi, j)
				}
			}
			return false, 0
		}
		m.steps++
		if wi >= len(p.Words) || !wordMatch(pw, p, wi, m.allow) {
			return false, 0
		}
		if m.named && pw.names() && wi < 64 {
			named |= 1 << wi
		}
		pi++
		wi++
	}
	return !c.Anchored || wi == len(p.Words), named
}

// later reports whether a ** comes before the pattern word pi: only then can the places
// after pi be reached again, and are worth remembering.
func (m *argvMatch) later(pi int) bool {
	for _, w := range m.c.Words[:pi] {
		if w == nil {
			return true
		}
	}
	return false
}
