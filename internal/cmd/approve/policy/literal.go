package policy

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// litSet is a regular expression that is one literal word or an alternation of them
// (sudo|doas, (?i)password): it matches a string holding one of the words, which
// strings.Contains finds faster than the regex engine, which tries each position in turn.
type litSet struct {
	lits []string
	fold bool // (?i): ASCII words, matched as such in ASCII strings only (see match)
}

// compileLits returns the litSet of re (as regexp.Compile reads it), or nil when re is
// anything else.
func compileLits(re string) *litSet {
	t, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return nil
	}
	t = t.Simplify()
	subs := []*syntax.Regexp{t}
	if t.Op == syntax.OpAlternate {
		subs = t.Sub
	}
	ls := &litSet{}
	for i, s := range subs {
		if s.Op != syntax.OpLiteral || len(s.Rune) == 0 {
			return nil
		}
		fold := s.Flags&syntax.FoldCase != 0
		if i == 0 {
			ls.fold = fold
		} else if fold != ls.fold {
			return nil
		}
		for _, r := range s.Rune {
			// the engine matches U+FFFD where a string is not UTF-8; under (?i) a letter
			// beyond ASCII may fold to an ASCII one (K, the Kelvin sign, is k)
			if r == utf8.RuneError || fold && r >= utf8.RuneSelf {
				return nil
			}
		}
		ls.lits = append(ls.lits, string(s.Rune))
	}
	return ls
}

// match reports whether s matches; ok=false when the regex engine has to say (under (?i), a
// string beyond ASCII, where ſ is s and K is k).
func (l *litSet) match(s string) (res, ok bool) {
	if !l.fold {
		for _, x := range l.lits {
			if strings.Contains(s, x) {
				return true, true
			}
		}
		return false, true
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false, false
		}
	}
	for _, x := range l.lits {
		if containsFoldASCII(s, x) {
			return true, true
		}
	}
	return false, true
}

// containsFoldASCII reports whether the ASCII string s holds the ASCII word x, letters
// matching in either case.
func containsFoldASCII(s, x string) bool {
	for i := 0; i+len(x) <= len(s); i++ {
		if asciiEqualFold(s[i:i+len(x)], x) {
			return true
		}
	}
	return false
}
