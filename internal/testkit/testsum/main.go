// Command testsum runs go test -json with the arguments it is given and prints what plain
// go test prints (a line per package, the whole output of each failed test) followed by the
// ten slowest tests and, last, "N passed, N failed, N skipped". It exits with go test's exit
// status. `make test` runs it:
//
//	go build -o bin/testsum ./internal/testkit/testsum && bin/testsum -race -count=1 ./...
//
// A test that skips itself under the race detector with [testkit.WithoutRace] is run once more
// without it, as soon as its package has ended (while the other packages go on): `go test
// -json` with the same flags but -race, its package, and -run naming it (its top-level test).
// The second run counts, not the skip. Flags with a separate value (-timeout 60m) are not
// carried to the second run: write -timeout=60m.
//
// Without arguments it reads go test -json from stdin instead (exit status 1 if anything
// failed).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fuseraft/fr/internal/testkit"
)

// slowest is how many of the slowest tests are listed.
const slowest = 10

func main() {
	if len(os.Args) == 1 {
		s := newSummary(os.Stdout)
		if err := s.read(os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
		s.finish()
		if s.failed() {
			os.Exit(1)
		}
		return
	}
	os.Exit(run(os.Stdout, os.Args[1:]))
}

// run runs go test -json ARGS and, as each package ends, without -race, the tests of it that
// asked for that; it summarises their output and returns the worst exit status.
func run(w io.Writer, args []string) int {
	// An interrupt reaches go test too (same process group): let it stop and say what it ran.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	s := newSummary(w)
	var wg sync.WaitGroup
	var mu sync.Mutex
	code := 0
	worst := func(c int) {
		mu.Lock()
		code = max(code, c)
		mu.Unlock()
	}
	// Called with s.mu held, as the package ends: its second run overlaps the rest of the first.
	s.onAgain = func(pkg string, tests []string) {
		again := againArgs(args, pkg, tests)
		fmt.Fprintf(s.w, "again without the race detector: go test %s\n", strings.Join(again, " "))
		wg.Add(1)
		go func() {
			defer wg.Done()
			worst(s.goTest(again))
		}()
	}
	worst(s.goTest(args))
	s.mu.Lock()
	for pkg, tests := range s.again { // a package whose end go test did not report
		delete(s.again, pkg)
		s.onAgain(pkg, tests)
	}
	s.mu.Unlock()
	wg.Wait()
	s.finish()
	if code == 0 && s.failed() {
		code = 1
	}
	return code
}

// goTest runs go test -json ARGS into the summary and returns its exit status.
func (s *summary) goTest(args []string) int {
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	cmd := exec.Command(goBin, append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return 2
	}
	readErr := s.read(out)
	if readErr != nil {
		io.Copy(io.Discard, out)
	}
	err = cmd.Wait()
	if readErr != nil {
		fmt.Fprintln(os.Stderr, "testsum:", readErr)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		if code := ee.ExitCode(); code > 0 {
			return code
		}
		return 1 // killed by a signal
	case err != nil:
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return 2
	case readErr != nil:
		return 1
	}
	return 0
}

// againArgs is a second run's arguments: the first run's flags but -race and -run, -run
// naming the (top-level) tests that skipped themselves under the race detector, and their
// package.
func againArgs(args []string, pkg string, tests []string) []string {
	set := map[string]bool{}
	for _, t := range tests {
		top, _, _ := strings.Cut(t, "/")
		set[regexp.QuoteMeta(top)] = true
	}
	var names []string
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") && a != "-race" && !strings.HasPrefix(a, "-run") {
			out = append(out, a)
		}
	}
	return append(out, "-run", "^("+strings.Join(names, "|")+")$", pkg)
}

// event is one record of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type key struct{ pkg, test string }

type result struct {
	key
	elapsed time.Duration
}

type summary struct {
	w                       io.Writer
	out                     map[key][]string // output of each running test, kept until it ends
	running                 map[key]bool
	passed, failures, skips int
	failedIn                map[string]bool // packages with a failed test
	failedList              []key           // failed tests, and packages that failed outside one
	times                   []result
	mu                      sync.Mutex          // held while an event is taken
	again                   map[string][]string // per package, tests that skipped themselves under the race detector
	onAgain                 func(pkg string, tests []string)
}

func newSummary(w io.Writer) *summary {
	return &summary{w: w, out: map[key][]string{}, running: map[key]bool{}, failedIn: map[string]bool{}, again: map[string][]string{}}
}

// read takes go test -json records until EOF. A line that is not a record is printed as it is.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(s.w, sc.Text())
			continue
		}
		s.mu.Lock()
		s.take(e)
		s.mu.Unlock()
	}
	return sc.Err()
}

func (s *summary) take(e event) {
	k := key{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.w, e.Output)
	case "run":
		s.running[k] = true
	case "output":
		if e.Test == "" {
			if e.Output != "PASS\n" {
				fmt.Fprint(s.w, e.Output)
			}
			return
		}
		if framing(e.Output) {
			return
		}
		s.out[k] = append(s.out[k], e.Output)
	case "pass", "fail", "skip":
		if e.Test == "" {
			if e.Action == "fail" {
				s.leftOver(e.Package)
				s.pkgFailure(e.Package)
			}
			if tests := s.again[e.Package]; len(tests) > 0 {
				delete(s.again, e.Package)
				s.onAgain(e.Package, tests)
			}
			return
		}
		switch e.Action {
		case "pass":
			s.passed++
		case "fail":
			s.failures++
			s.failedIn[e.Package] = true
			s.failedList = append(s.failedList, k)
			s.printFailed(k)
		case "skip":
			if s.onAgain != nil && s.skippedForRace(k) {
				s.again[k.pkg] = append(s.again[k.pkg], k.test)
				delete(s.out, k)
				delete(s.running, k)
				return
			}
			s.skips++
		}
		s.times = append(s.times, result{k, time.Duration(e.Elapsed * float64(time.Second))})
		delete(s.out, k)
		delete(s.running, k)
	}
}

// skippedForRace reports whether a skipped test said it runs again without the race detector.
func (s *summary) skippedForRace(k key) bool {
	for _, l := range s.out[k] {
		if strings.Contains(l, testkit.AgainWithoutRace) {
			return true
		}
	}
	return false
}

// framing reports whether a line only says a test runs, pauses or goes on: noise in a failure.
func framing(line string) bool {
	for _, p := range []string{"=== RUN ", "=== PAUSE ", "=== CONT ", "=== NAME "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// leftOver prints the output of a failed package's tests that never ended (a panic, a
// timeout): that is where their failure is.
func (s *summary) leftOver(pkg string) {
	var names []string
	for k := range s.running {
		if k.pkg == pkg {
			names = append(names, k.test)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		k := key{pkg, n}
		s.failures++
		s.failedIn[pkg] = true
		s.failedList = append(s.failedList, k)
		fmt.Fprintf(s.w, "--- FAIL: %s (did not end)\n", n)
		s.printFailed(k)
		delete(s.out, k)
		delete(s.running, k)
	}
}

// printFailed prints a failed test's output as plain go test does: its --- FAIL line, then
// what it logged.
func (s *summary) printFailed(k key) {
	lines := s.out[k]
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "--- FAIL: ") {
			fmt.Fprint(s.w, l)
		}
	}
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimLeft(l, " "), "--- FAIL: ") {
			fmt.Fprint(s.w, l)
		}
	}
}

// pkgFailure counts a package that failed without a failed test (it did not build, its
// TestMain failed) as one failure, so that the counts never say all passed when it did not.
func (s *summary) pkgFailure(pkg string) {
	if !s.failedIn[pkg] {
		s.failedIn[pkg] = true
		s.failedList = append(s.failedList, key{pkg: pkg})
		s.failures++
	}
}

func (s *summary) failed() bool { return s.failures > 0 }

// finish prints the slowest tests and the counts, the counts last.
func (s *summary) finish() {
	// A parent test lasts as long as its subtests: list the tests that ran no subtest.
	parent := map[key]bool{}
	for _, r := range s.times {
		for i := range len(r.test) {
			if r.test[i] == '/' {
				parent[key{r.pkg, r.test[:i]}] = true
			}
		}
	}
	var leaves []result
	for _, r := range s.times {
		if !parent[r.key] {
			leaves = append(leaves, r)
		}
	}
	sort.SliceStable(leaves, func(i, j int) bool { return leaves[i].elapsed > leaves[j].elapsed })
	if len(leaves) > slowest {
		leaves = leaves[:slowest]
	}
	if len(leaves) > 0 {
		fmt.Fprintf(s.w, "\nThe %d slowest tests:\n", len(leaves))
		for _, r := range leaves {
			fmt.Fprintf(s.w, "%8.2fs  %s  %s\n", r.elapsed.Seconds(), r.test, r.pkg)
		}
	}
	if len(s.failedList) > 0 {
		fmt.Fprintf(s.w, "\nFailed:\n")
		for _, k := range s.failedList {
			if k.test == "" {
				k.test = "(the package)"
			}
			fmt.Fprintf(s.w, "  %s  %s\n", k.test, k.pkg)
		}
	}
	fmt.Fprintf(s.w, "\n%d passed, %d failed, %d skipped\n", s.passed, s.failures, s.skips)
}
