package policy

import (
	"math/rand"
	"strings"
	"testing"
)

func partOf(words ...string) *Part {
	return &Part{Words: words, Name: words[0], Base: words[0]}
}

// An argv pattern with many ** is matched in steps linear in the words (a dozen ** over a
// few hundred words used to take longer than anyone waits), with the answer of a search.
func TestArgvMatchLinear(t *testing.T) {
	stars := strings.Repeat(" **", 12)
	as := make([]string, 300)
	for i := range as {
		as[i] = "a"
	}
	for _, c := range []struct {
		pattern string
		words   []string
		want    bool
	}{
		{"ls" + stars + " nomatch", append([]string{"ls"}, as...), false},
		{"ls" + strings.Repeat(" ** a", 12) + " b $", append([]string{"ls"}, as...), false},
		{"ls" + strings.Repeat(" ** a", 12) + " ** b", append(append([]string{"ls"}, as...), "c"), false},
		{"ls" + strings.Repeat(" ** a", 12) + " $", append([]string{"ls"}, as...), true},
		{"ls" + strings.Repeat(" ** a", 12) + " b", append(append([]string{"ls"}, as...), "b"), true},
		{"ls" + strings.Repeat(" ** [ab]", 12) + " c $", append(append([]string{"ls"}, as...), "b", "b"), false},
	} {
		cp, err := CompileCmdPattern(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		p := partOf(c.words...)
		for _, named := range []bool{false, true} {
			m := argvMatch{c: cp, p: p, allow: true, named: named}
			got, _ := m.from(0, 0, 0)
			if got != c.want {
				t.Errorf("%q over %d words: %v, want %v", c.pattern, len(c.words), got, c.want)
			}
			if bound := 3 * (len(cp.Words) + 1) * (len(c.words) + 1); m.steps > bound {
				t.Errorf("%q over %d words: %d steps, more than %d", c.pattern, len(c.words), m.steps, bound)
			}
		}
	}
	// and through a decision: a policy with such a pattern still answers `ls`
	pol := mustLoad(t, "version: 1\nrules:\n  - {name: many, decision: deny, shell: ['ls"+strings.Repeat(" ** x", 12)+" y $']}\n  - {name: ls, decision: allow, shell: [ls]}\n")
	d, err := NewDecider(pol, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"ls" + strings.Repeat(" x", 300), longWords("ls", 300)} {
		if got := d.Decide(shellEvent(cmd)); got.Verdict != Allow {
			t.Errorf("ls of 300 words: %s by %s (%s)", got.Verdict, got.Decider, got.Reason)
		}
	}
}

var argvWords = []string{"a", "b", "-o", "x", "--out=f", "ls"}
var argvPatternWords = []string{"a", "b", "**", "**", "*", "-o", "-o*", "?", "[ab]", "/^-/", "x", "ls"}

// argvMatch finds what the search it replaces found, and the same words named.
func TestArgvMatchSameAsSearch(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 20000; i++ {
		pw := make([]string, 1+r.Intn(6))
		for j := range pw {
			pw[j] = argvPatternWords[r.Intn(len(argvPatternWords))]
		}
		if r.Intn(3) == 0 {
			pw = append(pw, "$")
		}
		ws := make([]string, 1+r.Intn(8))
		for j := range ws {
			ws[j] = argvWords[r.Intn(len(argvWords))]
		}
		checkArgvMatch(t, strings.Join(pw, " "), ws)
	}
}

func checkArgvMatch(t *testing.T, pattern string, ws []string) {
	t.Helper()
	cp, err := CompileCmdPattern(pattern)
	if err != nil {
		return
	}
	p := partOf(ws...)
	for _, allow := range []bool{false, true} {
		if got, want := cp.match(p, allow), cp.oldMatchFrom(p, allow, 0, 0); got != want {
			t.Fatalf("%q over %q (allow %v): %v, the search says %v", pattern, ws, allow, got, want)
		}
	}
	ok, named := cp.matchNamed(p, 0, 0, 0)
	wantOK, wantNamed := cp.oldMatchNamed(p, 0, 0, 0)
	if ok != wantOK || named != wantNamed {
		t.Fatalf("%q over %q named: %v %b, the search says %v %b", pattern, ws, ok, named, wantOK, wantNamed)
	}
}

// FuzzArgvMatch: argvMatch agrees with the search on small patterns and commands.
func FuzzArgvMatch(f *testing.F) {
	f.Add("ls ** a ** b $", "ls a x b")
	f.Add("git ** -o* **", "git -C x -ofile y")
	f.Fuzz(func(t *testing.T, pattern, words string) {
		ws := strings.Fields(words)
		if len(ws) == 0 || len(ws) > 12 || strings.Count(pattern, " ") > 10 {
			return // the search is exponential: keep it small
		}
		checkArgvMatch(t, pattern, ws)
	})
}
