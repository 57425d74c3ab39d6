//go:build unix

package approve

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/testkit/screentest"
)

// fr-approve asks a person on the terminal (/dev/tty, its controlling terminal here) about
// what its policy leaves to them: these tests read that terminal through a VT100 screen,
// against golden screens (go test -update rewrites them) at 60 and 120 columns, with and
// without colour.

// longCommand is longer than three lines of the narrower terminal.
const longCommand = "go test ./... && go vet ./... && git add -A && git commit -m 'lexer: keep quoted words together when a quote is escaped' && git tag -a v1.2.3 -m 'release 1.2.3' && git push origin HEAD:main --force && git push --tags && gh release create v1.2.3 --title 'v1.2.3' --notes 'Parse keeps quoted words together.' && curl -s -X POST https://hooks.example/deploy -d 'tag=v1.2.3'"

// approveOn runs fr-approve on a terminal cols wide with askPolicy, reading events from a
// file; it returns the terminal and where the audit log and the responses go.
func approveOn(t *testing.T, cols int, color bool, events ...string) (tm *screentest.Term, audit, out string) {
	t.Helper()
	return approveOnSize(t, cols, screentest.Rows, color, askPolicy, nil, events...)
}

// approveOnSize is approveOn on a terminal cols wide and rows high, with policy, and env added
// to the environment.
func approveOnSize(t *testing.T, cols, rows int, color bool, policy string, env []string, events ...string) (tm *screentest.Term, audit, out string) {
	t.Helper()
	bin, err := exec.LookPath("fr-approve")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pol, in := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "events.jsonl")
	audit, out = filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "responses.jsonl")
	if err := os.WriteFile(pol, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte(strings.Join(events, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := screentest.ColorFlag(color)
	cmd := exec.Command(bin, "--policy", pol, "--audit", audit, "--input", in, "--output", out, "--color", c)
	cmd.Env = append(os.Environ(), "TERM=xterm", "NO_COLOR=", "GORACE=atexit_sleep_ms=0", "PAGER=")
	cmd.Env = append(cmd.Env, env...)
	return screentest.StartSize(t, cols, rows, cmd), audit, out
}

// A long command is shown whole, wrapped by the terminal; a typo is asked again, y approves,
// Enter denies, each answer is shown, and the audit log keeps every line typed.
func TestScreenApprove(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		tm, audit, out := approveOn(t, cols, color,
			`{"type":"approval_request","kind":"shell_command","command":"`+longCommand+`"}`,
			`{"type":"approval_request","kind":"shell_command","command":"make deploy"}`)
		s := tm.WaitLast("approval: shell: go test", 1, "allow? [y/N]")
		if len(longCommand) <= 3*cols {
			t.Fatalf("the command fits in three lines of %d columns", cols)
		}
		if !strings.Contains(screentest.Unwrapped(s, cols), "approval: shell: "+longCommand+" ") {
			t.Errorf("the command is not shown whole:\n%s", s)
		}
		tm.Type("yse\r")
		tm.WaitLast("yse", 1, "answer y or n (an empty line is no): allow? [y/N]")
		screentest.Golden(t, "approve-typo-"+name, tm.Screen(color))
		tm.Type("y\r")
		tm.WaitLast("✓ approved", 1, "allow? [y/N]")
		tm.WaitText("approval: shell: make deploy", 1)
		tm.Type("\r")
		tm.WaitText("✗ denied", 1)
		if code := tm.Exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
		screentest.Golden(t, "approve-answered-"+name, tm.Screen(color))
		if got, want := screentest.ReadFile(t, out), `{"type":"approval_response","approved":true}`+"\n"+`{"type":"approval_response","approved":false}`+"\n"; got != want {
			t.Errorf("responses:\n%s\nwant:\n%s", got, want)
		}
		log := screentest.ReadFile(t, audit)
		for _, want := range []string{`"decision":"allow","decider":"person","typed":["yse","y"]`,
			`"summary":"shell: make deploy","decision":"deny","decider":"person","typed":[""]`} {
			if !strings.Contains(log, want) {
				t.Errorf("the audit log lacks %s:\n%s", want, log)
			}
		}
	})
}

// writePolicy asks about every file write through a rule.
const writePolicy = `version: 1
default: ask
rules:
  - {name: write-in-project, decision: ask, kind: file_write}
`

// bigWrite is a file write of 260 lines, every other one changed: far longer than the screen.
func bigWrite() string {
	var old, new strings.Builder
	for i := 1; i <= 260; i++ {
		fmt.Fprintf(&old, "line %d of the notes\n", i)
		if i%2 == 1 {
			fmt.Fprintf(&new, "line %d of the NOTES\n", i)
		} else {
			fmt.Fprintf(&new, "line %d of the notes\n", i)
		}
	}
	ev, _ := json.Marshal(map[string]string{"type": "approval_request", "kind": "file_write", "plugin": "fs", "action": "write",
		"path": "docs/notes.txt", "oldContent": old.String(), "newContent": new.String()})
	return string(ev)
}

// pagerScript is a $PAGER that keeps what it is given.
func pagerScript(t *testing.T) (pager, got string) {
	dir := t.TempDir()
	pager, got = filepath.Join(dir, "pager.sh"), filepath.Join(dir, "got.txt")
	script := "#!/bin/sh\ncat > " + got + "\necho 'the pager ran'\n"
	if err := os.WriteFile(pager, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return pager, got
}

// lastRows is the last n rows of a view.
func lastRows(view string, n int) []string {
	rows := strings.Split(strings.TrimRight(view, "\n"), "\n")
	return rows[max(len(rows)-n, 0):]
}

// On a terminal 30 rows high, a file write far longer than the screen is cut to what fits,
// says so, and says what it asks about again right above the question; d shows the whole diff
// in $PAGER, and the question is asked again under what it asks about.
func TestScreenApproveBigWrite(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		pager, got := pagerScript(t)
		tm, audit, out := approveOnSize(t, cols, 30, color, writePolicy, []string{"PAGER=" + pager}, bigWrite())
		restated := []string{"approval: write: docs/notes.txt", `policy: ask (rule "write-in-project")`, "allow? [y/N]"}
		atQuestion := func(v string) bool {
			return slices.Equal(lastRows(v, 3), restated)
		}
		v := tm.WaitView("what is asked about right above the question", atQuestion)
		if !regexp.MustCompile(`… \d+ more lines`).MatchString(v) || !strings.Contains(v, "type d at the prompt to see the whole diff in $PAGER") {
			t.Errorf("the cut diff does not say how much is hidden, or how to see it:\n%s", v)
		}
		if !strings.Contains(v, "+++ b/docs/notes.txt") {
			t.Errorf("the diff's head scrolled out of the window:\n%s", v)
		}
		screentest.Golden(t, "approve-big-write-"+name, tm.View(color))
		tm.Type("d\r")
		v = tm.WaitView("the question again after the pager", func(v string) bool {
			return strings.Contains(v, "the pager ran") && atQuestion(v)
		})
		diff, err := os.ReadFile(got)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"--- a/docs/notes.txt", "+line 1 of the NOTES", "-line 259 of the notes", "+line 259 of the NOTES", " line 260 of the notes"} {
			if !strings.Contains(string(diff), want) {
				t.Errorf("the pager was not given %q", want)
			}
		}
		if strings.ContainsRune(string(diff), 0x1b) {
			t.Error("the pager was given escape sequences")
		}
		screentest.Golden(t, "approve-big-write-paged-"+name, tm.View(color))
		tm.Type("y\r")
		tm.WaitText("✓ approved", 1)
		if code := tm.Exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
		if got := screentest.ReadFile(t, out); got != `{"type":"approval_response","approved":true}`+"\n" {
			t.Errorf("responses:\n%s", got)
		}
		if log := screentest.ReadFile(t, audit); !strings.Contains(log, `"typed":["d","y"]`) {
			t.Errorf("the audit log lacks what was typed:\n%s", log)
		}
	})
}

// pushPart is a simple command longer than a line of either terminal.
const pushPart = "git push origin HEAD:main --force-with-lease --follow-tags --atomic --set-upstream --verbose --progress --signed=if-asked --push-option=ci.skip --recurse-submodules=check"

// The policy's reason breaks at spaces, never inside a word that fits on a line.
func TestScreenApproveReasonWraps(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		tm, _, _ := approveOnSize(t, cols, screentest.Rows, color, askPolicy, nil,
			`{"type":"approval_request","kind":"shell_command","command":"ls && `+pushPart+`"}`)
		s := tm.WaitLast("policy: ask", 1, "allow? [y/N]")
		why := "policy: ask (default), for " + pushPart + ": no rule matches"
		if len(why) <= cols {
			t.Fatalf("the reason fits on a line of %d columns", cols)
		}
		_, after, _ := strings.Cut(s, "\npolicy: ")
		shown := "policy: " + after[:strings.LastIndex(after, "\nallow? [y/N]")]
		if got, want := strings.Fields(shown), strings.Fields(why); !slices.Equal(got, want) {
			t.Errorf("the reason is broken inside words:\n%s", s)
		}
		screentest.Golden(t, "approve-reason-"+name, tm.Screen(color))
		tm.Type("n\r")
		tm.WaitText("✗ denied", 1)
		if code := tm.Exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
}

// A command longer than ten lines of the terminal is said again, cut to three lines, right
// above the question, with the policy's reason, however far its first lines scrolled.
func TestScreenApproveHugeCommand(t *testing.T) {
	huge := strings.TrimSuffix(strings.Repeat("echo step && ", 110), " && ")
	for _, cols := range []int{60, 120} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			tm, _, _ := approveOnSize(t, cols, 30, false, askPolicy, nil,
				`{"type":"approval_request","kind":"shell_command","command":"`+huge+`"}`)
			v := tm.WaitView("the question", func(v string) bool { return lastRows(v, 1)[0] == "allow? [y/N]" })
			rows := lastRows(v, 5)
			if !strings.HasPrefix(rows[0], "approval: shell: echo step") || !strings.HasSuffix(rows[2], "…") ||
				rows[3] != "policy: ask (default), for echo step: no rule matches" {
				t.Errorf("what is asked about is not right above the question:\n%s", v)
			}
			tm.Type("n\r")
			tm.WaitText("✗ denied", 1)
			tm.Exit()
		})
	}
}
