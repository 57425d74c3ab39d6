//go:build linux

package sim

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestKillDiesOfTheSignal checks that every signal FRSIM_KILL documents ends fr-sim by that
// signal, as a real process killed from outside would end: no traceback, no exit code.
func TestKillDiesOfTheSignal(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]syscall.Signal{
		"KILL": syscall.SIGKILL, "TERM": syscall.SIGTERM, "SEGV": syscall.SIGSEGV, "ABRT": syscall.SIGABRT,
		"INT": syscall.SIGINT, "HUP": syscall.SIGHUP, "PIPE": syscall.SIGPIPE, "SIGPIPE": syscall.SIGPIPE,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(exe, "sessions", "--json")
			cmd.Args[0] = "fr-sim" // TestMain runs the command named by argv[0]
			cmd.Env = append(os.Environ(), "FRSIM_KILL="+name, "FRSIM_SCENARIO=", "FRSIM_FAULTS=", "GORACE=atexit_sleep_ms=0")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("want death by %v, got %v", want, err)
			}
			ws := ee.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != want {
				t.Fatalf("want death by %v, got %v (exit %d); stderr:\n%s", want, ws, ws.ExitStatus(), stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), `{"protocolVersion":1,`) || strings.HasSuffix(stdout.String(), "]}\n") {
				t.Errorf("want half an envelope, got %q", stdout.String())
			}
			if strings.Contains(stderr.String(), "goroutine") {
				t.Errorf("a traceback on stderr:\n%s", stderr.String())
			}
		})
	}
}
