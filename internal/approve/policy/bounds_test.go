package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
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
