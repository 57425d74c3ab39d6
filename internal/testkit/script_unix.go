//go:build unix

package testkit

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func platformCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"signal": Signal,
		"gone":   Gone,
		"mkfifo": Mkfifo,
	}
}

// Signal is the testscript command `signal INT|TERM|HUP|KILL PIDFILE`: signal the process
// whose pid is in PIDFILE.
func Signal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal INT|TERM|HUP|KILL PIDFILE")
	}
	sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP, "KILL": syscall.SIGKILL}[args[0]]
	if sig == 0 {
		ts.Fatalf("unknown signal %s", args[0])
	}
	ts.Check(syscall.Kill(ReadPid(ts, args[1]), sig))
}

// Gone is the testscript command `gone PIDFILE`: the process whose pid is in PIDFILE ends (a
// hang after 10s, scaled, when it is then killed). With !, the process is still running.
func Gone(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: gone PIDFILE")
	}
	pid := ReadPid(ts, args[0])
	deadline := time.Now().Add(Bound(10 * time.Second))
	for {
		if alive(pid) == neg {
			return
		}
		if time.Now().After(deadline) {
			if neg {
				ts.Fatalf("process %d is gone", pid)
			}
			syscall.Kill(pid, syscall.SIGKILL)
			ts.Fatalf("process %d still runs after %s", pid, Bound(10*time.Second))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive says whether process pid runs. A zombie has not outlived anything: it is dead,
// waiting for its parent's wait.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			return false
		}
	}
	return true
}

// Mkfifo is the testscript command `mkfifo NAME...`: make named pipes.
func Mkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: mkfifo NAME...")
	}
	for _, a := range args {
		ts.Check(syscall.Mkfifo(ts.MkAbs(a), 0o600))
	}
}
