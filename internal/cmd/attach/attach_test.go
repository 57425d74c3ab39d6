package attach_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/cmd/attach"
	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/termsafetest"
	"github.com/fuseraft/fr/pkg/wire"
)

// commands run in process-like fashion by the scripts.
var commands map[string]func() int

func init() {
	commands = map[string]func() int{
		"fr-attach":     func() int { return attach.Run(context.Background(), cmdutil.OSStreams(), os.Args) },
		"fr-sim":        func() int { return sim.Run(context.Background(), cmdutil.OSStreams(), os.Args) },
		"attach-answer": attachAnswer,
		"expect-exit":   expectExit,
		"attach-head":   attachHead,
		"attach-slow":   attachSlow,
	}
}

func TestMain(m *testing.M) {
	main := map[string]func(){}
	for name, f := range commands {
		main[name] = func() { os.Exit(f()) }
	}
	testscript.Main(m, main)
}

func TestScripts(t *testing.T) {
	var mu sync.Mutex
	var dirs []string
	// Removed after every script and its background daemons have ended.
	t.Cleanup(func() {
		for _, d := range dirs {
			os.RemoveAll(d)
		}
	})
	testkit.RunScripts(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			// AF_UNIX paths are short; $WORK can be long.
			dir, err := os.MkdirTemp("/tmp", "fra")
			if err != nil {
				return err
			}
			mu.Lock()
			dirs = append(dirs, dir)
			mu.Unlock()
			env.Setenv("SHORT", dir)
			env.Setenv("FUSERAFT_HOME", dir+"/home")
			env.Setenv("FUSERAFT_SERVE_TOKEN", "")
			// The scripts' serve tasks; a script unsets it for the embedded default.
			sc, err := os.ReadFile("testdata/serve.yaml")
			if err != nil {
				return err
			}
			if err := os.WriteFile(env.WorkDir+"/serve.yaml", sc, 0o644); err != nil {
				return err
			}
			env.Setenv("FRSIM_SCENARIO", env.WorkDir+"/serve.yaml")
			return termsafetest.Setup(env)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"termsafe":   termsafetest.Cmds()["termsafe"],
			"readyenv":   cmdReadyEnv,
			"countlines": cmdCountLines,
			"writefifo":  cmdWriteFIFO,
		},
	})
}

// readyenv FILE: wait for fr-sim serve's ready file and set $SOCK, $URL and $DAEMON_PID.
func cmdReadyEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: readyenv FILE")
	}
	testkit.WaitFileCmd(ts, false, args)
	var r struct {
		PID    int    `json:"pid"`
		Socket string `json:"socket"`
		URL    string `json:"url"`
	}
	b, _ := os.ReadFile(ts.MkAbs(args[0]))
	if err := json.Unmarshal(b, &r); err != nil {
		ts.Fatalf("ready file: %v", err)
	}
	ts.Setenv("SOCK", r.Socket)
	ts.Setenv("URL", r.URL)
	ts.Setenv("DAEMON_PID", strconv.Itoa(r.PID))
	if i := strings.LastIndex(r.URL, ":"); i > 0 {
		ts.Setenv("PORT", strings.TrimSuffix(r.URL[i+1:], "/attach"))
	}
}

// writefifo FIFO LINE...: open FIFO as a writer (waiting up to 30s for its reader), write
// the lines, close it.
func cmdWriteFIFO(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: writefifo FIFO LINE...")
	}
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY, 0)
		if err != nil {
			done <- err
			return
		}
		for _, l := range args[1:] {
			f.WriteString(l + "\n")
		}
		done <- f.Close()
	}()
	select {
	case err := <-done:
		ts.Check(err)
	case <-testkit.After(30 * time.Second):
		ts.Fatalf("nobody opened %s for reading", args[0])
	}
}

// countlines FILE REGEXP N: exactly N lines of FILE match REGEXP.
func cmdCountLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: countlines FILE REGEXP N")
	}
	re := regexp.MustCompile(args[1])
	n := 0
	for _, l := range strings.Split(ts.ReadFile(args[0]), "\n") {
		if re.MatchString(l) {
			n++
		}
	}
	want, _ := strconv.Atoi(args[2])
	if (n == want) == neg {
		ts.Fatalf("%d lines of %s match %q, want %d", n, args[0], args[1], want)
	}
}

// expect-exit N PROG ARGS...: run a registered command and succeed when it exits with N.
func expectExit() int {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: expect-exit N PROG ARGS...")
		return 2
	}
	want, _ := strconv.Atoi(os.Args[1])
	f := commands[os.Args[2]]
	if f == nil {
		fmt.Fprintf(os.Stderr, "expect-exit: unknown command %s\n", os.Args[2])
		return 2
	}
	os.Args = os.Args[2:]
	if got := f(); got != want {
		fmt.Fprintf(os.Stderr, "expect-exit: exit status %d, want %d\n", got, want)
		return 1
	}
	return 0
}

// attach-answer [-deny] [-hold FILE] [-log FILE] FR-ATTACH-ARGS...: run fr-attach with an
// answerer on its other end, as `fr-attach --input fifo | fr-approve > fifo` would: every
// approval_request on its stdout is answered on its input (after FILE exists, with -hold).
// Every output line is copied to stdout and, at once, to the -log file.
func attachAnswer() int {
	args := os.Args[1:]
	approve, hold, logPath := true, "", ""
	for len(args) > 0 {
		switch args[0] {
		case "-deny":
			approve, args = false, args[1:]
			continue
		case "-hold":
			hold, args = args[1], args[2:]
			continue
		case "-log":
			logPath, args = args[1], args[2:]
			continue
		}
		break
	}
	if len(args) > 0 && args[0] == "fr-attach" {
		args = args[1:]
	}
	var logf *os.File
	if logPath != "" {
		var err error
		if logf, err = os.Create(logPath); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer logf.Close()
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	code := make(chan int, 1)
	go func() {
		c := attach.Run(context.Background(), cmdutil.Streams{In: inR, Out: outW, Err: os.Stderr, Getenv: os.Getenv},
			append([]string{"fr-attach"}, args...))
		outW.Close()
		code <- c
	}()
	prompts := make(chan struct{}, 64)
	go func() {
		for range prompts {
			if hold != "" {
				for deadline := time.Now().Add(testkit.Bound(30 * time.Second)); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					if _, err := os.Stat(hold); err == nil {
						break
					}
				}
			}
			inW.Write(append(wire.ApprovalResponse(approve), '\n'))
		}
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		os.Stdout.Write(append(line, '\n'))
		if logf != nil {
			logf.Write(append(line, '\n'))
		}
		if t, _ := wire.TopLevelString(line, "type"); t == wire.TypeApproval {
			prompts <- struct{}{}
		}
	}
	c := <-code
	inW.Close()
	return c
}

// attach-head [-within DUR] N fr-attach ARGS...: run fr-attach with its stdout a real pipe, as
// `fr-attach ARGS | head -N` does: copy the first N lines to stdout, close the pipe's read end,
// and exit with fr-attach's status; 99 when fr-attach has not ended DUR (default 20s, scaled)
// later.
func attachHead() int {
	args := os.Args[1:]
	within := 20 * time.Second
	if len(args) > 1 && args[0] == "-within" {
		d, err := time.ParseDuration(args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		within, args = d, args[2:]
	}
	if len(args) < 2 || args[1] != "fr-attach" {
		fmt.Fprintln(os.Stderr, "usage: attach-head [-within DUR] N fr-attach ARGS...")
		return 2
	}
	n, _ := strconv.Atoi(args[0])
	pr, pw, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	code := make(chan int, 1)
	go func() {
		c := attach.Run(context.Background(), cmdutil.Streams{In: os.Stdin, Out: pw, Err: os.Stderr, Getenv: os.Getenv},
			append([]string{"fr-attach"}, args[2:]...))
		pw.Close()
		code <- c
	}()
	br := bufio.NewReader(pr)
	for i := 0; i < n; i++ {
		line, err := br.ReadBytes('\n')
		os.Stdout.Write(line)
		if err != nil {
			break
		}
	}
	pr.Close()
	select {
	case c := <-code:
		return c
	case <-testkit.After(within):
		fmt.Fprintf(os.Stderr, "attach-head: fr-attach still running %s after its stdout was closed\n", testkit.Bound(within))
		return 99
	}
}

// attach-slow [-stop N] [-pause DUR] [-within DUR] fr-attach ARGS...: run fr-attach with its
// stdout a real pipe and a slow reader on the other end. With -stop N the reader reads N lines
// and then stops reading, as `fr-attach | (sleep 1000)` does, keeping the pipe open until
// fr-attach has ended; with -pause it reads every line, pausing DUR after each 100. The lines
// read are copied to stdout. It exits with fr-attach's status; 99 when fr-attach has not ended
// within DUR (default 30s).
func attachSlow() int {
	args := os.Args[1:]
	stop, pause, within := -1, time.Duration(0), 30*time.Second
	for len(args) > 1 && strings.HasPrefix(args[0], "-") {
		var err error
		switch args[0] {
		case "-stop":
			stop, err = strconv.Atoi(args[1])
		case "-pause":
			pause, err = time.ParseDuration(args[1])
		case "-within":
			within, err = time.ParseDuration(args[1])
		default:
			err = fmt.Errorf("unknown option %s", args[0])
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "attach-slow:", err)
			return 2
		}
		args = args[2:]
	}
	if len(args) < 1 || args[0] != "fr-attach" {
		fmt.Fprintln(os.Stderr, "usage: attach-slow [-stop N] [-pause DUR] [-within DUR] fr-attach ARGS...")
		return 2
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	code := make(chan int, 1)
	go func() {
		c := attach.Run(context.Background(), cmdutil.Streams{In: os.Stdin, Out: pw, Err: os.Stderr, Getenv: os.Getenv},
			append([]string{"fr-attach"}, args[1:]...))
		pw.Close()
		code <- c
	}()
	read := make(chan struct{})
	go func() {
		defer close(read)
		br := bufio.NewReader(pr)
		for i := 0; stop < 0 || i < stop; i++ {
			line, err := br.ReadBytes('\n')
			os.Stdout.Write(line)
			if err != nil {
				return
			}
			if pause > 0 && i%100 == 99 {
				time.Sleep(pause)
			}
		}
	}()
	defer pr.Close()
	select {
	case c := <-code:
		if stop < 0 {
			<-read
		}
		return c
	case <-testkit.After(within):
		fmt.Fprintf(os.Stderr, "attach-slow: fr-attach still running after %s\n", testkit.Bound(within))
		return 99
	}
}
