package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// longWords is "prog f0 f1 ... f(n-1)".
func longWords(prog string, n int) string {
	var b strings.Builder
	b.WriteString(prog)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, " f%d.go", i)
	}
	return b.String()
}

// A plain command of any length gets a decision, the same as the parser's.
func TestLongPlainCommands(t *testing.T) {
	p := mustLoad(t, "version: 1\nrules:\n  - {name: ls, decision: allow, shell: [ls, gofmt -l]}\n  - {name: no-rm, decision: deny, shell: [rm]}\n")
	d, err := NewDecider(p, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd  string
		want Verdict
	}{
		{longWords("ls", 63), Allow},
		{longWords("ls", 64), Allow},
		{longWords("ls", 71), Allow},
		{longWords("gofmt -l", 80), Allow},
		{longWords("ls", 500) + " | " + longWords("ls", 200), Allow},
		{longWords("ls", 100) + " && " + longWords("rm", 100), Deny},
		{longWords("rm", 300), Deny},
	} {
		got := d.Decide(shellEvent(c.cmd))
		if got.Verdict != c.want {
			t.Errorf("%.40q... (%d bytes): %s by %s (%s), want %s", c.cmd, len(c.cmd), got.Verdict, got.Decider, got.Reason, c.want)
		}
		fast, slow := analyzeBothWays(c.cmd)
		if fmt.Sprint(fast) != fmt.Sprint(slow) {
			t.Errorf("%.40q...: read directly and parsed differ", c.cmd)
		}
	}
}

func shellEvent(cmd string) []byte {
	ev, _ := json.Marshal(map[string]string{"type": "approval_request", "kind": "shell_command", "command": cmd})
	return ev
}

// A decision past its Timeout is cut short at the next reading of the clock (every
// stepsPerClock steps of work), not when it would have finished, and denied by ByError.
func TestTimeoutCutsShort(t *testing.T) {
	p := mustLoad(t, "version: 1\nrules:\n  - {name: ls, decision: allow, shell: [ls]}\n  - {name: no-rm, decision: deny, shell: [rm]}\n")
	d, err := NewDecider(p, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(0, 0)
	reads := 0
	d.Now = func() time.Time { reads++; clock = clock.Add(time.Hour); return clock }
	d.Timeout = 10 * time.Second
	cmd := strings.Repeat("ls; ", 3999) + "ls"
	got := d.Decide(shellEvent(cmd))
	if got.Verdict != Deny || got.Decider != ByError || !strings.Contains(got.Reason, "longer than the decision timeout (10s)") {
		t.Fatalf("got %s by %s (%s)", got.Verdict, got.Decider, got.Reason)
	}
	if reads > 3 { // the start, the first check, the end
		t.Errorf("the clock was read %d times: the decision was not cut short", reads)
	}
	// with time to spare it is allowed, and the clock is read once per stepsPerClock steps
	d.Now = func() time.Time { reads++; return clock }
	reads = 0
	if got := d.Decide(shellEvent(cmd)); got.Verdict != Allow {
		t.Fatalf("got %s by %s (%s)", got.Verdict, got.Decider, got.Reason)
	}
	if reads > 3+d.work/stepsPerClock || d.work < 4000 {
		t.Errorf("the clock was read %d times for 4000 parts, %d steps", reads, d.work)
	}
	// a question past the bound is skipped
	d.Now = func() time.Time { clock = clock.Add(time.Hour); return clock }
	if q := d.AnswerQuestion([]byte(`{"type":"question","question":"go on?"}`)); q.Action != "skip" || q.Decider != ByError {
		t.Errorf("question: %+v", q)
	}
}

// Lint warns about conditions that fail on ordinary prompts (a field left out or null, a
// command of one word or with two blanks), which then count as a match for deny and ask
// rules and as none for allow rules; guarded ones are quiet.
func TestLintFailingConditions(t *testing.T) {
	const head = "version: 1\nrules:\n"
	for _, c := range []struct{ kind, when, want string }{
		{"shell_command", `.command | split(" ")[1] | test("x")`, `{"command":"x","kind":"shell_command"} (test("x"; null) cannot be applied to: null)`},
		{"shell_command", `.command | split(" ")[1] | tonumber > 60`, `{"command":"x","kind":"shell_command"} (tonumber cannot be applied to: null)`},
		{"shell_command", `(.command | split(" ")[1] // "") | test("x")`, ``},
		{"shell_command", `.command | test("rm")`, ``},
		{"shell_command", `.command | keys | length > 1`, `{"command":"x","kind":"shell_command"} (keys cannot be applied to: string ("x"))`},
		{"tool_action", `.detail | fromjson | .size > 100`, `{"action":"x","kind":"tool_action","plugin":"x"} (fromjson cannot be applied to: null)`},
		{"tool_action", `(.detail // "{}") | fromjson | .size > 100`, `{"action":"x","detail":"","kind":"tool_action","plugin":"x"} (`},
		{"tool_action", `try (.detail | fromjson | .size > 100) catch true`, ``},
		{"route_approval", `.keyword | ascii_downcase == "deploy"`, `{"kind":"route_approval","sourceAgent":"x","targetAgent":"x"} (`},
		{"file_write", `.newContent | test("KEY")`, ``},
		{"file_write", `(.oldContent // "") | length > 10`, ``},
		{"file_write", `.oldContent | length > 10`, ``}, // the length of null is 0
		{"file_write", `.a.b.c == 1`, ``},
		{"file_write", `.a[1] == 1`, ``},
		{"file_write", `.path | .[1:] == "x"`, ``},
		// a rule with no kind applies to every kind: a field of one kind is missing in the others
		{"", `.command | test("rm")`, `{"kind":"file_write","newContent":"x","path":"x"} (test("rm"; null) cannot be applied to: null)`},
		{"", `(.command // "") | test("rm")`, ``},
	} {
		for _, decision := range []string{"deny", "allow"} {
			kind := ""
			if c.kind != "" {
				kind = ", kind: " + c.kind
			}
			src := head + "  - {name: r, decision: " + decision + kind + ", when: '" + strings.ReplaceAll(c.when, "'", "''") + "'}\ntests: [{command: ls, expect: deny}]\n"
			p, err := Load([]byte(src), "x.yaml")
			if err != nil {
				t.Fatalf("%s: %v", c.when, err)
			}
			got := ""
			for _, f := range Lint(p) {
				if strings.Contains(f.Msg, "fails on") {
					got = f.Msg
				}
			}
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("%s %s: lint says %q, want %q", c.kind, c.when, got, c.want)
			}
			effect := map[string]string{"deny": "a match for this deny rule", "allow": "no match for this allow rule"}[decision]
			if c.want != "" && !strings.Contains(got, effect) {
				t.Errorf("%s: lint says %q, want %q", c.when, got, effect)
			}
		}
	}
}

// Without a clock of its own a Decider bounds its decisions with the coarse clock: a decision
// that outlasts its Timeout (here the wait until the clock moves on) is denied.
func TestTimeoutCoarseClock(t *testing.T) {
	p := mustLoad(t, "version: 1\nrules:\n  - {name: all, decision: allow}\n")
	d, err := NewDecider(p, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.Timeout = time.Nanosecond
	d.Probe = func(raw []byte) {
		if !strings.Contains(string(raw), "slow") {
			return
		}
		start := coarseNow()
		for deadline := time.Now().Add(30 * time.Second); coarseNow() == start; {
			if time.Now().After(deadline) {
				t.Fatal("the coarse clock did not move in 30s")
			}
			time.Sleep(time.Millisecond)
		}
	}
	if got := d.Decide(shellEvent("echo slow")); got.Verdict != Deny || got.Decider != ByError {
		t.Errorf("slow: %s by %s (%s)", got.Verdict, got.Decider, got.Reason)
	}
	d.Timeout = DefaultTimeout
	if got := d.Decide(shellEvent("echo slow")); got.Verdict != Allow {
		t.Errorf("slow within 10s: %s by %s (%s)", got.Verdict, got.Decider, got.Reason)
	}
}
