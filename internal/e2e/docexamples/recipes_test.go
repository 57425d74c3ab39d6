package docexamples

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/cmd/approve"
	"github.com/fuseraft/fr/internal/cmd/attach"
	"github.com/fuseraft/fr/internal/cmd/dispatch"
	"github.com/fuseraft/fr/internal/cmd/filter"
	"github.com/fuseraft/fr/internal/cmd/ls"
	"github.com/fuseraft/fr/internal/cmd/report"
	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmd/stream"
	"github.com/fuseraft/fr/internal/cmd/worker"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

var commands = map[string]func(context.Context, cmdutil.Streams, []string) int{
	"fr-ls":       ls.Run,
	"fr-stream":   stream.Run,
	"fr-attach":   attach.Run,
	"fr-approve":  approve.Run,
	"fr-dispatch": dispatch.Run,
	"fr-filter":   filter.Run,
	"fr-sim":      sim.Run,
	"fr-report":   report.Run,
	"fr-worker":   worker.Run,
}

func TestMain(m *testing.M) {
	main := map[string]func(){}
	for name, run := range commands {
		main[name] = func() { os.Exit(run(context.Background(), cmdutil.OSStreams(), os.Args)) }
	}
	testscript.Main(m, main)
}

// recipe is one numbered section of the cookbook and its ```sh blocks, in order.
type recipe struct {
	N      int
	Title  string
	Blocks []string
}

var headingRE = regexp.MustCompile(`^## (\d+)\. (.+)$`)

// parseCookbook returns the recipes of a cookbook, keyed by number. Code blocks fenced as
// anything but ```sh (a crontab line, say) are not run.
func parseCookbook(text string) (map[int]*recipe, error) {
	recipes := map[int]*recipe{}
	var cur *recipe
	var block *strings.Builder
	fence := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		if fence != "" {
			if strings.TrimSpace(l) == "```" {
				if block != nil {
					cur.Blocks = append(cur.Blocks, block.String())
					block = nil
				}
				fence = ""
				continue
			}
			if block != nil {
				block.WriteString(l + "\n")
			}
			continue
		}
		if strings.HasPrefix(l, "```") {
			fence = strings.TrimPrefix(l, "```")
			if fence == "" {
				fence = "text"
			}
			if fence == "sh" {
				if cur == nil {
					return nil, fmt.Errorf("line %d: a sh block before the first recipe", line)
				}
				block = &strings.Builder{}
			}
			continue
		}
		if strings.HasPrefix(l, "## ") {
			m := headingRE.FindStringSubmatch(l)
			if m == nil {
				cur = nil
				continue
			}
			n, _ := strconv.Atoi(m[1])
			if recipes[n] != nil {
				return nil, fmt.Errorf("line %d: recipe %d twice", line, n)
			}
			cur = &recipe{N: n, Title: m[2]}
			recipes[n] = cur
		}
	}
	if fence != "" {
		return nil, fmt.Errorf("a code block is not closed")
	}
	return recipes, sc.Err()
}

func readCookbook(t *testing.T) map[int]*recipe {
	t.Helper()
	b, err := os.ReadFile("../../../docs/cookbook.md")
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseCookbook(string(b))
	if err != nil {
		t.Fatalf("docs/cookbook.md: %v", err)
	}
	return r
}

// scriptName is the file a recipe's block is written to in $WORK: recipe-N.sh for the first,
// recipe-N-2.sh for the second, and so on.
func scriptName(n, i int) string {
	if i == 0 {
		return fmt.Sprintf("recipe-%d.sh", n)
	}
	return fmt.Sprintf("recipe-%d-%d.sh", n, i+1)
}

func TestParseCookbook(t *testing.T) {
	doc := "# t\n\n## 1. One\n\n```sh\necho a\n```\n\n```crontab\n* * * * * x\n```\n\n```\nplain\n```\n" +
		"\n## Notes\n\n```sh\necho not a recipe\n```\n\n## 2. Two\n```sh\necho b\necho c\n```\n```sh\necho d\n```\n"
	_, err := parseCookbook(doc)
	if err == nil {
		t.Fatal("a sh block outside a recipe was accepted")
	}
	doc = strings.Replace(doc, "## Notes\n\n```sh\necho not a recipe\n```\n", "", 1)
	got, err := parseCookbook(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]string{1: {"echo a\n"}, 2: {"echo b\necho c\n", "echo d\n"}}
	if len(got) != len(want) {
		t.Fatalf("got %d recipes, want %d", len(got), len(want))
	}
	for n, blocks := range want {
		if r := got[n]; r == nil || strings.Join(r.Blocks, "|") != strings.Join(blocks, "|") {
			t.Errorf("recipe %d: got %+v, want blocks %q", n, got[n], blocks)
		}
	}
	if _, err := parseCookbook("## 1. A\n```sh\necho\n"); err == nil {
		t.Error("an unclosed block was accepted")
	}
	if _, err := parseCookbook("## 1. A\n## 1. B\n"); err == nil {
		t.Error("a repeated recipe number was accepted")
	}
}

// Every recipe has shell to run and a script that runs it, and every script a recipe.
func TestEveryRecipeIsTested(t *testing.T) {
	recipes := readCookbook(t)
	for n := 1; n <= 7; n++ {
		if recipes[n] == nil {
			t.Errorf("docs/cookbook.md has no recipe %d", n)
		}
	}
	for n, r := range recipes {
		if len(r.Blocks) == 0 {
			t.Errorf("recipe %d (%s) has no ```sh block", n, r.Title)
		}
		if _, err := os.Stat(fmt.Sprintf("testdata/script/recipe-%d.txtar", n)); err != nil {
			t.Errorf("recipe %d (%s) has no test: %v", n, r.Title, err)
		}
	}
	files, _ := filepath.Glob("testdata/script/recipe-*.txtar")
	for _, f := range files {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "recipe-"), ".txtar"))
		if err != nil || recipes[n] == nil {
			t.Errorf("%s tests no recipe of docs/cookbook.md", f)
		}
	}
}

// TestScripts runs the documents' examples as a user runs them: with the commands built
// without the race detector (the commands' own tests run them under it).
func TestScripts(t *testing.T) {
	testkit.WithoutRace(t)
	recipes := readCookbook(t)
	readme := readReadme(t)
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var dirs []string
	t.Cleanup(func() {
		for _, d := range dirs {
			os.RemoveAll(d)
		}
	})
	testkit.RunScripts(t, testscript.Params{
		Dir: "testdata/script",
		// A command still running then is stopped, so a hang fails the script instead of the
		// whole test binary. Every script shares it, running side by side (the demo, the
		// recipes, the README's and docs/' examples): under the race detector on a busy 2-core
		// machine they take minutes together without a hang.
		Deadline: time.Now().Add(testkit.Bound(6 * time.Minute)),
		Setup: func(env *testscript.Env) error {
			// AF_UNIX paths are short; $WORK can be long.
			short, err := os.MkdirTemp("/tmp", "frr")
			if err != nil {
				return err
			}
			mu.Lock()
			dirs = append(dirs, short)
			mu.Unlock()
			for n, r := range recipes {
				for i, b := range r.Blocks {
					if err := os.WriteFile(filepath.Join(env.WorkDir, scriptName(n, i)), []byte(b), 0o755); err != nil {
						return err
					}
				}
			}
			for _, b := range readme {
				if b.Name != "" {
					if err := os.WriteFile(filepath.Join(env.WorkDir, readmeScript(b.Name)), []byte(b.Text), 0o755); err != nil {
						return err
					}
				}
			}
			for _, dir := range []string{"examples", "demo"} {
				if err := copyDir(filepath.Join(root, dir), filepath.Join(env.WorkDir, dir)); err != nil {
					return err
				}
			}
			if err := os.Mkdir(filepath.Join(env.WorkDir, "bin"), 0o755); err != nil {
				return err
			}
			if sim, err := exec.LookPath("fr-sim"); err == nil {
				env.Setenv("SHIMS", filepath.Dir(sim)) // where the commands of TestMain are
			}
			env.Setenv("SHORT", short)
			env.Setenv("FUSERAFT_HOME", short+"/home")
			env.Setenv("PATH", filepath.Join(env.WorkDir, "bin")+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("FR_RECIPES_MARK", filepath.Base(short))
			for _, k := range []string{"FUSERAFT_BIN", "FUSERAFT_SERVE_TOKEN", "FRSIM_SCENARIO", "FRSIM_FAULTS", "FRSIM_RECORD", "FRSIM_PACE", "NO_COLOR", "TASK", "MAILTO", "CUTOFF",
				"FR_DEMO_TASK", "FR_DEMO_POLICY", "FR_DEMO_SCENARIO", "FUSERAFT_MCP_URL", "FR_NATS_URL", "CI_RUN_ID", "GITHUB_STEP_SUMMARY", "DEPLOY_TOKEN"} {
				env.Setenv(k, "")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfile":  testkit.WaitFileCmd,
			"mkfifo":    testkit.Mkfifo,
			"ptyperson": cmdPTYPerson,
			"pgstart":   cmdPGStart,
			"pgwait":    cmdPGWait,
			"pgsignal":  cmdPGSignal,
			"noprocs":   cmdNoProcs,
			"ptyrun":    cmdPTYRun,
		},
	})
}

func copyDir(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// noprocs: no process started by this script is still running (each carries
// FR_RECIPES_MARK in its environment); waits up to 5s for the last ones to go.
func cmdNoProcs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: noprocs")
	}
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		ts.Logf("no /proc: cannot look for processes left running")
		return
	}
	mark := []byte("FR_RECIPES_MARK=" + ts.Getenv("FR_RECIPES_MARK") + "\x00")
	self := os.Getpid()
	deadline := time.Now().Add(testkit.Bound(testkit.Hang))
	for {
		var left []string
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range procs {
			pid, _ := strconv.Atoi(filepath.Base(p))
			if pid == self {
				continue
			}
			env, err := os.ReadFile(p + "/environ")
			if err != nil || !bytes.Contains(env, mark) {
				continue
			}
			stat, _ := os.ReadFile(p + "/stat")
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
				continue // a zombie about to be reaped
			}
			cmd, _ := os.ReadFile(p + "/cmdline")
			left = append(left, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(bytes.TrimRight(cmd, "\x00"), []byte{0}, []byte{' '})))
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			sort.Strings(left)
			ts.Fatalf("processes left running:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ptyrun LOG UNTIL LINE -- COMMAND [ARGS...]: run COMMAND with its stdin, stdout and stderr on a
// pseudo-terminal (its controlling terminal), as a person would in a terminal window: type LINE,
// wait (up to 20s) until what the terminal shows matches the regexp UNTIL, then type Ctrl-D and
// wait (up to 20s) for the command to end. The screen is written to LOG.
func cmdPTYRun(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 5 || args[3] != "--" {
		ts.Fatalf("usage: ptyrun LOG UNTIL LINE -- COMMAND [ARGS...]")
	}
	until := regexp.MustCompile(args[1])
	t := startOnPTY(ts, args[0], args[4:])
	if _, err := t.ptmx.Write([]byte(args[2] + "\n")); err != nil {
		t.fail("typing: %v", err)
	}
	deadline := time.Now().Add(testkit.Bound(20 * time.Second))
	for !until.MatchString(t.show()) {
		if time.Now().After(deadline) {
			t.fail("the terminal never showed %q; it shows:\n%s", args[1], t.show())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.ptmx.Write([]byte{4})
	t.end(neg)
}

// ptyperson LOG ANSWERS -- COMMAND [ARGS...]: run COMMAND on a pseudo-terminal, as
// cmdPTYRun does, with a person at it: each time "allow? [y/N]" appears, the next of the
// comma-separated ANSWERS is typed. Waits (up to 20s) for COMMAND to end; LOG gets the screen.
func cmdPTYPerson(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 4 || args[2] != "--" {
		ts.Fatalf("usage: ptyperson LOG ANSWERS -- COMMAND [ARGS...]")
	}
	answers := strings.Split(args[1], ",")
	t := startOnPTY(ts, args[0], args[3:])
	go func() {
		asked := 0
		for {
			select {
			case <-t.done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			for n := strings.Count(t.show(), "allow? [y/N]"); asked < n; asked++ {
				if asked < len(answers) {
					t.ptmx.Write([]byte(answers[asked] + "\n"))
				}
			}
		}
	}()
	t.end(neg)
}

// ptyCmd is a command running on a pseudo-terminal and what the terminal has shown.
type ptyCmd struct {
	ts      *testscript.TestScript
	log     string
	name    string
	cmd     *exec.Cmd
	ptmx    *os.File
	mu      sync.Mutex
	screen  bytes.Buffer
	exited  chan error
	done    chan struct{}
	drained chan struct{} // closed once the terminal has nothing more to read
}

func startOnPTY(ts *testscript.TestScript, log string, argv []string) *ptyCmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = append(scriptEnv(ts), "TERM=xterm")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		ts.Fatalf("no pseudo-terminal: %v", err)
	}
	t := &ptyCmd{ts: ts, log: ts.MkAbs(log), name: argv[0], cmd: cmd, ptmx: ptmx,
		exited: make(chan error, 1), done: make(chan struct{}), drained: make(chan struct{})}
	go func() {
		defer close(t.drained)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			t.mu.Lock()
			t.screen.Write(b[:n])
			t.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { t.exited <- cmd.Wait() }()
	return t
}

func (t *ptyCmd) show() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.screen.String()
}

// fail stops the command, keeps the screen in the log and fails the script.
func (t *ptyCmd) fail(format string, a ...any) {
	syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL) // its session's process group
	t.cmd.Process.Kill()
	<-t.exited
	close(t.done)
	t.ptmx.Close()
	os.WriteFile(t.log, []byte(t.show()), 0o644)
	t.ts.Fatalf(format, a...)
}

// end waits (up to 20s) for the command to end and checks its status against neg.
func (t *ptyCmd) end(neg bool) {
	var err error
	select {
	case err = <-t.exited:
	case <-testkit.After(20 * time.Second):
		t.fail("%s did not end; the terminal shows:\n%s", t.name, t.show())
	}
	close(t.done)
	// What it wrote last is read once every end of the terminal it held is closed.
	select {
	case <-t.drained:
	case <-testkit.After(5 * time.Second):
	}
	t.ptmx.Close()
	t.ts.Check(os.WriteFile(t.log, []byte(t.show()), 0o644))
	if neg && err == nil {
		t.ts.Fatalf("%s: unexpected success", t.name)
	}
	if !neg && err != nil {
		t.ts.Fatalf("%s: %v; the terminal shows:\n%s", t.name, err, t.show())
	}
}

// pgstart NAME COMMAND [ARGS...]: start COMMAND in the background in a process group of its
// own, its stdout and stderr going to NAME.stdout and NAME.stderr. Whatever of the group is
// still running when the script ends is killed, so a failed script never leaves a pipeline
// waiting for a daemon that is gone.
func cmdPGStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: pgstart NAME COMMAND [ARGS...]")
	}
	name := args[0]
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = scriptEnv(ts)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := os.Create(ts.MkAbs(name + ".stdout"))
	ts.Check(err)
	errf, err := os.Create(ts.MkAbs(name + ".stderr"))
	ts.Check(err)
	cmd.Stdout, cmd.Stderr = out, errf
	ts.Check(cmd.Start())
	bg := &pgCmd{cmd: cmd, exited: make(chan error, 1)}
	go func() {
		bg.exited <- cmd.Wait()
		out.Close()
		errf.Close()
	}()
	pgMu.Lock()
	pgCmds[ts.Getenv("WORK")+"\x00"+name] = bg
	pgMu.Unlock()
	ts.Defer(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
}

// pgwait NAME [STATUS]: wait (up to 30s) for a command of pgstart to end; it must succeed
// (or, with !, fail; with STATUS, end with that exit status).
func cmdPGWait(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: pgwait NAME [STATUS]")
	}
	bg := pgLookup(ts, args[0])
	var err error
	select {
	case err = <-bg.exited:
	case <-testkit.After(30 * time.Second):
		syscall.Kill(-bg.cmd.Process.Pid, syscall.SIGKILL)
		ts.Fatalf("%s did not end within 30s", args[0])
	}
	if len(args) == 2 {
		if got := bg.cmd.ProcessState.ExitCode(); strconv.Itoa(got) != args[1] {
			ts.Fatalf("%s: exit status %d, want %s", args[0], got, args[1])
		}
		return
	}
	if neg && err == nil {
		ts.Fatalf("%s: unexpected success", args[0])
	}
	if !neg && err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
}

// pgsignal NAME SIGNAL [group]: send SIGNAL (INT, TERM, HUP) to the command of pgstart, and
// only to it, as a CI runner's timeout or a kill(1) would; with "group", to its whole process
// group, as Ctrl-C on a terminal does.
func cmdPGSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 || (len(args) == 3 && args[2] != "group") {
		ts.Fatalf("usage: pgsignal NAME INT|TERM|HUP [group]")
	}
	sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP}[args[1]]
	if sig == 0 {
		ts.Fatalf("pgsignal: unknown signal %s", args[1])
	}
	pid := pgLookup(ts, args[0]).cmd.Process.Pid
	if len(args) == 3 {
		pid = -pid
	}
	ts.Check(syscall.Kill(pid, sig))
}

func pgLookup(ts *testscript.TestScript, name string) *pgCmd {
	pgMu.Lock()
	defer pgMu.Unlock()
	bg := pgCmds[ts.Getenv("WORK")+"\x00"+name]
	if bg == nil {
		ts.Fatalf("no command %s started by pgstart", name)
	}
	return bg
}

type pgCmd struct {
	cmd    *exec.Cmd
	exited chan error
}

var (
	pgMu   sync.Mutex
	pgCmds = map[string]*pgCmd{}
)

// scriptEnv is the environment a command of the script would get.
func scriptEnv(ts *testscript.TestScript) []string {
	env := os.Environ()
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "WORK", "SHORT", "FUSERAFT_HOME", "FUSERAFT_BIN",
		"FRSIM_SCENARIO", "FRSIM_FAULTS", "FRSIM_RECORD", "FRSIM_PACE", "FUSERAFT_SERVE_TOKEN", "GORACE",
		"FR_RECIPES_MARK", "NO_COLOR", "TASK", "MAILTO", "CUTOFF", "FR_DEMO_TASK", "FR_DEMO_POLICY", "FR_DEMO_SCENARIO", "SHIMS", "GITHUB_STEP_SUMMARY", "DEPLOY_TOKEN"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

// The cookbook parser never panics, and what it returns is in its input: each recipe's title
// on a heading line and each block's lines, in order.
func FuzzParseCookbook(f *testing.F) {
	f.Add("## 1. A\n```sh\necho a\n```\n")
	f.Add("# t\n## 2. B\n```crontab\nx\n```\n```sh\n```\n## 3. C\n")
	f.Add("```sh\n")
	f.Add("## 1. A\n```\n## 2. B\n```\n")
	if b, err := os.ReadFile("../../../docs/cookbook.md"); err == nil {
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, doc string) {
		recipes, err := parseCookbook(doc)
		if err != nil {
			return
		}
		// Lines are read as a text file's lines: a CRLF line end is a line end, not part of it.
		doc = strings.ReplaceAll(doc, "\r\n", "\n")
		for n, r := range recipes {
			if r.N != n || !strings.Contains(doc, ". "+r.Title) {
				t.Errorf("recipe %d: title %q is not in the input", n, r.Title)
			}
			for _, b := range r.Blocks {
				if b != "" && !strings.Contains(doc, "```sh\n"+b+"```") && !strings.Contains(doc, "```sh\n"+b) {
					t.Errorf("recipe %d: block %q is not in the input", n, b)
				}
			}
		}
	})
}
