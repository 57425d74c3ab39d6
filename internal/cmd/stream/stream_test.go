//go:build unix

package stream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/termsafetest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fr-stream": func() { os.Exit(Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
		"fr-sim":    func() { os.Exit(sim.Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("FUSERAFT_BIN", "")
			testkit.ScriptEnv(e)
			return termsafetest.Setup(e)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"termsafe": termsafetest.Cmds()["termsafe"],
			"unescape": termsafetest.Cmds()["unescape"],
			"waitfor":  testkit.WaitFor,
			"signal":   cmdSignal,
			"gone":     cmdGone,
			"mkfifo":   cmdMkfifo,
			"bigline":  cmdBigLine,
			"start":    cmdStart,
			"waitexit": cmdWaitExit,
		},
	})
}

func readPid(ts *testscript.TestScript, file string) int {
	b, err := os.ReadFile(ts.MkAbs(file))
	ts.Check(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	ts.Check(err)
	return pid
}

// signal INT|TERM|KILL PIDFILE: signal the process whose pid is in PIDFILE.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: signal INT|TERM|KILL PIDFILE")
	}
	sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL}[args[0]]
	if sig == 0 {
		ts.Fatalf("unknown signal %s", args[0])
	}
	ts.Check(syscall.Kill(readPid(ts, args[1]), sig))
}

// gone PIDFILE: the process whose pid is in PIDFILE ends (a hang after 10s, scaled).
func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	pid := readPid(ts, args[0])
	deadline := time.Now().Add(testkit.Bound(10 * time.Second))
	for {
		alive := syscall.Kill(pid, 0) == nil
		if alive {
			// A zombie has not outlived anything: it is dead, waiting for its parent's wait.
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
				if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
					alive = false
				}
			}
		}
		if alive == neg {
			return
		}
		if time.Now().After(deadline) {
			if neg {
				ts.Fatalf("process %d is gone", pid)
			}
			syscall.Kill(pid, syscall.SIGKILL)
			ts.Fatalf("process %d still runs after %s", pid, testkit.Bound(10*time.Second))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	for _, a := range args {
		ts.Check(syscall.Mkfifo(ts.MkAbs(a), 0o600))
	}
}

// bigline N FILE: write one event line with a text field N bytes long (plus a line end).
func cmdBigLine(ts *testscript.TestScript, neg bool, args []string) {
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	f, err := os.Create(ts.MkAbs(args[1]))
	ts.Check(err)
	defer f.Close()
	fmt.Fprint(f, `{"type":"tool_result","id":"c1","name":"read_file","ok":true,"output":"`)
	chunk := []byte(strings.Repeat("abcdefghij", 1<<16))
	for n > 0 {
		c := chunk
		if n < len(c) {
			c = c[:n]
		}
		f.Write(c)
		n -= len(c)
	}
	fmt.Fprint(f, "\"}\n")
}

// A started command, one per script at a time (see start and waitexit).
type started struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

var (
	startedMu sync.Mutex
	startedBy = map[*testscript.TestScript]*started{}
)

// scriptEnv is the part of a script's environment the started command sees.
var scriptEnv = []string{"PATH", "HOME", "TMPDIR", "WORK", "FUSERAFT_BIN", "FRSIM_PACE",
	"FRSIM_FAULTS", "FRSIM_RECORD", "FRSIM_SCENARIO", "SLOW", "CODE", "GORACE"}

// start [-closeat REGEXP] OUT ERR CMD ARGS...: start CMD in the background with stdout and
// stderr in files, so a script can watch them grow. It is killed when the script ends, passed
// or failed. With -closeat, stdout is a pipe whose reader copies lines to OUT and goes away
// after the first line that matches REGEXP, as a consumer that crashed or had enough.
func cmdStart(ts *testscript.TestScript, neg bool, args []string) {
	var closeAt *regexp.Regexp
	if len(args) > 1 && args[0] == "-closeat" {
		closeAt = regexp.MustCompile(args[1])
		args = args[2:]
	}
	if len(args) < 3 {
		ts.Fatalf("usage: start [-closeat REGEXP] OUT ERR CMD [ARGS...]")
	}
	bin := args[2]
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, bin); fileExists(p) {
			bin = p
			break
		}
	}
	cmd := exec.Command(bin, args[3:]...)
	cmd.Dir = ts.MkAbs(".")
	for _, k := range scriptEnv {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	out, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	errf, err := os.Create(ts.MkAbs(args[1]))
	ts.Check(err)
	cmd.Stdout, cmd.Stderr = out, errf
	var pr *os.File
	if closeAt != nil {
		var pw *os.File
		pr, pw, err = os.Pipe()
		ts.Check(err)
		defer pw.Close()
		cmd.Stdout = pw
	}
	ts.Check(cmd.Start())
	errf.Close()
	if pr != nil {
		go func() {
			defer out.Close()
			defer pr.Close()
			sc := bufio.NewScanner(pr)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				fmt.Fprintf(out, "%s\n", sc.Bytes())
				if closeAt.Match(sc.Bytes()) {
					return
				}
			}
		}()
	} else {
		out.Close()
	}
	st := &started{cmd: cmd, done: make(chan struct{})}
	go func() { st.err = cmd.Wait(); close(st.done) }()
	startedMu.Lock()
	startedBy[ts] = st
	startedMu.Unlock()
	ts.Defer(func() {
		select {
		case <-st.done:
		default:
			cmd.Process.Kill()
			<-st.done
		}
	})
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// waitexit CODE: wait for the started command (a hang after 30s, scaled) and check its exit
// status.
func cmdWaitExit(ts *testscript.TestScript, neg bool, args []string) {
	startedMu.Lock()
	st := startedBy[ts]
	delete(startedBy, ts)
	startedMu.Unlock()
	if st == nil || len(args) != 1 {
		ts.Fatalf("usage: waitexit CODE, after start")
	}
	select {
	case <-st.done:
	case <-testkit.After(30 * time.Second):
		st.cmd.Process.Kill()
		<-st.done
		ts.Fatalf("the started command did not exit within %s", testkit.Bound(30*time.Second))
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(st.err, &ee) {
		code = ee.ExitCode()
	} else if st.err != nil {
		ts.Fatalf("%v", st.err)
	}
	if strconv.Itoa(code) != args[0] {
		ts.Fatalf("exit status %d, want %s", code, args[0])
	}
}
