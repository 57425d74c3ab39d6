package testkit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// RunScripts runs the scripts of p.Dir as testscript.Run does, with what every fr script
// shares: ScriptEnv in each script's environment (after p.Setup), the [long] condition
// (Condition) unless p.Condition answers, and the commands of ScriptCmds beside p.Cmds (a
// command p.Cmds names wins).
func RunScripts(t *testing.T, p testscript.Params) {
	t.Helper()
	setup := p.Setup
	p.Setup = func(e *testscript.Env) error {
		if setup != nil {
			if err := setup(e); err != nil {
				return err
			}
		}
		ScriptEnv(e)
		return nil
	}
	if p.Condition == nil {
		p.Condition = Condition
	}
	cmds := ScriptCmds()
	for name, f := range p.Cmds {
		cmds[name] = f
	}
	p.Cmds = cmds
	testscript.Run(t, p)
}

// ScriptCmds are the script commands every fr script may use (RunScripts adds them):
//
//	waitfor FILE REGEXP          wait until FILE matches REGEXP (WaitFor)
//	waitfile FILE [REGEXP]       wait until FILE is there, not empty, and matches REGEXP (WaitFileCmd)
//	start [-closeat RE] OUT ERR CMD [ARGS...]
//	                             run CMD in the background (Start)
//	waitexit CODE                wait for the started command and check its status (WaitExit)
//	signal INT|TERM|HUP|KILL PIDFILE
//	                             signal the process whose pid is in PIDFILE (Signal, unix)
//	gone PIDFILE                 wait until that process has ended (Gone, unix)
//	mkfifo NAME...               make named pipes (Mkfifo, unix)
func ScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"waitfor":  WaitFor,
		"waitfile": WaitFileCmd,
		"start":    Start,
		"waitexit": WaitExit,
	}
	for name, f := range platformCmds() {
		cmds[name] = f
	}
	return cmds
}

// WaitFor is the testscript command `waitfor FILE REGEXP`: wait until FILE matches REGEXP
// (with !, until it stops matching), a hang after 20s (scaled). A script waits with it for
// what a command in the background has written, instead of sleeping.
func WaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: waitfor FILE REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	if b, err := WaitFile(ts.MkAbs(args[0]), re, neg, 20*time.Second); err != nil {
		ts.Fatalf("waitfor: %v; it holds:\n%s", err, b)
	}
}

// WaitFileCmd is the testscript command `waitfile FILE [REGEXP]`: wait until FILE is there
// and not empty and, when REGEXP is given, matches it; a hang after 30s (scaled).
func WaitFileCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfile FILE [REGEXP]")
	}
	var re *regexp.Regexp
	if len(args) == 2 {
		var err error
		re, err = regexp.Compile(args[1])
		ts.Check(err)
	}
	path := ts.MkAbs(args[0])
	var b []byte
	if !Until(30*time.Second, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil && len(b) > 0 && (re == nil || re.Match(b))
	}) {
		ts.Fatalf("waitfile: %s is not there (or does not match %v) after %s; it holds:\n%s", args[0], re, Bound(30*time.Second), b)
	}
}

// Condition answers a script's [long] condition (see Long): `[!long] skip` keeps a step for
// `make chaos`, `[long] env SIZE=...` sizes one up there.
func Condition(cond string) (bool, error) {
	if cond == "long" {
		return Long(), nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// QuickExit is the GORACE setting of the commands a test starts: under -race a process
// otherwise sleeps a second as it exits, and a test that runs a hundred commands waits
// minutes for nothing.
const QuickExit = "atexit_sleep_ms=0"

// ScriptEnv prepares a script's environment for the commands it runs (QuickExit, and the
// scale of the bounds); a Setup calls it.
func ScriptEnv(e *testscript.Env) {
	e.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" "+QuickExit))
	if v := os.Getenv(ScaleEnv); v != "" {
		e.Setenv(ScaleEnv, v) // for the bounds of the helpers a script runs
	}
}

// ReadPid reads the process id a command wrote to file (a script's path), for signal and gone.
func ReadPid(ts *testscript.TestScript, file string) int {
	b, err := os.ReadFile(ts.MkAbs(file))
	ts.Check(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	ts.Check(err)
	return pid
}

// StartEnv names the variables of a script's environment that a command of Start sees; the
// rest of the test's environment it does not.
var StartEnv = []string{"PATH", "HOME", "TMPDIR", "WORK", "FUSERAFT_BIN", "FRSIM_PACE",
	"FRSIM_FAULTS", "FRSIM_RECORD", "FRSIM_SCENARIO", "SLOW", "CODE", "GORACE"}

// A started command, one per script at a time (see Start and WaitExit).
type started struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

var (
	startedMu sync.Mutex
	startedBy = map[*testscript.TestScript]*started{}
)

// Start is the testscript command `start [-closeat REGEXP] OUT ERR CMD ARGS...`: start CMD
// (looked up on the script's PATH) in the background, in the script's directory with the
// variables of StartEnv, its stdout and stderr in the files OUT and ERR, so a script can
// watch them grow (waitfor) and then wait for its end (waitexit). It is killed when the
// script ends, passed or failed. With -closeat, stdout is a pipe whose reader copies lines to
// OUT and goes away after the first line that matches REGEXP, as a consumer that crashed or
// had enough.
func Start(ts *testscript.TestScript, neg bool, args []string) {
	var closeAt *regexp.Regexp
	if len(args) > 1 && args[0] == "-closeat" {
		closeAt = regexp.MustCompile(args[1])
		args = args[2:]
	}
	if neg || len(args) < 3 {
		ts.Fatalf("usage: start [-closeat REGEXP] OUT ERR CMD [ARGS...]")
	}
	bin := args[2]
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, bin); isFile(p) {
			bin = p
			break
		}
	}
	cmd := exec.Command(bin, args[3:]...)
	cmd.Dir = ts.MkAbs(".")
	for _, k := range StartEnv {
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
		go copyUntil(out, pr, closeAt)
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

// copyUntil copies lines from pr to out until one matches closeAt, then closes both.
func copyUntil(out, pr *os.File, closeAt *regexp.Regexp) {
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
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// WaitExit is the testscript command `waitexit CODE`: wait for the command of Start (a hang
// after 30s, scaled) and check its exit status.
func WaitExit(ts *testscript.TestScript, neg bool, args []string) {
	startedMu.Lock()
	st := startedBy[ts]
	delete(startedBy, ts)
	startedMu.Unlock()
	if st == nil || neg || len(args) != 1 {
		ts.Fatalf("usage: waitexit CODE, after start")
	}
	select {
	case <-st.done:
	case <-After(30 * time.Second):
		st.cmd.Process.Kill()
		<-st.done
		ts.Fatalf("the started command did not exit within %s", Bound(30*time.Second))
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
