package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fuseraft/fr/pkg/wire"
)

func mustLoad(t testing.TB, src string) *Policy {
	t.Helper()
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLimits(t *testing.T) {
	p := mustLoad(t, `version: 1
rules:
  - {name: s, decision: allow, tool: {plugin: a}, limit: {max: 2, per: session}}
  - {name: w, decision: allow, tool: {plugin: b}, limit: {max: 1, per: 10m}}
  - {name: z, decision: allow, tool: {plugin: c}, limit: {max: 0, per: session}}
`)
	d, _ := NewDecider(p, "/")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d.Now = func() time.Time { return now }
	ev := func(plugin string) []byte {
		return []byte(`{"type":"approval_request","kind":"tool_action","plugin":"` + plugin + `","action":"x","detail":""}`)
	}
	decide := func(plugin string) Verdict {
		dec := d.Decide(ev(plugin))
		if dec.Verdict == Allow {
			d.Record(d.Session, dec.Charge, now)
		}
		return dec.Verdict
	}
	d.Session = "one"
	for i, want := range []Verdict{Allow, Allow, Deny} {
		if got := decide("a"); got != want {
			t.Errorf("session one, prompt %d: %s, want %s", i, got, want)
		}
	}
	d.Session = "two"
	if got := decide("a"); got != Allow {
		t.Errorf("a new session: %s", got)
	}
	if got := decide("b"); got != Allow {
		t.Errorf("window: first %s", got)
	}
	now = now.Add(9 * time.Minute)
	if got := decide("b"); got != Deny {
		t.Errorf("window: second within 10m %s", got)
	}
	now = now.Add(2 * time.Minute)
	if got := decide("b"); got != Allow {
		t.Errorf("window: after 11m %s", got)
	}
	if got := decide("c"); got != Deny {
		t.Errorf("max 0: %s", got)
	}
	dec := d.Decide(ev("a"))
	if dec.Verdict != Allow || len(dec.Charge) != 1 || dec.Charge[0] != "s" {
		t.Errorf("charge: %+v", dec)
	}
}

func TestChangedLines(t *testing.T) {
	for _, c := range []struct {
		old, new string
		limit    int
		want     int
	}{
		{"", "", 10, 0},
		{"a\nb\n", "a\nb\n", 10, 0},
		{"", "a\nb\nc\n", 10, 3},
		{"a\nb\nc\n", "", 10, 3},
		{"a\nb\nc\n", "a\nx\nc\n", 10, 2},
		{"a\nb\nc\nd\n", "b\nc\nd\na\n", 10, 2},
		{"a\nb\nc\n", "a\nb\nc\nd\n", 10, 1},
		{strings.Repeat("x\n", 1000), strings.Repeat("y\n", 1000), 5, 6},
		{"a\nb\nc\nd\ne\n", "e\nd\nc\nb\na\n", 100, 8},
	} {
		if got := changedLines(c.old, c.new, c.limit); got != c.want {
			t.Errorf("changedLines(%q, %q, %d) = %d, want %d", c.old, c.new, c.limit, got, c.want)
		}
	}
}

// A symlink inside the root that points outside it does not make a path inside.
func TestSymlinkEscape(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "src"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "src", "link")); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink(filepath.Join(root, "src"), filepath.Join(outside, "back")); err != nil {
		t.Skip(err)
	}
	p := mustLoad(t, "version: 1\ndefault: ask\nrules:\n  - {name: src, decision: allow, file: [\"src/**\"]}\n")
	d, err := NewDecider(p, root)
	if err != nil {
		t.Fatal(err)
	}
	write := func(path string) Decision {
		return d.Decide([]byte(fmt.Sprintf(`{"type":"approval_request","kind":"file_write","path":%q,"oldContent":"","newContent":"x"}`, path)))
	}
	for path, want := range map[string]Verdict{
		"src/a.go":                                         Allow,
		filepath.Join(root, "src/a.go"):                    Allow,
		"src/link/a.go":                                    Ask,
		"src/link/new/dir/a.go":                            Ask,
		filepath.Join(outside, "back", "a.go"):             Allow, // an absolute path outside that resolves inside
		filepath.Join(root, "src/link/../../x"):            Ask,
		root + "/src/link/../other.go":                     Ask,
		"src/../src/b.go":                                  Allow,
		"../" + filepath.Base(root) + "/src/c.go":          Allow, // out and back in
		"src/link/../" + filepath.Base(root) + "/src/d.go": Allow, // link/.. is the parent of the link target: this lands in src/
		filepath.Join(outside, "a.go"):                     Ask,
	} {
		if got := write(path); got.Verdict != want {
			t.Errorf("%s: %s (%s), want %s", path, got.Verdict, got.Reason, want)
		}
	}
}

func TestErrorsHaveLines(t *testing.T) {
	_, err := Load([]byte("version: 1\nrules:\n  - name: a\n    decision: allow\n    shell: [ls]\n    extra: 1\n  - name: b\n    decision: maybe\n"), "x.yaml")
	es, ok := err.(Errors)
	if !ok || len(es) != 2 {
		t.Fatalf("%v", err)
	}
	if es[0].Line != 6 || es[1].Line != 8 || !strings.HasPrefix(es[0].Error(), "x.yaml:6: unknown key \"extra\"") {
		t.Errorf("%v", es)
	}
}

func TestQuestions(t *testing.T) {
	p := mustLoad(t, `version: 1
question_default: ask
questions:
  - {name: cont, question: "/(?i)continue/", option: "/^y/"}
  - {name: branch, question: "*branch*", text: "fr-ci"}
  - {name: db, question: "*database*", when: '.options | length > 0', skip: true}
`)
	d, _ := NewDecider(p, "/")
	for _, c := range []struct {
		q      string
		action string
		answer string
		rule   string
	}{
		{`{"type":"question","question":"Continue?","options":["no","yes"],"allowOther":false}`, "answer", "yes", "cont"},
		{`{"type":"question","question":"Continue?","options":["stop"],"allowOther":false}`, "ask", "", ""},
		{`{"type":"question","question":"Which branch?","options":[],"allowOther":true}`, "answer", "fr-ci", "branch"},
		{`{"type":"question","question":"Which branch?","options":["main"],"allowOther":false}`, "ask", "", ""},
		{`{"type":"question","question":"Which branch?","options":["fr-ci"],"allowOther":false}`, "answer", "fr-ci", "branch"},
		{`{"type":"question","question":"Which database?","options":["pg"],"allowOther":false}`, "skip", "", "db"},
		{`{"type":"question","question":"Which database?","options":[],"allowOther":true}`, "ask", "", ""},
		{`{"type":"question","options":[]}`, "skip", "", ""},
		{`{"type":"question","question":7}`, "skip", "", ""},
	} {
		got := d.AnswerQuestion([]byte(c.q))
		a := ""
		if got.Answer != nil {
			a = *got.Answer
		}
		if got.Action != c.action || a != c.answer || got.Rule != c.rule {
			t.Errorf("%s: %s %q by %s, want %s %q by %s", c.q, got.Action, a, got.Rule, c.action, c.answer, c.rule)
		}
	}
}

// The parts of commands, as the check output shows them.
func TestAnalyzeParts(t *testing.T) {
	for cmd, want := range map[string]string{
		"a | b && c; d":                      "a|b|c|d",
		"x=$(a) b":                           "b|a",
		"bash -c 'a; b' && c":                "*bash -c a; b|a|b|c",
		"sudo a b":                           "sudo a b|*a b",
		"env -i X=1 a":                       "*env -i X=1 a|a",
		"xargs -0 -n1 a":                     "*xargs -0 -n1 a|a ?",
		"find . -exec a {} ; -exec b {} +":   "a ?|find .|-exec b {} +",
		"find . -exec a {} \\; -exec b {} +": "a ?|b ?|find .",
		"timeout -k 1 5 a":                   "*timeout -k 1 5 a|a",
		"nice -n 5 a":                        "*nice -n 5 a|a",
		"eval 'a b'":                         "*eval a b|a b",
		"a <<EOF\n$(b)\nEOF":                 "a|b",
		"f() { a; }; f":                      "a|f|*function f",
		"f() { f | f & }; f":                 "f|f|f|*function f --calls-itself",
		"source <(echo 'rm -rf /')":          "*source ?|rm -rf /|echo rm -rf /",
		"eval \"$(echo ls)\"":                "*eval ?|ls|echo ls",
		"declare -x PATH=/tmp":               "declare -x PATH=/tmp",
		"[[ -f x ]] && (( i++ )) && a":       "[[||a",
		"[[ -f x ]] && a":                    "[[|a",
		"command -v a":                       "command -v a",
		"exec 3>&1":                          "exec",
	} {
		var got []string
		for _, p := range Analyze(cmd) {
			s := ""
			if p.DenyOnly {
				s = "*"
			}
			for i, w := range p.Words {
				if i > 0 {
					s += " "
				}
				if p.dyn(i) {
					w = "?"
				}
				s += w
			}
			got = append(got, s)
		}
		if g := strings.Join(got, "|"); g != want {
			t.Errorf("%q: %s, want %s", cmd, g, want)
		}
	}
}

func TestUnknownKindWildcard(t *testing.T) {
	p := mustLoad(t, "version: 1\ndefault: ask\nrules:\n  - {name: all, decision: allow}\n  - {name: no-net, decision: deny, when: '.host == \"evil\"'}\n")
	d, _ := NewDecider(p, "/")
	if got := d.Decide([]byte(`{"type":"approval_request","kind":"network","host":"a"}`)); got.Verdict != Ask || got.Decider != ByDefault {
		t.Errorf("unknown kind allowed by a wildcard: %+v", got)
	}
	if got := d.Decide([]byte(`{"type":"approval_request","kind":"network","host":"evil"}`)); got.Verdict != Deny || got.Rule != "no-net" {
		t.Errorf("wildcard deny does not reach unknown kinds: %+v", got)
	}
	if got := d.Decide([]byte(`{"type":"approval_request","kind":"shell_command","command":"rm -rf /"}`)); got.Verdict != Allow {
		t.Errorf("wildcard allow: %+v", got)
	}
	if !wire.KnownKind("shell_command") {
		t.Fatal("wire")
	}
}
