//go:build unix

package approve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/console/consoletest"
)

// fr-approve asks a person on the terminal (/dev/tty, its controlling terminal here) about
// what its policy leaves to them: these tests read that terminal through a VT100 screen,
// against golden screens (go test -update rewrites them) at 60 and 120 columns, with and
// without colour.

// longCommand is longer than three lines of the narrower terminal.
const longCommand = "go test ./... && go vet ./... && git add -A && git commit -m 'lexer: keep quoted words together when a quote is escaped' && git tag -a v1.2.3 -m 'release 1.2.3' && git push origin HEAD:main --force && git push --tags && gh release create v1.2.3 --title 'v1.2.3' --notes 'Parse keeps quoted words together.' && curl -s -X POST https://hooks.example/deploy -d 'tag=v1.2.3'"

// approveOn runs fr-approve on a terminal cols wide with askPolicy, reading events from a
// file; it returns the terminal and where the audit log and the responses go.
func approveOn(t *testing.T, cols int, color bool, events ...string) (tm *consoletest.Term, audit, out string) {
	t.Helper()
	bin, err := exec.LookPath("fr-approve")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pol, in := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "events.jsonl")
	audit, out = filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "responses.jsonl")
	if err := os.WriteFile(pol, []byte(askPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte(strings.Join(events, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := consoletest.ColorFlag(color)
	cmd := exec.Command(bin, "--policy", pol, "--audit", audit, "--input", in, "--output", out, "--color", c)
	cmd.Env = append(os.Environ(), "TERM=xterm", "NO_COLOR=", "GORACE=atexit_sleep_ms=0")
	return consoletest.Start(t, cols, cmd), audit, out
}

// A long command is shown whole, wrapped by the terminal; a typo is asked again, y approves,
// Enter denies, each answer is shown, and the audit log keeps every line typed.
func TestScreenApprove(t *testing.T) {
	consoletest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		tm, audit, out := approveOn(t, cols, color,
			`{"type":"approval_request","kind":"shell_command","command":"`+longCommand+`"}`,
			`{"type":"approval_request","kind":"shell_command","command":"make deploy"}`)
		s := tm.WaitLast("approval: shell: go test", 1, "allow? [y/N]")
		if len(longCommand) <= 3*cols {
			t.Fatalf("the command fits in three lines of %d columns", cols)
		}
		if !strings.Contains(consoletest.Unwrapped(s, cols), "approval: shell: "+longCommand+" ") {
			t.Errorf("the command is not shown whole:\n%s", s)
		}
		tm.Type("yse\r")
		tm.WaitLast("yse", 1, "answer y or n (an empty line is no): allow? [y/N]")
		consoletest.Golden(t, "approve-typo-"+name, tm.Screen(color))
		tm.Type("y\r")
		tm.WaitLast("✓ approved", 1, "allow? [y/N]")
		tm.WaitText("approval: shell: make deploy", 1)
		tm.Type("\r")
		tm.WaitText("✗ denied", 1)
		if code := tm.Exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
		consoletest.Golden(t, "approve-answered-"+name, tm.Screen(color))
		if got, want := consoletest.ReadFile(t, out), `{"type":"approval_response","approved":true}`+"\n"+`{"type":"approval_response","approved":false}`+"\n"; got != want {
			t.Errorf("responses:\n%s\nwant:\n%s", got, want)
		}
		log := consoletest.ReadFile(t, audit)
		for _, want := range []string{`"decision":"allow","decider":"person","typed":["yse","y"]`,
			`"summary":"shell: make deploy","decision":"deny","decider":"person","typed":[""]`} {
			if !strings.Contains(log, want) {
				t.Errorf("the audit log lacks %s:\n%s", want, log)
			}
		}
	})
}
