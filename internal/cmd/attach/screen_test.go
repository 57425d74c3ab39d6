package attach_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/testkit/screentest"
)

// The screen tests read fr-attach's terminal as a person does, through a VT100 screen, and
// compare it with golden screens (go test -update rewrites them) at 60 and 120 columns,
// with and without colour.

// attachOn runs fr-attach on a terminal cols wide.
func attachOn(t *testing.T, cols int, color bool, env []string, args ...string) *screentest.Term {
	t.Helper()
	return attachOnSize(t, cols, screentest.Rows, color, env, args...)
}

// attachOnSize is attachOn on a terminal cols wide and rows high.
func attachOnSize(t *testing.T, cols, rows int, color bool, env []string, args ...string) *screentest.Term {
	t.Helper()
	bin, err := exec.LookPath("fr-attach")
	if err != nil {
		t.Fatal(err)
	}
	c := screentest.ColorFlag(color)
	cmd := exec.Command(bin, append(args, "--color", c)...)
	cmd.Env = append(os.Environ(), "TERM=xterm", "NO_COLOR=", "FUSERAFT_SERVE_TOKEN=", "PAGER=", "HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	return screentest.StartSize(t, cols, rows, cmd)
}

// words are the words of s, for checking that a prompt shows all of it.
func showsAll(t *testing.T, screen, subject string) {
	t.Helper()
	flat := strings.Join(strings.Fields(strings.ReplaceAll(screen, "┃", " ")), " ")
	for _, w := range strings.Fields(subject) {
		if !strings.Contains(flat, w) {
			t.Errorf("the screen does not show %q of %q:\n%s", w, subject, screen)
		}
	}
}

const pushCommand = "go test ./... && go vet ./... && git add -A && git commit -m 'lexer: keep quoted words together when a quote is escaped' && git tag -a v1.2.3 -m 'release 1.2.3' && git push origin HEAD:main --force && git push --tags"

func TestScreenLongCommand(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		sock, record := daemon(t)
		tm := attachOn(t, cols, color, nil, "--socket", sock)
		tm.WaitText("▶ attached", 1)
		tm.Type("push it\r")
		s := tm.WaitLast("--tags", 1, "┃ allow? [y/N]")
		showsAll(t, s, pushCommand)
		if rows := strings.Count(s, "\n"); rows < 4 {
			t.Errorf("the command is on %d rows", rows)
		}
		screentest.Golden(t, "attach-long-command-"+name, tm.Screen(color))
		tm.Type("y\r")
		tm.WaitText("Pushed.", 1)
		tm.Type("\x04")
		if code := tm.Exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
		if got := received(t, record); !strings.Contains(strings.Join(got, "\n"), `"approved":true`) {
			t.Errorf("the daemon received %q", got)
		}
	})
}

// pagerScript is a $PAGER that keeps what it is given and the terminal's mode.
func pagerScript(t *testing.T) (pager, got, mode string) {
	dir := t.TempDir()
	pager, got, mode = filepath.Join(dir, "pager.sh"), filepath.Join(dir, "got.txt"), filepath.Join(dir, "mode.txt")
	script := "#!/bin/sh\ncat > " + got + "\nstty -a < /dev/tty > " + mode + "\necho 'the pager ran'\n"
	if err := os.WriteFile(pager, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return pager, got, mode
}

func TestScreenDiffInPager(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		sock, record := daemon(t)
		pager, got, mode := pagerScript(t)
		tm := attachOn(t, cols, color, []string{"PAGER=" + pager}, "--socket", sock)
		tm.WaitText("▶ attached", 1)
		tm.Type("bigwrite\r")
		s := tm.WaitLast("type d at the prompt", 1, "┃ allow? [y/N]")
		if !regexp.MustCompile(`… \d+ more lines`).MatchString(s) {
			t.Errorf("the cut diff does not say how much is hidden:\n%s", s)
		}
		screentest.Golden(t, "attach-diff-cut-"+name, tm.Screen(color))
		tm.Type("d\r")
		s = tm.WaitLast("the pager ran", 1, "┃ allow? [y/N]")
		diff, err := os.ReadFile(got)
		if err != nil {
			t.Fatal(err)
		}
		// The whole diff, every changed line, and no escape sequence.
		for _, want := range []string{"--- a/docs/notes.txt", "+line 1 of the NOTES", "-line 259 of the notes", "+line 259 of the NOTES"} {
			if !strings.Contains(string(diff), want) {
				t.Errorf("the pager was not given %q", want)
			}
		}
		if strings.ContainsRune(string(diff), 0x1b) {
			t.Error("the pager was given escape sequences")
		}
		m, _ := os.ReadFile(mode)
		if !regexp.MustCompile(`(^|\s)icanon(\s|$)`).Match(m) || !regexp.MustCompile(`(^|\s)echo(\s|$)`).Match(m) {
			t.Errorf("the pager ran without the terminal's line mode: %s", m)
		}
		screentest.Golden(t, "attach-diff-after-pager-"+name, tm.Screen(color))
		// Back in the edit mode: the answer is read key by key again.
		tm.Type("y\r")
		tm.WaitText("Wrote docs/notes.txt.", 1)
		tm.Type("\x04")
		tm.Exit()
		if got := received(t, record); !strings.Contains(strings.Join(got, "\n"), `"approved":true`) {
			t.Errorf("the daemon received %q", got)
		}
	})
}

// lastRows is the last n rows of a view.
func lastRows(view string, n int) []string {
	rows := strings.Split(strings.TrimRight(view, "\n"), "\n")
	return rows[max(len(rows)-n, 0):]
}

// On a terminal 30 rows high, a file write far longer than the screen says what it asks about
// right above the question, however far its head scrolled, before and after the pager.
func TestScreenDiffInWindow(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		sock, record := daemon(t)
		pager, got, _ := pagerScript(t)
		tm := attachOnSize(t, cols, 30, color, []string{"PAGER=" + pager}, "--socket", sock)
		tm.WaitText("▶ attached", 1)
		tm.Type("bigwrite\r")
		restated := []string{"┃ approval: write: docs/notes.txt", "┃ allow? [y/N]"}
		atQuestion := func(v string) bool { return slices.Equal(lastRows(v, 2), restated) }
		v := tm.WaitView("what is asked about right above the question", atQuestion)
		if strings.Contains(v, "approve? write") {
			t.Errorf("the prompt's head is in the window: the test shows nothing\n%s", v)
		}
		screentest.Golden(t, "attach-diff-window-"+name, tm.View(color))
		tm.Type("d\r")
		tm.WaitView("the question again after the pager", func(v string) bool {
			return strings.Contains(v, "the pager ran") && atQuestion(v)
		})
		if diff, err := os.ReadFile(got); err != nil || !strings.Contains(string(diff), "+line 259 of the NOTES") {
			t.Errorf("the pager was not given the whole diff (%v)", err)
		}
		tm.Type("y\r")
		tm.WaitText("Wrote docs/notes.txt.", 1)
		if v := tm.View(false); strings.Contains(v, "┃ approval: write") {
			t.Errorf("what was asked about stays above the input line once answered:\n%s", v)
		}
		tm.Type("\x04")
		tm.Exit()
		if got := received(t, record); !strings.Contains(strings.Join(got, "\n"), `"approved":true`) {
			t.Errorf("the daemon received %q", got)
		}
	})
}

func TestScreenDaemonGone(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		dir := shortDir(t)
		d := startSim(t, dir)
		tm := attachOn(t, cols, color, nil, "--socket", d.sock, "--max-backoff", "2s")
		tm.WaitText("▶ attached", 1)
		tm.Type("a task half typed")
		tm.WaitLast("▶ attached", 1, "› a task half typed")
		d.stop()
		// One status line that updates, above the input line and what was typed on it.
		s := tm.WaitFor("the status at attempt 3", func(s string) bool {
			return regexp.MustCompile(`\(attempt\s+3\)…`).MatchString(tm.Raw()) &&
				strings.HasSuffix(strings.TrimRight(s, "\n"), "› a task half typed")
		})
		if n := strings.Count(s, "daemon unreachable"); n != 1 {
			t.Errorf("the status shows %d times:\n%s", n, s)
		}
		if strings.Contains(s, "dial unix") || strings.Contains(s, "reconnecting to") {
			t.Errorf("raw connection errors in the view:\n%s", s)
		}
		screentest.Golden(t, "attach-daemon-gone-"+name, tm.Screen(color))
		// The daemon back: the status goes, the line typed is still there, and goes out.
		startSim(t, dir)
		s = tm.WaitLast("reconnected to the daemon", 1, "› a task half typed")
		if strings.Contains(s, "daemon unreachable") {
			t.Errorf("the status stays:\n%s", s)
		}
		screentest.Golden(t, "attach-daemon-back-"+name, tm.Screen(color))
		tm.Type("\x15\x04")
		if code := tm.Exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
}

func TestScreenInterruptedTask(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		sock, _ := daemon(t)
		tm := attachOn(t, cols, color, nil, "--socket", sock, "--task", "long run", "--exit-on-result")
		tm.WaitText("Worker", 1)
		tm.Type("\x03")
		if code := tm.Exit(); code != 130 {
			t.Errorf("exit %d, want 130", code)
		}
		s := tm.Screen(false)
		flat := strings.Join(strings.Fields(s), " ")
		for _, want := range []string{"interrupted; the daemon keeps running task sim-", "fr-attach --socket " + screentest.Normalize(sock)} {
			if !strings.Contains(flat, want) {
				t.Errorf("the terminal does not say %q:\n%s", want, s)
			}
		}
		screentest.Golden(t, "attach-interrupted-"+name, tm.Screen(color))
	})
}

// Ctrl-C in the pager is the pager's: it stops the pager (as less takes it) and leaves
// fr-attach at its prompt, not interrupted.
func TestScreenCtrlCInPager(t *testing.T) {
	sock, record := daemon(t)
	dir := t.TempDir()
	pager, started := filepath.Join(dir, "pager.sh"), filepath.Join(dir, "started")
	script := "#!/bin/sh\ntrap 'echo the pager was interrupted; exit 0' INT\ncat > /dev/null\n: > " + started + "\necho 'the pager waits'\nwhile :; do sleep 0.05; done\n"
	if err := os.WriteFile(pager, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tm := attachOn(t, 80, false, []string{"PAGER=" + pager}, "--socket", sock)
	tm.WaitText("▶ attached", 1)
	tm.Type("bigwrite\r")
	tm.WaitLast("type d at the prompt", 1, "┃ allow? [y/N]")
	tm.Type("d\r")
	tm.WaitText("the pager waits", 1)
	tm.Type("\x03")
	tm.WaitLast("the pager was interrupted", 1, "┃ allow? [y/N]")
	tm.Type("y\r")
	tm.WaitText("Wrote docs/notes.txt.", 1)
	tm.Type("\x04")
	if code := tm.Exit(); code != 0 {
		t.Errorf("exit %d, want 0: Ctrl-C in the pager reached fr-attach", code)
	}
	if got := received(t, record); !strings.Contains(strings.Join(got, "\n"), `"approved":true`) {
		t.Errorf("the daemon received %q", got)
	}
}

// theReply is what the story task streams, four bytes a token.
const theReply = "I ran the tests and wrote a test for it. The parser now keeps quoted words together when a quote is escaped, so a commit message like 'fix: keep it' stays one word for git, and the release notes say so in the changelog for everyone who reads them."

// A reply streamed in pieces that cut words breaks at spaces, never inside a word.
func TestScreenReplyWraps(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		sock, _ := daemon(t)
		tm := attachOn(t, cols, color, nil, "--socket", sock)
		tm.WaitText("▶ attached", 1)
		tm.Type("story\r")
		s := tm.WaitText("Told.", 1)
		_, after, _ := strings.Cut(s, "Writer is starting\n")
		reply, _, _ := strings.Cut(after, "\n✓")
		if got, want := strings.Fields(reply), strings.Fields(theReply); !slices.Equal(got, want) {
			t.Errorf("the reply's words broken at the screen's edge:\n%s", s)
		}
		screentest.Golden(t, "attach-reply-"+name, tm.Screen(color))
		tm.Type("\x04")
		tm.Exit()
	})
}
