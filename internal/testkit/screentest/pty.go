package screentest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/golden"
)

// Term is a command running on a pseudo-terminal.
type Term struct {
	t    testing.TB
	ptmx *os.File
	cmd  *exec.Cmd
	done chan struct{}
	read chan struct{} // closed when all the command wrote has been read
	code int
	cols int
	rows int

	mu  sync.Mutex
	raw bytes.Buffer
}

// Rows is how high the terminals are, unless StartSize says otherwise.
const Rows = 40

// Start runs cmd on a terminal cols wide. The test is skipped where there are no
// pseudo-terminals; the command is killed when the test ends.
func Start(t testing.TB, cols int, cmd *exec.Cmd) *Term {
	t.Helper()
	return StartSize(t, cols, Rows, cmd)
}

// StartSize is Start on a terminal cols wide and rows high.
func StartSize(t testing.TB, cols, rows int, cmd *exec.Cmd) *Term {
	t.Helper()
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)})
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	tm := &Term{t: t, ptmx: ptmx, cmd: cmd, done: make(chan struct{}), read: make(chan struct{}), code: -1, cols: cols, rows: rows}
	go func() {
		defer close(tm.read)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			tm.mu.Lock()
			tm.raw.Write(b[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			tm.code = ee.ExitCode()
		} else if err == nil {
			tm.code = 0
		}
		close(tm.done)
	}()
	t.Cleanup(func() {
		select {
		case <-tm.done:
		default:
			cmd.Process.Kill()
			<-tm.done
		}
		ptmx.Close()
	})
	return tm
}

// Screen is what the terminal shows now, read at its width now (see Screen.Text), with Normalize's placeholders.
func (tm *Term) Screen(color bool) string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.screen().Text(color)
}

func (tm *Term) screen() *Screen {
	s := NewScreen(tm.cols, tm.rows)
	// Placeholders for what varies have its width, so the screen is laid out the same.
	s.Write([]byte(Normalize(tm.raw.String())))
	return s
}

// View is what the terminal shows in its window now, without the rows scrolled off the top:
// what a person sees without scrolling back.
func (tm *Term) View(color bool) string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.screen().View(color)
}

// WaitView is WaitFor on the window alone (View).
func (tm *Term) WaitView(what string, ok func(view string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(testkit.Bound(20 * time.Second))
	for {
		s := tm.View(false)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the terminal's window never showed %s; it shows:\n%s", what, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Raw is every byte the terminal received.
func (tm *Term) Raw() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.raw.String()
}

// WaitFor waits until ok says the screen (without colour) is as wanted, and returns it.
func (tm *Term) WaitFor(what string, ok func(screen string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(testkit.Bound(20 * time.Second))
	for {
		s := tm.Screen(false)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the terminal never showed %s; it shows:\n%s", what, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitText waits until the screen shows want n times.
func (tm *Term) WaitText(want string, n int) string {
	tm.t.Helper()
	return tm.WaitFor(quote(want), func(s string) bool { return strings.Count(s, want) >= n })
}

// WaitLast waits until the screen's last row (the input line) is want, after what it shows
// n times above it.
func (tm *Term) WaitLast(above string, n int, want string) string {
	tm.t.Helper()
	return tm.WaitFor(quote(above)+" then the input line "+quote(want), func(s string) bool {
		rows := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return strings.Count(s, above) >= n && strings.TrimRight(rows[len(rows)-1], " ") == strings.TrimRight(want, " ")
	})
}

func quote(s string) string { return "“" + s + "”" }

// Resize makes the terminal cols wide (the command gets SIGWINCH).
func (tm *Term) Resize(cols int) error {
	tm.mu.Lock()
	tm.cols = cols
	tm.mu.Unlock()
	return pty.Setsize(tm.ptmx, &pty.Winsize{Rows: uint16(tm.rows), Cols: uint16(cols)})
}

// Type types s on the terminal.
func (tm *Term) Type(s string) {
	tm.t.Helper()
	if _, err := tm.ptmx.Write([]byte(s)); err != nil {
		tm.t.Fatal(err)
	}
}

// Exit waits for the command to end and returns its exit status.
func (tm *Term) Exit() int {
	tm.t.Helper()
	select {
	case <-tm.done:
		// What it wrote last may still wait in the terminal.
		select {
		case <-tm.read:
		case <-testkit.After(5 * time.Second):
		}
		return tm.code
	case <-testkit.After(20 * time.Second):
		tm.t.Fatalf("the command did not end; the terminal shows:\n%s", tm.Screen(false))
		return -1
	}
}

// Golden compares got with the file testdata/screens/NAME, or writes it with -update.
func Golden(t testing.TB, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "screens", name), Normalize(got))
}

// varying are the parts of a screen that differ from run to run, each with what stands for
// it in a golden screen, of the same width (so that lines wrap the same).
var varying = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`sim-[0-9a-f]{16}`), "sim-XXXXXXXXXXXXXXXX"},
	{regexp.MustCompile(`attempt(\s+)[0-9]\b`), "attempt${1}N"},
	{regexp.MustCompile(`retrying within [0-9]s\b`), "retrying within Ns"},
	{regexp.MustCompile(`/tmp/frs[0-9a-f]{8}`), "/tmp/frsXXXXXXXX"},
}

// Normalize puts placeholders where a screen differs from run to run (session ids, attempt
// numbers).
func Normalize(s string) string {
	for _, v := range varying {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// Unwrapped is a screen's rows side by side, each as wide as the terminal (cols): a line the
// terminal wrapped reads as it was written, the spaces it left at a row's end kept.
func Unwrapped(screen string, cols int) string {
	var b strings.Builder
	for _, row := range strings.Split(screen, "\n") {
		b.WriteString(row + strings.Repeat(" ", max(0, cols-utf8.RuneCountInString(row))))
	}
	return b.String()
}

// EachScreen runs f, in parallel, at 60 and 120 columns, with and without colour; name
// ("60", "120-color", ...) names its golden screens.
func EachScreen(t *testing.T, f func(t *testing.T, cols int, color bool, name string)) {
	for _, cols := range []int{60, 120} {
		for _, color := range []bool{false, true} {
			name := fmt.Sprintf("%d", cols)
			if color {
				name += "-color"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				f(t, cols, color, name)
			})
		}
	}
}

// ColorFlag is the --color value for a screen with or without colour.
func ColorFlag(color bool) string {
	if color {
		return "always"
	}
	return "never"
}

// ReadFile returns the contents of the file name, failing the test when it cannot be read.
func ReadFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
