package approve

import (
	"fmt"
	"strings"
	"testing"
)

func manyWords(prog string, n int) string {
	var b strings.Builder
	b.WriteString(prog)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, " f%d", i)
	}
	return b.String()
}

// A plain command of any length is answered, and so is the prompt after it.
func TestLongCommandsAnswered(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\nrules:\n  - {name: ls, decision: allow, shell: [ls, gofmt -l]}\n")
	const sh = `{"type":"approval_request","kind":"shell_command","command":`
	var in strings.Builder
	for _, cmd := range []string{manyWords("ls", 71), manyWords("gofmt -l", 80), "ls", manyWords("rm", 100), "ls"} {
		in.WriteString(sh + `"` + cmd + `"}` + "\n")
	}
	code, out, errs := run(t, in.String(), "--policy", pol, "--root", dir, "--audit", dir+"/audit.log")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	const yes, no = `{"type":"approval_response","approved":true}`, `{"type":"approval_response","approved":false}`
	want := strings.Join([]string{yes, yes, yes, no, yes}, "\n") + "\n"
	if out != want {
		t.Errorf("answers\n%s\nwant\n%s", out, want)
	}
}
