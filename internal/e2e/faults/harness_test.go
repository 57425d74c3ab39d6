package faults

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/testkit"
)

// bin holds the commands under test, built once for the whole suite.
var bin string

// full is set by `make chaos`: the long runs. `make test` runs each fault once, small.
var full = os.Getenv("FR_CHAOS") == "full"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fr-chaos-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	build := exec.Command("go", "build", "-o", dir+string(os.PathSeparator),
		"./cmd/fr-sim", "./cmd/fr-attach", "./cmd/fr-approve", "./cmd/fr-filter")
	build.Dir = filepath.Join("..", "..", "..") // the module root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos: building the commands:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if left := leftovers(dir); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "chaos: processes left behind: %s\n", strings.Join(left, ", "))
		if code == 0 {
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// leftovers lists the running processes started from dir.
func leftovers(dir string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, dir+string(os.PathSeparator)) {
			if st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); bytes.Contains(st, []byte(") Z ")) {
				continue // a zombie is already gone; its parent is the test
			}
			out = append(out, fmt.Sprintf("%s (pid %d)", filepath.Base(exe), pid))
		}
	}
	return out
}

// proc is one command under test, with the peak of its resident memory.
type proc struct {
	name   string
	cmd    *exec.Cmd
	done   chan struct{}
	err    error
	peak   atomic.Int64 // bytes
	stderr *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness starts processes for one test, and at its end checks that each has exited, that
// none used more memory than it may, and that none left a file in its temporary directory.
type harness struct {
	t      *testing.T
	dir    string // the test's working directory
	tmp    string // TMPDIR of every process: must be empty at the end
	mu     sync.Mutex
	procs  []*proc
	maxRSS map[string]int64 // per command name
}

const defaultMaxRSS = 200 << 20

func newHarness(t *testing.T) *harness {
	t.Helper()
	// Unix socket paths are short: keep the directory near /tmp.
	dir, err := os.MkdirTemp("/tmp", "frc")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, dir: dir, tmp: filepath.Join(dir, "tmp"), maxRSS: map[string]int64{}}
	if err := os.Mkdir(h.tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.finish)
	return h
}

func (h *harness) path(name string) string { return filepath.Join(h.dir, name) }

// start runs a command from bin with the given standard streams (nil: none). Its stderr is
// kept for failure messages.
func (h *harness) start(name string, stdin io.Reader, stdout io.Writer, args ...string) *proc {
	h.t.Helper()
	return h.startCmd(name, exec.Command(filepath.Join(bin, name), args...), stdin, stdout)
}

// startCmd runs cmd as start does, with the commands under test first on its PATH.
func (h *harness) startCmd(name string, cmd *exec.Cmd, stdin io.Reader, stdout io.Writer) *proc {
	h.t.Helper()
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), stderr: &syncBuffer{}}
	p.cmd.Dir = h.dir
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = stdin, stdout, p.stderr
	p.cmd.Env = append(os.Environ(), "TMPDIR="+h.tmp, "NO_COLOR=1", "FUSERAFT_HOME="+h.path("home"),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := p.cmd.Start(); err != nil {
		h.t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	go p.sample()
	h.mu.Lock()
	h.procs = append(h.procs, p)
	h.mu.Unlock()
	return p
}

// sample keeps the peak resident memory of the process until it exits.
func (p *proc) sample() {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if rss := rssOf(p.cmd.Process.Pid); rss > p.peak.Load() {
			p.peak.Store(rss)
		}
		select {
		case <-p.done:
			return
		case <-tick.C:
		}
	}
}

// rssOf reads VmHWM (the peak resident set) of a live process, in bytes.
func rssOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// wait waits for p to exit and returns its exit code.
func (p *proc) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-testkit.After(within):
		p.cmd.Process.Signal(syscall.SIGQUIT) // a goroutine dump on its stderr
		select {
		case <-p.done:
		case <-testkit.After(2 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
		t.Fatalf("%s did not exit within %s; stderr:\n%s", p.name, within, p.stderr)
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) signal(sig syscall.Signal) { p.cmd.Process.Signal(sig) }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (h *harness) finish() {
	t := h.t
	h.mu.Lock()
	procs := h.procs
	h.mu.Unlock()
	for _, p := range procs {
		if !p.exited() {
			if !t.Failed() {
				t.Errorf("%s (pid %d) still running at the end of the test", p.name, p.cmd.Process.Pid)
			}
			p.cmd.Process.Kill()
			<-p.done
		}
		limit := int64(defaultMaxRSS)
		if l, ok := h.maxRSS[p.name]; ok {
			limit = l
		}
		if peak := p.peak.Load(); peak > limit {
			t.Errorf("%s used %d MiB of memory at its peak, more than %d MiB", p.name, peak>>20, limit>>20)
		}
	}
	if ents, _ := os.ReadDir(h.tmp); len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("temporary files left behind in TMPDIR: %s", strings.Join(names, ", "))
	}
	if t.Failed() {
		for _, p := range procs {
			if s := p.stderr.String(); s != "" {
				t.Logf("%s stderr:\n%s", p.name, tail(s, 40))
			}
		}
		t.Logf("kept for inspection: %s", h.dir)
		return
	}
	os.RemoveAll(h.dir)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... %d lines before", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// daemon is an fr-sim serve on a fixed state directory and port, which survives restarts.
type daemon struct {
	h     *harness
	p     *proc
	args  []string
	port  int
	sock  string
	url   string
	state string
	n     int
}

type readyFile struct {
	PID    int    `json:"pid"`
	Socket string `json:"socket"`
	URL    string `json:"url"`
}

// startDaemon starts fr-sim serve with extra arguments (scenario, faults) and waits until it
// listens.
func (h *harness) startDaemon(extra ...string) *daemon {
	h.t.Helper()
	d := &daemon{h: h, state: h.path("state"), sock: h.path("d.sock"), args: extra}
	d.launch()
	return d
}

func (d *daemon) launch() {
	t := d.h.t
	t.Helper()
	d.n++
	ready := d.h.path(fmt.Sprintf("ready%d.json", d.n))
	args := []string{"--record", d.h.path("record.jsonl")}
	args = append(args, "serve", "--trace", d.h.path("trace.jsonl"), "--socket", d.sock, "--port", strconv.Itoa(d.port), "--state-dir", d.state, "--ready-file", ready)
	args = append(args, d.args...)
	d.p = d.h.start("fr-sim", nil, nil, args...)
	deadline := time.Now().Add(testkit.Bound(20 * time.Second))
	for {
		b, err := os.ReadFile(ready)
		var r readyFile
		if err == nil && json.Unmarshal(b, &r) == nil && r.URL != "" {
			d.url = r.URL
			if i := strings.LastIndex(r.URL, ":"); i > 0 {
				port, _ := strconv.Atoi(strings.TrimSuffix(r.URL[i+1:], "/attach"))
				d.port = port
			}
			return
		}
		if d.p.exited() || time.Now().After(deadline) {
			t.Fatalf("fr-sim serve did not get ready: %v\n%s", d.p.err, d.p.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// restart stops the daemon with sig (SIGKILL, SIGTERM) and starts it again on the same port
// and state.
func (d *daemon) restart(sig syscall.Signal) {
	d.h.t.Helper()
	d.stop(sig)
	d.launch()
}

func (d *daemon) stop(sig syscall.Signal) {
	d.h.t.Helper()
	d.p.signal(sig)
	d.p.wait(d.h.t, 20*time.Second)
}

// lines is what a process wrote, one line per entry, safe to read while it is written.
type lines struct {
	mu   sync.Mutex
	all  []string
	cond *sync.Cond
	eof  bool
}

func newLines() *lines {
	l := &lines{}
	l.cond = sync.NewCond(&l.mu)
	return l
}

func (l *lines) add(s string) {
	l.mu.Lock()
	l.all = append(l.all, s)
	l.mu.Unlock()
	l.cond.Broadcast()
}

func (l *lines) close() {
	l.mu.Lock()
	l.eof = true
	l.mu.Unlock()
	l.cond.Broadcast()
}

func (l *lines) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.all...)
}

// count counts the lines containing sub.
func (l *lines) count(sub string) int {
	n := 0
	for _, s := range l.snapshot() {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// waitFor waits until at least n lines contain sub.
func (l *lines) waitFor(t *testing.T, sub string, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for l.count(sub) < n {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d lines with %q; have %d", n, sub, l.count(sub))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readLines copies r into l line by line until EOF.
func readLines(r io.Reader, l *lines) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		l.add(sc.Text())
	}
	l.close()
}

// jsonField returns a top-level string field of a JSON line, or "".
func jsonField(line, name string) string {
	var m map[string]any
	if json.Unmarshal([]byte(line), &m) != nil {
		return ""
	}
	s, _ := m[name].(string)
	return s
}
