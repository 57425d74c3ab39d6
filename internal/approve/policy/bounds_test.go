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
	if reads > 2+4000*2/stepsPerClock+1 {
		t.Errorf("the clock was read %d times for 4000 parts", reads)
	}
	// a question past the bound is skipped
	d.Now = func() time.Time { clock = clock.Add(time.Hour); return clock }
	if q := d.AnswerQuestion([]byte(`{"type":"question","question":"go on?"}`)); q.Action != "skip" || q.Decider != ByError {
		t.Errorf("question: %+v", q)
	}
}
