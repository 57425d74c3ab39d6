package policy

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// byteRand is a source of choices read from fuzz data, then from a generator seeded by it.
type byteRand struct {
	data []byte
	r    *rand.Rand
}

func newByteRand(data []byte) *byteRand {
	var seed int64
	for _, b := range data {
		seed = seed*131 + int64(b)
	}
	return &byteRand{data: data, r: rand.New(rand.NewSource(seed))}
}

func (b *byteRand) intn(n int) int {
	if len(b.data) > 0 {
		x := int(b.data[0])
		b.data = b.data[1:]
		return x % n
	}
	return b.r.Intn(n)
}

// plainWords are the words of plainVocabulary a plain line may hold, plainFirst those that
// may begin one of its commands.
var plainWords, plainFirst = func() (words, first []string) {
	for _, w := range plainVocabulary {
		if plainLine("x " + w) {
			words = append(words, w)
		}
		if plainLine(w) {
			first = append(first, w)
		}
	}
	return words, first
}()

var plainOperators = []string{" | ", "|", " && ", " || ", "; ", ";"}

// longPlainCommand makes a command of n words: when plain is set, mostly a plain line (words
// of plainWords joined by blanks and now and then an operator), else of every word and
// separator of plainVocabulary and plainSeparators.
func longPlainCommand(b *byteRand, n int, plain bool) string {
	var s strings.Builder
	words, first, seps := plainWords, plainFirst, plainOperators
	if !plain {
		words, first, seps = plainVocabulary, plainVocabulary, plainSeparators
	}
	start, rate := true, []int{12, 100, 1 << 30}[b.intn(3)] // operators: often, seldom, never
	for k := 0; k < n; k++ {
		if start {
			s.WriteString(first[b.intn(len(first))])
		} else {
			s.WriteString(words[b.intn(len(words))])
		}
		start = false
		if k < n-1 {
			if b.intn(rate) == 0 {
				s.WriteString(seps[b.intn(len(seps))])
				start = true
			} else {
				s.WriteByte(' ')
			}
		}
	}
	return s.String()
}

// plainDecisionPolicy allows and denies some of plainVocabulary's commands.
const plainDecisionPolicy = `version: 1
default: ask
rules:
  - {name: read, decision: allow, shell: [ls, cat, echo, printf, git status, go, "make **"]}
  - {name: paths, decision: allow, shell: {commands: [cat, ls], paths: inside_root}}
  - {name: no-rm, decision: deny, shell: ["rm ** -rf **", /bin/rm]}
  - {name: ask-find, decision: ask, shell: ["find ** -exec **"]}
`

// decideBothWays decides cmd with and without the plain-line path.
func decideBothWays(d *Decider, cmd string) (fast, slow Decision) {
	fast = d.Decide(shellEvent(cmd))
	usePlain = false
	defer func() { usePlain = true }()
	return fast, d.Decide(shellEvent(cmd))
}

func sameDecision(a, b Decision) bool {
	a.Request, b.Request = nil, nil
	return reflect.DeepEqual(a, b)
}

// Commands of 0 to 500 words are read the same directly and by the parser, and decided the
// same.
func TestPlainSourceLongCommands(t *testing.T) {
	d, err := NewDecider(mustLoad(t, plainDecisionPolicy), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(3))
	n := 300
	if testing.Short() {
		n = 60
	}
	plain, long := 0, 0
	for i := 0; i < n; i++ {
		b := &byteRand{r: r}
		cmd := longPlainCommand(b, r.Intn(501), i%4 != 0)
		if plainLine(cmd) {
			plain++
			if len(strings.Fields(cmd)) > 64 {
				long++
			}
		}
		checkPlainBothWays(t, d, cmd)
	}
	if plain < n/4 || long < n/8 {
		t.Fatalf("only %d of %d lines were plain, %d of them of more than 64 words: the test does not exercise the direct way", plain, n, long)
	}
}

func checkPlainBothWays(t *testing.T, d *Decider, cmd string) {
	t.Helper()
	fast, slow := analyzeBothWays(cmd)
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q: read directly\n%+v\nparsed\n%+v", cmd, fast, slow)
	}
	df, ds := decideBothWays(d, cmd)
	if !sameDecision(df, ds) || df.Decider == ByError {
		t.Fatalf("%q: decided directly %+v, parsed %+v", cmd, df, ds)
	}
}

// FuzzPlainSourceLong: commands of 0 to 500 words, read directly and parsed, decide the same.
func FuzzPlainSourceLong(f *testing.F) {
	f.Add([]byte{0xff, 0x01, 3, 4, 5})
	f.Add([]byte{70, 0, 1, 1, 1})
	f.Add([]byte{200, 1})
	d, err := NewDecider(mustLoad(f, plainDecisionPolicy), f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		n := int(binary.LittleEndian.Uint16(data)) % 501
		checkPlainBothWays(t, d, longPlainCommand(newByteRand(data[2:]), n, n%4 != 0))
	})
}

// Pieces of the policies FuzzPolicyBounded makes.
var (
	boundPatternWords = []string{"**", "**", "**", "*", "?", "x", "-o", "-o*", "[a-z]*", "/^x+$/", "/(x|xx)*y/",
		"/(?i)x{1,900}/", "/" + strings.Repeat("(x|y)?", 200) + "z/", "'a b'", `\*`, "**/*", "/.*/"}
	boundWhens = []string{"", "", `.command | test("x")`, `.command | split(" ")[1] | test("x")`, `def f: f; f`,
		`error("no")`, `.command | length > 100`, `(.command | split(" ") | length) > 3`, `.nope.deeper[3]`,
		`[limit(100000; repeat(1))] | length > 5`, `.command | tonumber`}
	boundPaths    = []string{"**", strings.Repeat("**/", 12) + "x", strings.Repeat("*/", 20) + "*", "{a,b,c}/**/[a-z]*.go", "/etc/**"}
	boundCmdWords = []string{"x", "xx", "y", "-o", "-ofile", "--out=x", "a b", "z", "ls", "git", "rm", "-rf", "/etc/x", "../x"}
)

// FuzzPolicyBounded: whatever the policy (patterns with many **, large regexes, conditions
// that fail or never end, path globs of many **), every prompt gets a decision that did not
// fail, within a number of steps bounded by the sizes of the patterns and the command.
func FuzzPolicyBounded(f *testing.F) {
	f.Add([]byte{3, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 1, 200})
	f.Add([]byte{1, 0, 20, 9, 9, 9, 9, 1, 2, 3, 4, 5, 6})
	f.Add([]byte{5, 2, 7, 11, 12, 13, 14, 15, 16})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := newByteRand(data)
		var src strings.Builder
		src.WriteString("version: 1\ndefault: ask\nrules:\n")
		nRules := 1 + b.intn(6)
		patternWords := 0
		for i := 0; i < nRules; i++ {
			decision := []string{"allow", "deny", "ask"}[b.intn(3)]
			fmt.Fprintf(&src, "  - name: r%d\n    decision: %s\n", i, decision)
			if b.intn(4) == 0 {
				fmt.Fprintf(&src, "    file: {paths: [%q]}\n", boundPaths[b.intn(len(boundPaths))])
			} else {
				words := []string{[]string{"x", "ls", "*", "git"}[b.intn(4)]}
				for k := b.intn(30); k > 0; k-- {
					words = append(words, boundPatternWords[b.intn(len(boundPatternWords))])
				}
				if b.intn(3) == 0 {
					words = append(words, "$")
				}
				patternWords += len(words) + 1
				fmt.Fprintf(&src, "    shell: [%q]\n", strings.Join(words, " "))
			}
			if w := boundWhens[b.intn(len(boundWhens))]; w != "" {
				fmt.Fprintf(&src, "    when: %q\n", w)
			}
		}
		p, err := Load([]byte(src.String()), "fuzz.yaml")
		if err != nil {
			return // a piece the loader refuses (a regex too large): fine
		}
		d, err := NewDecider(p, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		d.Timeout = DefaultTimeout
		n := b.intn(501)
		words := []string{[]string{"x", "ls", "git"}[b.intn(3)]}
		for k := 0; k < n; k++ {
			words = append(words, boundCmdWords[b.intn(len(boundCmdWords))])
		}
		cmd := strings.Join(words, " ")
		for _, ev := range [][]byte{shellEvent(cmd), []byte(`{"type":"approval_request","kind":"file_write","path":"` +
			strings.Repeat("a/", n%200) + `x","newContent":"x"}`)} {
			dec := d.Decide(ev)
			if dec.Decider == ByError {
				t.Fatalf("policy\n%s\n%.200q: %s", src.String(), ev, dec.Reason)
			}
			// every pattern tried at most twice per part (allow and its named words) over its
			// words, and the rules each once
			if bound := 4*(patternWords+nRules)*(len(words)+1) + 64; d.work > bound {
				t.Fatalf("policy\n%s\n%.200q: %d steps, more than %d", src.String(), ev, d.work, bound)
			}
		}
	})
}
