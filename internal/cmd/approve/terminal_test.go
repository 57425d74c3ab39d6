package approve

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/fuseraft/fr/internal/audit"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

// screen collects what fr-approve writes on the terminal.
type screen struct{ testkit.SyncBuffer }

// waitFor waits until the screen shows want n times.
func (s *screen) waitFor(t *testing.T, want string, n int) {
	t.Helper()
	if !testkit.Until(10*time.Second, func() bool { return strings.Count(s.String(), want) >= n }) {
		t.Fatalf("terminal never showed %q (x%d); it shows:\n%s", want, n, s.String())
	}
}

// session runs fr-approve with a real pseudo-terminal as its --tty, events written to in and
// responses read from out.
type session struct {
	t      *testing.T
	in     *io.PipeWriter
	out    *bufio.Reader
	ptmx   *os.File
	screen *screen
	done   chan int
	stderr *testkit.SyncBuffer
}

func startSession(t *testing.T, policy string, env map[string]string, args ...string) *session {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, in: inW, out: bufio.NewReader(outR), ptmx: ptmx, screen: &screen{}, done: make(chan int, 1), stderr: &testkit.SyncBuffer{}}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			s.screen.Write(b[:n])
			if err != nil {
				return
			}
		}
	}()
	streams := cmdutil.Streams{In: inR, Out: outW, Err: s.stderr, Getenv: func(k string) string { return env[k] }}
	argv := append([]string{"fr-approve", "--policy", pol, "--tty", tty.Name()}, args...)
	go func() {
		code := Run(context.Background(), streams, argv)
		outW.Close()
		s.done <- code
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-s.done:
		case <-testkit.After(10 * time.Second):
			t.Error("fr-approve did not end")
		}
		tty.Close()
		ptmx.Close()
	})
	return s
}

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) response() string {
	s.t.Helper()
	type res struct {
		l   string
		err error
	}
	c := make(chan res, 1)
	go func() {
		l, err := s.out.ReadString('\n')
		c <- res{l, err}
	}()
	select {
	case r := <-c:
		if r.err != nil {
			s.t.Fatalf("reading a response: %v (stderr: %s)", r.err, s.stderr.String())
		}
		return strings.TrimSpace(r.l)
	case <-testkit.After(10 * time.Second):
		s.t.Fatalf("no response; terminal shows:\n%s", s.screen.String())
	}
	return ""
}

func (s *session) typeLine(text string) {
	s.t.Helper()
	if _, err := s.ptmx.Write([]byte(text + "\r")); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) end() int {
	s.t.Helper()
	s.in.Close()
	select {
	case code := <-s.done:
		s.done <- code
		return code
	case <-testkit.After(10 * time.Second):
		s.t.Fatal("fr-approve did not end after its input did")
	}
	return -1
}

const askPolicy = `version: 1
default: ask
question_default: ask
rules:
  - {name: ls, decision: allow, shell: [ls]}
  - {name: no-rm, decision: deny, shell: [rm]}
`

func TestTerminalAsk(t *testing.T) {
	auditFile := filepath.Join(t.TempDir(), "audit.log")
	s := startSession(t, askPolicy, map[string]string{"NO_COLOR": "1"}, "--audit", auditFile)

	// allowed by the policy: nobody is asked
	s.send(`{"type":"approval_request","kind":"shell_command","command":"ls -l"}`)
	if got := s.response(); got != `{"type":"approval_response","approved":true}` {
		t.Fatalf("got %s", got)
	}

	// ask: y allows
	s.send(`{"type":"approval_request","kind":"shell_command","command":"make deploy"}`)
	s.screen.waitFor(t, "allow? [y/N] ", 1)
	if !strings.Contains(s.screen.String(), "approval: shell: make deploy") {
		t.Errorf("no summary on the terminal:\n%s", s.screen.String())
	}
	s.typeLine("y")
	if got := s.response(); got != `{"type":"approval_response","approved":true}` {
		t.Fatalf("after y: got %s", got)
	}

	s.screen.waitFor(t, "✓ approved", 1)

	// a file write is shown as a diff; anything but y/yes/n/no/empty is asked again, as
	// fr-attach does
	s.send(`{"type":"approval_request","kind":"file_write","plugin":"fs","action":"write","path":"src/a.go","oldContent":"package a\n","newContent":"package a\n\nvar X = 1\n"}`)
	s.screen.waitFor(t, "allow? [y/N] ", 2)
	if scr := s.screen.String(); !strings.Contains(scr, "approval: write: src/a.go") || !strings.Contains(scr, "+++ b/src/a.go") {
		t.Errorf("no diff on the terminal:\n%s", scr)
	}
	s.typeLine("sure")
	s.screen.waitFor(t, "answer y or n (an empty line is no): allow? [y/N] ", 1)
	s.typeLine("n")
	if got := s.response(); got != `{"type":"approval_response","approved":false}` {
		t.Fatalf("after 'sure', then n: got %s", got)
	}
	s.screen.waitFor(t, "✗ denied", 1)

	// an escape sequence in the command is shown, not obeyed
	// (as is a bidirectional mark or override that would make it read differently)
	s.send(`{"type":"approval_request","kind":"shell_command","command":"echo hi\u001b[2K\rls \u200e\u061c\u202ex"}`)
	s.screen.waitFor(t, "allow? [y/N] ", 4) // the typo's was the third
	if scr := s.screen.String(); !strings.Contains(scr, "echo hi␛[2K␍ls \uFFFD\uFFFD\uFFFDx") || strings.Contains(scr, "\x1b[2K") || strings.ContainsAny(scr, "\u200e\u061c\u202e") {
		t.Errorf("escape sequence reached the terminal:\n%q", scr)
	}
	s.typeLine("YES")
	if got := s.response(); got != `{"type":"approval_response","approved":true}` {
		t.Fatalf("after YES: got %s", got)
	}

	// a question: the number picks an option
	s.send(`{"type":"question","question":"Which branch?","options":["main","dev"],"allowOther":false}`)
	s.screen.waitFor(t, "number (empty skips): ", 1)
	s.typeLine("2")
	if got := s.response(); got != `{"type":"question_response","answer":"dev"}` {
		t.Fatalf("question: got %s", got)
	}

	// an unknown kind: the raw event is shown and the person decides
	s.send(`{"type":"approval_request","kind":"browser_action","url":"https://example.com"}`)
	s.screen.waitFor(t, "allow? [y/N] ", 5)
	if scr := s.screen.String(); !strings.Contains(scr, `"url":"https://example.com"`) {
		t.Errorf("raw event not shown:\n%s", scr)
	}
	s.typeLine("")
	if got := s.response(); got != `{"type":"approval_response","approved":false}` {
		t.Fatalf("unknown kind: got %s", got)
	}

	if code := s.end(); code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, s.stderr.String())
	}
	log, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"decision":"allow","decider":"rule","rule":"ls"`, `"summary":"shell: make deploy","decision":"allow","decider":"person","typed":["y"]`,
		`"summary":"write: src/a.go","decision":"deny","decider":"person","typed":["sure","n"]`, `"decision":"answer","answer":"dev","decider":"person","typed":["2"]`,
		`"decision":"deny","decider":"person","typed":[""]`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("audit log lacks %s:\n%s", want, log)
		}
	}
	if res, err := audit.Verify(auditFile, bytes.NewReader(log), ""); err != nil || res.Lines != 6 {
		t.Errorf("verify: %+v %v", res, err)
	}
}

func TestTerminalTimeout(t *testing.T) {
	auditFile := filepath.Join(t.TempDir(), "audit.log")
	s := startSession(t, askPolicy, nil, "--audit", auditFile, "--ask-timeout", "200ms")
	s.send(`{"type":"approval_request","kind":"shell_command","command":"make deploy"}`)
	if got := s.response(); got != `{"type":"approval_response","approved":false}` {
		t.Fatalf("got %s", got)
	}
	s.screen.waitFor(t, "no answer within 200ms", 1)
	// an answer typed after the timeout does not answer the next prompt
	s.typeLine("y")
	time.Sleep(50 * time.Millisecond)
	s.send(`{"type":"question","question":"Name?","options":[],"allowOther":true}`)
	s.screen.waitFor(t, "answer (empty skips): ", 1)
	s.typeLine("fr-ci")
	if got := s.response(); got != `{"type":"question_response","answer":"fr-ci"}` {
		t.Fatalf("question after a timeout: got %s", got)
	}
	if code := s.end(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	log, _ := os.ReadFile(auditFile)
	if !strings.Contains(string(log), `"decision":"deny","decider":"timeout"`) {
		t.Errorf("audit log lacks the timeout:\n%s", log)
	}
}

// Responses decided from a block of input go out together, but never wait for a person:
// with two prompts in one write, the first (decided by a rule) is on stdout before the
// terminal asks about the second.
func TestAnswerSentBeforeAsking(t *testing.T) {
	s := startSession(t, askPolicy, map[string]string{"NO_COLOR": "1"})
	s.send(`{"type":"approval_request","kind":"shell_command","command":"ls"}` + "\n" +
		`{"type":"approval_request","kind":"shell_command","command":"make deploy"}`)
	if got := s.response(); got != `{"type":"approval_response","approved":true}` {
		t.Fatalf("first response: got %s", got)
	}
	s.screen.waitFor(t, "allow? [y/N] ", 1)
	s.typeLine("n")
	if got := s.response(); got != `{"type":"approval_response","approved":false}` {
		t.Fatalf("second response: got %s", got)
	}
	if code := s.end(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func TestTerminalColour(t *testing.T) {
	s := startSession(t, askPolicy, map[string]string{"TERM": "xterm"})
	s.send(`{"type":"approval_request","kind":"shell_command","command":"make"}`)
	s.screen.waitFor(t, "allow? [y/N] ", 1)
	if !strings.Contains(s.screen.String(), "\x1b[1;33mapproval: shell: make") {
		t.Errorf("no colour without NO_COLOR:\n%q", s.screen.String())
	}
	s.typeLine("n")
	s.response()
	s.end()
}

// A command longer than three lines of the terminal is shown whole, every character in order,
// and the answer is shown once given.
func TestTerminalLongCommand(t *testing.T) {
	s := startSession(t, askPolicy, map[string]string{"NO_COLOR": "1"})
	cmd := "go test ./... && go vet ./... && git add -A && git commit -m 'lexer: keep quoted words together when a quote is escaped' && git tag -a v1.2.3 -m 'release 1.2.3' && git push origin HEAD:main --force && git push --tags"
	s.send(`{"type":"approval_request","kind":"shell_command","command":"` + cmd + `"}`)
	s.screen.waitFor(t, "allow? [y/N] ", 1)
	joined := strings.Join(strings.Fields(s.screen.String()), "")
	if !strings.Contains(joined, strings.Join(strings.Fields(cmd), "")) {
		t.Errorf("the command is not shown whole:\n%s", s.screen.String())
	}
	s.typeLine("y")
	if got := s.response(); got != `{"type":"approval_response","approved":true}` {
		t.Fatalf("got %s", got)
	}
	s.screen.waitFor(t, "✓ approved", 1)
	s.end()
}

// A typo is asked again, not taken as a denial; --ask-timeout still denies when no answer
// follows it, counting from when the prompt was first shown, and the log keeps what was typed.
func TestTerminalTypoThenTimeout(t *testing.T) {
	auditFile := filepath.Join(t.TempDir(), "audit.log")
	s := startSession(t, askPolicy, map[string]string{"NO_COLOR": "1"}, "--audit", auditFile, "--ask-timeout", "1s")
	start := time.Now()
	s.send(`{"type":"approval_request","kind":"shell_command","command":"make deploy"}`)
	s.screen.waitFor(t, "allow? [y/N] ", 1)
	s.typeLine("yse")
	s.screen.waitFor(t, "answer y or n (an empty line is no): allow? [y/N] ", 1)
	if got := s.response(); got != `{"type":"approval_response","approved":false}` {
		t.Fatalf("got %s", got)
	}
	if d := time.Since(start); d > testkit.Bound(5*time.Second) {
		t.Errorf("denied after %s: the timeout started again with the typo", d)
	}
	s.screen.waitFor(t, "no answer within 1s", 1)
	if code := s.end(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	log, _ := os.ReadFile(auditFile)
	if !strings.Contains(string(log), `"decision":"deny","decider":"timeout","typed":["yse"]`) {
		t.Errorf("audit log lacks the timeout and what was typed:\n%s", log)
	}
	if _, err := audit.Verify(auditFile, bytes.NewReader(log), ""); err != nil {
		t.Errorf("verify: %v", err)
	}
}
