package attach_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/screentest"
)

// The interactive tests run fr-attach as a person would: as its own process on a
// pseudo-terminal (so Ctrl-C is a real SIGINT from the terminal), against an fr-sim serve
// daemon. Both are the test binary itself, installed under their names by TestMain.

// daemon starts fr-sim serve on a short socket path and returns the path and the file where
// it records every line clients send.
func daemon(t *testing.T) (sock, record string) {
	sock, _, record = daemonWS(t)
	return sock, record
}

// daemonWS is daemon with a WebSocket too, at url.
func daemonWS(t *testing.T) (sock, url, record string) {
	t.Helper()
	d := startSim(t, shortDir(t))
	return d.sock, d.url, d.record
}

// shortDir is a new directory with a short path of a fixed length (a socket's path is
// bounded, and screens show it), removed when the test ends.
func shortDir(t *testing.T) string {
	t.Helper()
	for {
		dir := fmt.Sprintf("/tmp/frs%08x", rand.Uint32())
		if err := os.Mkdir(dir, 0o700); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		} else if !os.IsExist(err) {
			t.Fatal(err)
		}
	}
}

// simDaemon is an fr-sim serve daemon started in dir.
type simDaemon struct {
	sock, url, record string
	stop              func() // ends it (SIGTERM), and waits
}

// startSim starts fr-sim serve with its socket, ready file and record in dir; it is stopped
// when the test ends if not before.
func startSim(t *testing.T, dir string) *simDaemon {
	t.Helper()
	bin, err := exec.LookPath("fr-sim")
	if err != nil {
		t.Fatal(err)
	}
	sock, ready := filepath.Join(dir, "d.sock"), filepath.Join(dir, "ready.json")
	os.Remove(ready)
	record := filepath.Join(dir, "record.jsonl")
	cmd := exec.Command(bin, "serve", "--socket", sock, "--ready-file", ready, "--scenario", "testdata/interactive.yaml",
		"--record", record, "--port", "0")
	cmd.Env = append(os.Environ(), "FUSERAFT_HOME="+filepath.Join(dir, "home"), "FUSERAFT_SERVE_TOKEN=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-testkit.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		})
	}
	t.Cleanup(stop)
	for deadline := time.Now().Add(testkit.Bound(15 * time.Second)); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(ready)
		var r struct {
			URL string `json:"url"`
		}
		if err == nil && json.Unmarshal(b, &r) == nil {
			return &simDaemon{sock: sock, url: r.URL, record: record, stop: stop}
		}
		select {
		case err := <-done:
			t.Fatalf("fr-sim serve ended: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("fr-sim serve never got ready:\n%s", stderr.String())
		}
	}
}

// term is fr-attach running on a pseudo-terminal.
type term struct {
	*screentest.Term
	t *testing.T
}

func startTerm(t *testing.T, args ...string) *term {
	t.Helper()
	return startTermSize(t, 100, args...)
}

// startTermSize is startTerm on a terminal cols wide.
func startTermSize(t *testing.T, cols uint16, args ...string) *term {
	t.Helper()
	bin, err := exec.LookPath("fr-attach")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "TERM=xterm", "NO_COLOR=", "FUSERAFT_SERVE_TOKEN=")
	return &term{Term: screentest.Start(t, int(cols), cmd), t: t}
}

// ansi matches the escape sequences the input line is drawn with.
var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// text is what the terminal received, escape sequences and carriage returns taken out.
func (tm *term) text() string {
	return strings.ReplaceAll(ansi.ReplaceAllString(tm.Raw(), ""), "\r", "")
}

// waitFor waits until the terminal has shown want n times in all.
func (tm *term) waitFor(want string, n int) {
	tm.t.Helper()
	deadline := time.Now().Add(testkit.Bound(15 * time.Second))
	for time.Now().Before(deadline) {
		if strings.Count(tm.text(), want) >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	tm.t.Fatalf("the terminal never showed %q (x%d); it shows:\n%s", want, n, tm.text())
}

// waitPrompt waits until the terminal has shown want n times and the input line asks
// allow? [y/N], so that what is typed next answers that prompt.
func (tm *term) waitPrompt(want string, n int) {
	tm.t.Helper()
	deadline := time.Now().Add(testkit.Bound(15 * time.Second))
	for time.Now().Before(deadline) {
		s := tm.text()
		if strings.Count(s, want) >= n && strings.HasSuffix(s, "┃ allow? [y/N] ") {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	tm.t.Fatalf("the terminal never asked about %q (x%d); it shows:\n%s", want, n, tm.text())
}

func (tm *term) typeKeys(s string) { tm.Type(s) }

// exit waits for fr-attach to end and returns its exit status.
func (tm *term) exit() int { return tm.Exit() }

// received returns the lines the daemon received, in order, compacted.
func received(t *testing.T, record string) []string {
	t.Helper()
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Line json.RawMessage `json:"line"`
			Text *string         `json:"text"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("record line %q: %v", l, err)
		}
		if r.Text != nil {
			lines = append(lines, *r.Text)
		} else {
			lines = append(lines, string(r.Line))
		}
	}
	return lines
}

func TestInteractiveApprovals(t *testing.T) {
	t.Parallel()
	sock, record := daemon(t)
	tm := startTerm(t, "--socket", sock, "--color", "never")
	tm.waitFor("▶ attached", 1)

	// A task, its approval allowed with y, its result.
	tm.typeKeys("deploy the app\r")
	tm.waitPrompt("┃ $ make deploy", 1)
	tm.typeKeys("y\r")
	tm.waitFor("✓ approved", 1)
	tm.waitFor("✓ done “deploy the app”", 1)
	tm.waitFor("Developer: Deployed.", 1)

	// Another, denied with an empty answer.
	tm.typeKeys("deploy again\r")
	tm.waitPrompt("┃ $ make deploy", 2)
	tm.typeKeys("\r")
	tm.waitFor("✗ denied", 1)
	tm.waitFor("✗ failed “deploy again”", 1)
	tm.waitFor("approval denied: make deploy", 1)

	// A file write shows its diff; "yes" allows it.
	tm.typeKeys("write notes\r")
	tm.waitFor("┃ approve? write notes.txt +1 -1", 1)
	tm.waitFor("+2", 1)
	tm.waitPrompt("┃ approve? write", 1)
	tm.typeKeys("yes\r")
	tm.waitFor("✓ approved", 2)
	tm.waitFor("Writer: Wrote notes.txt.", 1)

	// Ctrl-D detaches.
	tm.typeKeys("\x04")
	if code := tm.exit(); code != 0 {
		t.Errorf("exit status %d after Ctrl-D, want 0; the terminal shows:\n%s", code, tm.text())
	}
	tm.waitFor("fr-attach: detached", 1)
	if got := strings.Count(tm.text(), "approved"); got != 2 {
		t.Errorf("%d approvals shown, want 2:\n%s", got, tm.text())
	}
	// Exactly one answer per prompt reached the daemon, each after its task.
	want := []string{
		`{"type":"user_input","text":"deploy the app"}`,
		`{"type":"approval_response","approved":true}`,
		`{"type":"user_input","text":"deploy again"}`,
		`{"type":"approval_response","approved":false}`,
		`{"type":"user_input","text":"write notes"}`,
		`{"type":"approval_response","approved":true}`,
	}
	if got := received(t, record); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the daemon received:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestInteractiveApprovalAsksAgain(t *testing.T) {
	t.Parallel()
	sock, record := daemon(t)
	tm := startTerm(t, "--socket", sock, "--color", "never")
	tm.waitFor("▶ attached", 1)

	tm.typeKeys("deploy the app\r")
	tm.waitPrompt("┃ $ make deploy", 1)
	// A task typed at the prompt by mistake: the approval stays unanswered and is asked again.
	tm.typeKeys("second task\r")
	tm.waitFor(`answer y or n (an empty line is no): "second task" was not sent as a task`, 1)
	tm.waitPrompt("┃ $ make deploy", 1)
	tm.typeKeys("y\r")
	tm.waitFor("✓ approved", 1)
	tm.waitFor("✓ done “deploy the app”", 1)

	tm.typeKeys("\x04")
	if code := tm.exit(); code != 0 {
		t.Errorf("exit status %d after Ctrl-D, want 0; the terminal shows:\n%s", code, tm.text())
	}
	if strings.Contains(tm.text(), "denied") {
		t.Errorf("the approval was taken as denied:\n%s", tm.text())
	}
	want := []string{
		`{"type":"user_input","text":"deploy the app"}`,
		`{"type":"approval_response","approved":true}`,
	}
	if got := received(t, record); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the daemon received:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestInteractiveHeldTasks(t *testing.T) {
	t.Parallel()
	sock, _ := daemon(t)
	tm := startTerm(t, "--socket", sock, "--color", "never")
	tm.waitFor("▶ attached", 1)

	tm.typeKeys("slow one\r")
	tm.waitFor("⋯ queued", 1)
	tm.typeKeys("quick one\r")
	tm.waitFor("held: 1 task waiting for the current one", 1)
	tm.typeKeys("quick two\r")
	tm.waitFor("held: 2 tasks waiting for the current one", 1)
	tm.waitFor("✓ done “slow one”", 1)
	tm.waitFor(`sent the held task "quick one"; 1 more waiting`, 1)
	tm.waitFor("✓ done “quick one”", 1)
	tm.waitFor(`sent the held task "quick two"`, 1)
	tm.waitFor("✓ done “quick two”", 1)

	// A lone y with nothing asking is not sent as a task.
	tm.typeKeys("y\r")
	tm.waitFor(`no prompt waits for an answer: "y" was not sent`, 1)

	tm.typeKeys("\x04")
	if code := tm.exit(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
}

func TestInteractiveFollowsTheWidth(t *testing.T) {
	t.Parallel()
	sock, _ := daemon(t)
	tm := startTerm(t, "--socket", sock, "--color", "never")
	tm.waitFor("▶ attached", 1)
	// shown runs a task with a long tool call and returns the tool call's line as shown.
	n := 0
	shown := func() string {
		t.Helper()
		n++
		tm.typeKeys("wide\r")
		tm.waitFor("✓ done “wide”", n)
		lines := strings.Split(tm.text(), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if k := strings.Index(lines[i], "→ [Worker] shell"); k >= 0 {
				return lines[i][k:]
			}
		}
		t.Fatalf("no tool call shown:\n%s", tm.text())
		return ""
	}
	if l := shown(); render.StringWidth(l) != 100 || !strings.HasSuffix(l, "…") {
		t.Errorf("at width 100 the tool call is %d wide: %q", render.StringWidth(l), l)
	}
	if err := tm.Resize(60); err != nil {
		t.Fatal(err)
	}
	// The resize reaches fr-attach as a signal, at once but asynchronously.
	var l string
	testkit.Until(10*time.Second, func() bool { l = shown(); return render.StringWidth(l) == 60 })
	if render.StringWidth(l) != 60 || !strings.HasSuffix(l, "…") {
		t.Errorf("after a resize to 60 columns the tool call is %d wide: %q", render.StringWidth(l), l)
	}
	tm.typeKeys("\x04")
	tm.exit()
}

func TestInteractiveCtrlC(t *testing.T) {
	t.Parallel()
	sock, _ := daemon(t)
	tm := startTerm(t, "--socket", sock, "--color", "never")
	tm.waitFor("▶ attached", 1)

	tm.typeKeys("long task\r")
	tm.waitFor("● Worker is starting", 1)
	tm.typeKeys("half a li") // what is typed but not sent is dropped with the detach
	tm.waitFor("› half a li", 1)
	tm.typeKeys("\x03")
	if code := tm.exit(); code != 130 {
		t.Errorf("exit status %d after Ctrl-C, want 130; the terminal shows:\n%s", code, tm.text())
	}
	tm.waitFor("fr-attach: detached; the daemon keeps running task sim-", 1)
}

// Over the WebSocket, Ctrl-C names the client id to reattach with, and reattaching with it
// collects the task's result.
func TestInteractiveCtrlCWebSocket(t *testing.T) {
	t.Parallel()
	_, url, _ := daemonWS(t)
	tm := startTerm(t, "--url", url, "--color", "never")
	tm.waitFor("▶ attached", 1)
	tm.typeKeys("slow one\r")
	tm.waitFor("● Worker is starting", 1)
	tm.typeKeys("\x03")
	if code := tm.exit(); code != 130 {
		t.Errorf("exit status %d, want 130", code)
	}
	tm.waitFor(" to collect its result)", 1)
	m := regexp.MustCompile(`keeps running task (\S+) \(reattach with --client-id (fr-attach-[0-9a-f]+) to`).FindStringSubmatch(tm.text())
	if m == nil {
		t.Fatalf("no task and client id in:\n%s", tm.text())
	}
	bin, _ := exec.LookPath("fr-attach")
	cmd := exec.Command(bin, "--url", url, "--client-id", m[2], "--exit-on-result")
	cmd.Env = append(os.Environ(), "FUSERAFT_SERVE_TOKEN=")
	out, err := runTimeout(cmd, 15*time.Second)
	if err != nil {
		t.Fatalf("reattaching: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"type":"result","sessionId":"`+m[1]+`"`) {
		t.Errorf("reattaching did not collect the result of %s:\n%s", m[1], out)
	}
}

// runTimeout runs cmd (stdin empty) and returns its stdout, killing it after d.
func runTimeout(cmd *exec.Cmd, d time.Duration) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.Bytes(), err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return out.Bytes(), errors.New("timed out")
	}
}

func TestInteractivePromptTakesTheNextLine(t *testing.T) {
	t.Parallel()
	sock, _ := daemon(t)
	tm := startTerm(t, "--socket", sock, "--color", "never")
	tm.waitFor("▶ attached", 1)

	// A line being typed when a prompt comes is set aside, and comes back after the answer.
	tm.typeKeys("later release\r")
	tm.waitFor("● Planner is starting", 1)
	tm.typeKeys("quick")
	tm.waitFor("› quick", 1)
	tm.waitPrompt("┃ $ make release", 1)
	tm.waitFor("the line you were typing is kept for after the answer", 1)
	tm.typeKeys("y\r")
	tm.waitFor("┃ allow? [y/N] y", 1)
	tm.waitFor("✓ approved", 1)
	tm.waitFor("Planner: Released.", 1)
	tm.typeKeys(" look\r")
	tm.waitFor("› quick look", 1)
	tm.waitFor("✓ done “quick look”", 1)

	tm.typeKeys("deploy now\r")
	tm.waitPrompt("┃ $ make deploy", 1)
	tm.typeKeys("n\r")
	tm.waitFor("✗ denied", 1)
	tm.waitFor("✗ failed “deploy now”", 1)

	tm.typeKeys("deploy later\r")
	tm.waitPrompt("┃ $ make deploy", 2)
	// With the prompt up, Ctrl-C detaches: the daemon takes the prompt as denied.
	tm.typeKeys("\x03")
	if code := tm.exit(); code != 130 {
		t.Errorf("exit status %d, want 130", code)
	}
	tm.waitFor("takes its pending prompt as denied", 1)
}
