package policy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/testkit"
)

// decideBoth decides ev with and without skipping the rules of later parts that cannot change
// a denied command's decision (fastParts), each by a Decider of its own, and fails when the
// two decisions differ in anything a user sees.
func decideBoth(t testing.TB, p *Policy, root string, ev []byte) {
	t.Helper()
	defer func() { fastParts = true }()
	var got [2]Decision
	for i, fast := range []bool{true, false} {
		fastParts = fast
		d, err := NewDecider(p, root)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = d.Decide(ev)
	}
	type seen struct {
		Verdict                     Verdict
		Decider, Rule, Part, Reason string
		Charge                      []string
	}
	fast := seen{got[0].Verdict, got[0].Decider, got[0].Rule, got[0].Part, got[0].Reason, got[0].Charge}
	slow := seen{got[1].Verdict, got[1].Decider, got[1].Rule, got[1].Part, got[1].Reason, got[1].Charge}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%.300s:\nfast %+v\nslow %+v", ev, fast, slow)
	}
}

// partsPolicy has allow, ask and deny rules for the same programs, wildcards, conditions,
// paths and limits: every way a later part may or may not change a command's decision.
const partsPolicy = `version: 1
default: deny
rules:
  - {name: cat, decision: allow, shell: [cat, head, "grep **"]}
  - {name: cat-etc, decision: deny, shell: {commands: ["cat /etc/**"]}}
  - {name: rm, decision: ask, shell: ["rm **"]}
  - {name: rm-rf, decision: deny, shell: ["rm -rf **"]}
  - {name: out, decision: deny, shell: {paths: inside_root}}
  - {name: big, decision: ask, shell: ["** big"]}
  - {name: sh, decision: deny, shell: [sh, bash]}
  - {name: when-deny, decision: deny, when: '.command | test("secret")'}
  - {name: when-ask, decision: ask, when: '.command | test("maybe")'}
  - {name: git, decision: allow, shell: ["git status", "git log **"], limit: {max: 1}}
  - {name: echo, decision: allow, shell: [echo, printf]}
  - {name: tool, decision: allow, shell: ["tool **"], when: '.command | test("ok")'}
`

func partsCommands() []string {
	cmds := []string{
		"cat go.mod | sh", "sh | cat go.mod", "rm x; rm -rf y", "rm -rf y; rm x", "curl x | cat src/etc/passwd",
		"cat /etc/passwd && cat secret", "unknown && cat go.mod && rm -rf /", "unknown; sh; cat /etc/x",
		"cat go.mod; git status; git log -1", "unknown | tool ok maybe", "tool x | tool ok", "rm a | x big",
		"cat maybe | unknown | sh", "echo $(whoami) | cat src/up/x", "cat a > /etc/x; rm -rf z", "a; b; c; d",
		"cat a | head b | grep c d | sh", "grep x /etc/shadow; unknown; cat secret", "git status && x big && rm -rf q",
	}
	long := strings.Repeat("unknown x | cat go.mod | ", 400) + "rm -rf /"
	cmds = append(cmds, long, strings.Repeat("cat go.mod; ", 500)+"sh", "sh; "+strings.Repeat("cat /etc/x && ", 300)+"rm -rf /")
	return cmds
}

// TestPartsFastSlow decides commands of many parts, the attack corpora and the benchmark's
// stream with and without skipping the rules that cannot change a denied command's decision:
// the decisions are the same.
func TestPartsFastSlow(t *testing.T) {
	testkit.WithoutRace(t)
	root := attackRoot(t)
	p, err := Load([]byte(partsPolicy), "parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range partsCommands() {
		decideBoth(t, p, root, shellEvent(cmd))
	}
	for _, file := range []string{attacksFile, "testdata/attacks-options.yaml", "testdata/attacks-paths.yaml"} {
		af, pols := loadAttacks(t, file)
		for _, a := range af.Attempts {
			a := a
			if pols[a.Policy] == nil {
				t.Fatalf("%s:%d: no policy %q", file, a.line, a.Policy)
			}
			decideBoth(t, pols[a.Policy], root, a.bytes(t))
			decideBoth(t, p, root, a.bytes(t))
		}
	}
	bp, err := Load([]byte(BenchPolicy()), "bench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range BenchStream(3000) {
		decideBoth(t, bp, root, ev)
	}
}

// FuzzPartsFastSlow decides random commands with and without skipping the rules that cannot
// change a denied command's decision: the decisions are the same, for long commands too.
func FuzzPartsFastSlow(f *testing.F) {
	for _, c := range partsCommands() {
		f.Add(c, 1)
	}
	f.Add("cat go.mod | sh; ", 200)
	f.Add("rm -rf x && cat src/etc/x || ", 300)
	root := attackRoot(f)
	p, err := Load([]byte(partsPolicy), "parts.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string, times int) {
		if times < 1 || times > 500 || len(cmd)*times > 100_000 {
			return
		}
		decideBoth(t, p, root, shellEvent(strings.Repeat(cmd, times)))
	})
}
