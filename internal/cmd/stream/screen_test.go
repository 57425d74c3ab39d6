//go:build unix

package stream

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/testkit/screentest"
)

// fr-stream repl on a terminal is a chat: these tests type at it on a real pseudo-terminal and
// read its screen through a VT100 screen, against golden screens (go test -update rewrites
// them) at 60 and 120 columns, with and without colour.

// chatOn runs fr-stream repl against fr-sim's chat.yaml on a terminal cols wide; record is
// where fr-sim writes each line it reads.
func chatOn(t *testing.T, cols int, color bool, args ...string) (tm *screentest.Term, record string) {
	t.Helper()
	return chatOnSize(t, cols, screentest.Rows, color, "testdata/chat.yaml", nil, args...)
}

// chatOnSize is chatOn on a terminal cols wide and rows high, against the fr-sim scenario
// file, with env added to the environment.
func chatOnSize(t *testing.T, cols, rows int, color bool, file string, env []string, args ...string) (tm *screentest.Term, record string) {
	t.Helper()
	bin, err := exec.LookPath("fr-stream")
	if err != nil {
		t.Fatal(err)
	}
	sim, err := exec.LookPath("fr-sim")
	if err != nil {
		t.Fatal(err)
	}
	scenario, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	c := screentest.ColorFlag(color)
	record = filepath.Join(t.TempDir(), "record.jsonl")
	cmd := exec.Command(bin, append([]string{"repl", "--color", c}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm", "NO_COLOR=", "PAGER=", "FUSERAFT_BIN="+sim,
		"FRSIM_SCENARIO="+scenario, "FRSIM_RECORD="+record)
	cmd.Env = append(cmd.Env, env...)
	return screentest.StartSize(t, cols, rows, cmd), record
}

func TestScreenChatApproval(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		tm, record := chatOn(t, cols, color)
		tm.WaitLast("▶ chat", 1, "›")
		tm.Type("run the tests\r")
		s := tm.WaitLast("HEAD:main", 1, "┃ allow? [y/N]")
		flat := strings.Join(strings.Fields(strings.ReplaceAll(s, "┃", " ")), " ")
		if !strings.Contains(flat, "'lexer: keep quoted words together when a quote is escaped' && git push origin HEAD:main") {
			t.Errorf("the command is not shown whole:\n%s", s)
		}
		screentest.Golden(t, "chat-approval-"+name, tm.Screen(color))
		tm.Type("y\r")
		tm.WaitText("Ran it.", 1)
		tm.WaitLast("Ran it.", 1, "›")
		screentest.Golden(t, "chat-approved-"+name, tm.Screen(color))
		if got := screentest.ReadFile(t, record); !strings.Contains(got, `{"type":"approval_response","approved":true}`) || strings.Contains(got, `"text":"y"`) {
			t.Errorf("fuseraft read:\n%s", got)
		}
		tm.Type("\x04")
		if code := tm.Exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
}

func TestScreenChatQuestion(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		tm, record := chatOn(t, cols, color, "--questions")
		tm.WaitLast("▶ chat", 1, "›")
		tm.Type("first\r")
		tm.WaitLast("", 0, "┃ allow? [y/N]")
		tm.Type("n\r")
		tm.WaitLast("— turn 0", 1, "›") // the turn has ended: what is typed now starts the next
		tm.Type("release it\r")
		s := tm.WaitLast("dev", 1, "┃ answer 1-2 or your own (empty skips):")
		for _, want := range []string{"Which branch should the release go to?", "main", "dev"} {
			if !strings.Contains(s, want) {
				t.Errorf("the question does not show %q:\n%s", want, s)
			}
		}
		screentest.Golden(t, "chat-question-"+name, tm.Screen(color))
		tm.Type("release/9\r")
		tm.WaitLast("On your branch.", 1, "›")
		if got := screentest.ReadFile(t, record); !strings.Contains(got, `{"type":"question_response","answer":"release/9"}`) {
			t.Errorf("fuseraft read:\n%s", got)
		}
		tm.Type("\x04")
		tm.Exit()
	})
}

func TestScreenChatInterrupt(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		// the second turn is the question's: without questions it ends at once
		tm, record := chatOn(t, cols, color, "--no-questions")
		tm.WaitLast("▶ chat", 1, "›")
		tm.Type("first\r")
		tm.WaitLast("", 0, "┃ allow? [y/N]")
		tm.Type("\r")
		tm.WaitLast("— turn 0", 1, "›")
		tm.Type("second\r")
		tm.WaitLast("— turn", 2, "›")
		tm.Type("third\r")
		tm.WaitText("Thinking hard", 1)
		tm.Type("\x03")
		tm.WaitLast("interrupting the turn", 1, "›")
		tm.WaitLast("cancel", 1, "›")
		screentest.Golden(t, "chat-interrupted-"+name, tm.Screen(color))
		if got := screentest.ReadFile(t, record); !strings.Contains(got, `"signal":"SIGINT"`) {
			t.Errorf("fuseraft was not interrupted:\n%s", got)
		}
		tm.Type("\x04")
		if code := tm.Exit(); code != 0 {
			t.Errorf("exit %d after Ctrl-D", code)
		}
	})
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

// On a terminal 30 rows high, a file write far longer than the screen says what it asks about
// right above the question, however far its head scrolled; d shows the whole diff in $PAGER.
func TestScreenChatBigWrite(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		pager, got := pagerScript(t)
		tm, record := chatOnSize(t, cols, 30, color, "testdata/bigwrite.yaml", []string{"PAGER=" + pager})
		tm.WaitLast("▶ chat", 1, "›")
		tm.Type("write the notes\r")
		restated := []string{"┃ approval: write: docs/notes.txt", "┃ allow? [y/N]"}
		atQuestion := func(v string) bool { return slices.Equal(lastRows(v, 2), restated) }
		v := tm.WaitView("what is asked about right above the question", atQuestion)
		if strings.Contains(v, "approve? write") {
			t.Errorf("the prompt's head is in the window: the test shows nothing\n%s", v)
		}
		screentest.Golden(t, "chat-big-write-"+name, tm.View(color))
		tm.Type("d\r")
		tm.WaitView("the question again after the pager", func(v string) bool {
			return strings.Contains(v, "the pager ran") && atQuestion(v)
		})
		diff, err := os.ReadFile(got)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"--- a/docs/notes.txt", "+line 1 of the NOTES", "-line 259 of the notes", "+line 259 of the NOTES"} {
			if !strings.Contains(string(diff), want) {
				t.Errorf("the pager was not given %q", want)
			}
		}
		tm.Type("y\r")
		tm.WaitLast("Wrote docs/notes.txt.", 1, "›")
		if v := tm.View(false); strings.Contains(v, "┃ approval: write") {
			t.Errorf("what was asked about stays above the input line once answered:\n%s", v)
		}
		if got := screentest.ReadFile(t, record); !strings.Contains(got, `{"type":"approval_response","approved":true}`) {
			t.Errorf("fuseraft read:\n%s", got)
		}
		tm.Type("\x04")
		if code := tm.Exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
}

// theReply is what testdata/reply.yaml streams, four bytes a token.
const theReply = "I ran the tests and wrote a test for it. The parser now keeps quoted words together when a quote is escaped, so a commit message like 'fix: keep it' stays one word for git, and the release notes say so in the changelog for everyone who reads them."

// A reply streamed in pieces that cut words breaks at spaces, never inside a word.
func TestScreenChatReplyWraps(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		tm, _ := chatOnSize(t, cols, screentest.Rows, color, "testdata/reply.yaml", nil)
		tm.WaitLast("▶ chat", 1, "›")
		tm.Type("tell me\r")
		// The turn's end comes after the whole reply: until it is shown, the reply may be.
		s := tm.WaitLast("— turn 0", 1, "›")
		_, after, _ := strings.Cut(s, "› tell me\n")
		reply, _, _ := strings.Cut(after, "— turn")
		if got, want := strings.Fields(reply), strings.Fields(theReply); !slices.Equal(got, want) {
			t.Errorf("the reply's words broken at the screen's edge:\n%s", s)
		}
		screentest.Golden(t, "chat-reply-"+name, tm.Screen(color))
		tm.Type("\x04")
		tm.Exit()
	})
}
