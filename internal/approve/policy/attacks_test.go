package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// testdata/attacks.yaml is a corpus of attempts to get something past a policy that it did not
// mean to allow, and of ordinary commands it means to allow. Each attempt is decided as text;
// nothing in it is ever run.

const attacksFile = "testdata/attacks.yaml"

type attackFile struct {
	Policies map[string]string `yaml:"policies"`
	Attempts []attempt         `yaml:"attempts"`
}

// attempt is a decision case with an id, what it would do if run, and an expectation of
// allow, not-allow (deny or ask), deny or ask.
type attempt struct {
	ID           string `yaml:"id"`
	Class        string `yaml:"class"`
	Does         string `yaml:"does"`
	decisionCase `yaml:",inline"`
	// Raw is the whole event as the body of a Go string literal ("\xff" is one byte), for
	// bytes YAML cannot carry.
	Raw *string `yaml:"raw"`
	// Repeat replaces each mark in Raw or Event by text repeated times times.
	Repeat []struct {
		Mark  string `yaml:"mark"`
		Text  string `yaml:"text"`
		Times int    `yaml:"times"`
	} `yaml:"repeat"`
}

func (a *attempt) bytes(t *testing.T) []byte {
	t.Helper()
	var b []byte
	if a.Raw != nil {
		s, err := strconv.Unquote(`"` + *a.Raw + `"`)
		if err != nil {
			t.Fatalf("line %d: raw: %v", a.line, err)
		}
		b = []byte(s)
	} else {
		b = a.event(t)
	}
	for _, r := range a.Repeat {
		b = []byte(strings.ReplaceAll(string(b), r.Mark, strings.Repeat(r.Text, r.Times)))
	}
	return b
}

var attemptID = regexp.MustCompile(`^c[0-9]+-[a-z0-9][a-z0-9.-]*$|^ok-[a-z0-9][a-z0-9.-]*$`)

// attackRoot is the directory attempts are decided against: a small project whose src holds
// symbolic links out of it.
func attackRoot(t testing.TB) string {
	root := t.TempDir()
	for _, d := range []string{"src", "internal/x", "testdata"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"src/etc":        "/etc",
		"src/up":         "../..",
		"src/root":       "/",
		"src/shadow":     "/etc/shadow",
		"docs":           "/root",
		"internal/x/env": "/proc/self/environ",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// pathAttacksFile is the corpus of attempts to name files outside the root, or protected or
// code-running ones inside it, in the same format (its own policies besides the examples).
const pathAttacksFile = "testdata/attacks-paths.yaml"

func loadAttacks(t *testing.T) (*attackFile, map[string]*Policy) {
	return loadAttackFile(t, attacksFile)
}

func loadAttackFile(t *testing.T, name string) (*attackFile, map[string]*Policy) {
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var af attackFile
	if err := doc.Decode(&af); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(doc.Content[0].Content); i += 2 {
		if doc.Content[0].Content[i].Value == "attempts" {
			for j, n := range doc.Content[0].Content[i+1].Content {
				af.Attempts[j].line = n.Line
			}
		}
	}
	pols := map[string]*Policy{}
	for name, src := range af.Policies {
		p, err := Load([]byte(src), name+".yaml")
		if err != nil {
			t.Fatalf("policy %s: %v", name, err)
		}
		pols[name] = p
	}
	for _, name := range []string{"ci-go", "cautious"} {
		p, err := LoadFile(filepath.Join("..", "..", "..", "examples", name+".yaml"))
		if err != nil {
			t.Fatalf("examples/%s.yaml: %v", name, err)
		}
		pols[name] = p
	}
	return &af, pols
}

// TestAttacks decides every attempt of testdata/attacks.yaml: each is an assertion.
func TestAttacks(t *testing.T) {
	af, pols := loadAttacks(t)
	if len(af.Attempts) < 450 {
		t.Errorf("only %d attempts", len(af.Attempts))
	}
	runAttacks(t, attacksFile, af, pols)
}

// TestPathAttacks decides every attempt of testdata/attacks-paths.yaml.
func TestPathAttacks(t *testing.T) {
	af, pols := loadAttackFile(t, pathAttacksFile)
	if n := len(af.Attempts); n < 250 {
		t.Errorf("only %d attempts", n)
	}
	runAttacks(t, pathAttacksFile, af, pols)
}

func runAttacks(t *testing.T, file string, af *attackFile, pols map[string]*Policy) {
	root := attackRoot(t)
	seen := map[string]int{}
	file = filepath.Base(file)
	for i := range af.Attempts {
		a := &af.Attempts[i]
		if !attemptID.MatchString(a.ID) {
			t.Errorf("%s:%d: id %q is not c<class>-words or ok-words", file, a.line, a.ID)
		}
		if l, dup := seen[a.ID]; dup {
			t.Errorf("%s:%d: id %s already used on line %d", file, a.line, a.ID, l)
		}
		seen[a.ID] = a.line
		t.Run(fmt.Sprintf("line%d_%s", a.line, a.ID), func(t *testing.T) {
			if a.Does == "" {
				t.Errorf("%s:%d: %s says nothing in does:", file, a.line, a.ID)
			}
			p := pols[a.Policy]
			if p == nil {
				t.Fatalf("%s:%d: no policy %q", file, a.line, a.Policy)
			}
			d, err := NewDecider(p, root)
			if err != nil {
				t.Fatal(err)
			}
			d.Warn = func(string, ...any) {}
			ev := a.bytes(t)
			got := d.Decide(ev)
			var ok bool
			switch a.Expect {
			case "not-allow":
				ok = got.Verdict != Allow
			case "allow", "deny", "ask":
				ok = got.Verdict.String() == a.Expect
			default:
				t.Fatalf("%s:%d: expect %q: allow, not-allow, deny or ask", file, a.line, a.Expect)
			}
			if ok {
				return
			}
			shown := ev
			if len(shown) > 300 {
				shown = append(append([]byte{}, shown[:300]...), "..."...)
			}
			msg := fmt.Sprintf("%s:%d %s (%s: %s)\n%s\n got %s by %s %s (part %q, %s), want %s",
				file, a.line, a.ID, a.Policy, a.Does, shown, got.Verdict, got.Decider, got.Rule, got.Part, got.Reason, a.Expect)
			t.Error(msg)
		})
	}
}
