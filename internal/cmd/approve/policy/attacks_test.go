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

func loadAttacks(t *testing.T, file string) (*attackFile, map[string]*Policy) {
	data, err := os.ReadFile(file)
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
		p, err := LoadFile(filepath.Join("..", "..", "..", "..", "examples", name+".yaml"))
		if err != nil {
			t.Fatalf("examples/%s.yaml: %v", name, err)
		}
		pols[name] = p
	}
	return &af, pols
}

// countAttacks counts the attempts that are not ok- ones.
func countAttacks(af *attackFile) int {
	n := 0
	for _, a := range af.Attempts {
		if !strings.HasPrefix(a.ID, "ok-") {
			n++
		}
	}
	return n
}

// TestAttacks decides every attempt of testdata/attacks.yaml: each is an assertion.
func TestAttacks(t *testing.T) { runAttacks(t, attacksFile, 450) }

// TestOptionAttacks decides every attempt of testdata/attacks-options.yaml: options read as
// each program reads them, and tool actions.
func TestOptionAttacks(t *testing.T) { runAttacks(t, "testdata/attacks-options.yaml", 200) }

// TestPathAttacks decides every attempt of testdata/attacks-paths.yaml: files outside the
// root, or protected or code-running ones inside it (its own policies besides the examples).
func TestPathAttacks(t *testing.T) { runAttacks(t, "testdata/attacks-paths.yaml", 250) }

func runAttacks(t *testing.T, file string, least int) {
	af, pols := loadAttacks(t, file)
	name := filepath.Base(file)
	if n := countAttacks(af); n < least {
		t.Errorf("%s: only %d attempts", file, n)
	}
	root := attackRoot(t)
	seen := map[string]int{}
	for i := range af.Attempts {
		a := &af.Attempts[i]
		if !attemptID.MatchString(a.ID) {
			t.Errorf("%s:%d: id %q is not c<class>-words or ok-words", name, a.line, a.ID)
		}
		if l, dup := seen[a.ID]; dup {
			t.Errorf("%s:%d: id %s already used on line %d", name, a.line, a.ID, l)
		}
		seen[a.ID] = a.line
		t.Run(fmt.Sprintf("line%d_%s", a.line, a.ID), func(t *testing.T) {
			if a.Does == "" {
				t.Errorf("%s:%d: %s says nothing in does:", name, a.line, a.ID)
			}
			p := pols[a.Policy]
			if p == nil {
				t.Fatalf("%s:%d: no policy %q", name, a.line, a.Policy)
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
				t.Fatalf("%s:%d: expect %q: allow, not-allow, deny or ask", name, a.line, a.Expect)
			}
			if ok {
				return
			}
			shown := ev
			if len(shown) > 300 {
				shown = append(append([]byte{}, shown[:300]...), "..."...)
			}
			msg := fmt.Sprintf("%s:%d %s (%s: %s)\n%s\n got %s by %s %s (part %q, %s), want %s",
				name, a.line, a.ID, a.Policy, a.Does, shown, got.Verdict, got.Decider, got.Rule, got.Part, got.Reason, a.Expect)
			t.Error(msg)
		})
	}
}
