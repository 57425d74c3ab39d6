package ls

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/golden"
)

// onTerminal runs fr-ls with args on a real terminal cols wide and returns what the terminal
// showed (stdout and stderr both, as a person sees them).
func onTerminal(t *testing.T, cols uint16, color bool, args ...string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	noColor := "1"
	if color {
		noColor = ""
	}
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", asFrLs+"=1", "TERM=xterm", "NO_COLOR="+noColor,
		"FUSERAFT_BIN="+self, "TEST_NOW=2026-11-30T12:00:00Z", "COLUMNS=")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: cols})
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer f.Close()
	done := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(f) // ends with EIO when the child closes the terminal
		done <- b
	}()
	var out []byte
	select {
	case out = <-done:
	case <-testkit.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("fr-ls on a terminal did not finish")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fr-ls: %v\n%s", err, out)
	}
	return strings.ReplaceAll(string(out), "\r\n", "\n")
}

// On a terminal a table of sessions shows short ids (the shortest unique prefix, 8 characters
// at least) and drops the least useful columns rather than squeezing every one to a stub.
func TestTerminalSessionsGolden(t *testing.T) {
	for _, c := range []struct {
		golden string
		cols   uint16
		color  bool
	}{
		{"sessions.w60.golden", 60, false},
		{"sessions.w120.golden", 120, false},
		{"sessions.w60.color.golden", 60, true},
		{"sessions.w120.color.golden", 120, true},
		{"sessions.w32.golden", 32, false},
	} {
		t.Run(c.golden, func(t *testing.T) {
			got := onTerminal(t, c.cols, c.color, "sessions", "--all")
			for _, l := range strings.Split(stripANSI(got), "\n") {
				if strings.HasPrefix(l, "fr-ls: ") {
					continue // a note, wrapped by the terminal
				}
				if w := len([]rune(l)); w > int(c.cols) {
					t.Errorf("a line of %d columns: %q", w, l)
				}
				if strings.Contains(l, "  ") {
					for _, cell := range regexp.MustCompile(`\s{2,}`).Split(l, -1) {
						if strings.HasSuffix(cell, "…") && len([]rune(cell)) < 5 {
							t.Errorf("a column squeezed to a stub: %q in %q", cell, l)
						}
					}
				}
			}
			golden.Check(t, filepath.Join("testdata", c.golden), got)
		})
	}
	// The full ids are still there for a script.
	out := onTerminal(t, 60, false, "sessions", "--all", "--format", "tsv", "--fields", "sessionId")
	if !strings.Contains(out, "3a4b5c6d-7f80-4192-a3b4-c5d6e7f8090a\n") {
		t.Errorf("tsv does not keep the whole id:\n%s", out)
	}
}

// An empty list on a terminal says so, on stderr, and exits 0 (as gh does).
func TestTerminalEmptyList(t *testing.T) {
	got := onTerminal(t, 60, false, "sessions", "--project", "/nowhere")
	if got != "fr-ls: no sessions\n" {
		t.Errorf("the terminal shows %q, want %q", got, "fr-ls: no sessions\n")
	}
}
