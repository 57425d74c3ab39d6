package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/testkit"
)

// A run as go test -json reports it: a passed test, a failed subtest, a skipped test, and a
// package whose test never ended (a panic), each with its output.
const records = `{"Action":"run","Package":"p","Test":"TestOK"}
{"Action":"output","Package":"p","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"p","Test":"TestOK","Elapsed":0.5}
{"Action":"run","Package":"p","Test":"TestBad"}
{"Action":"run","Package":"p","Test":"TestBad/sub"}
{"Action":"output","Package":"p","Test":"TestBad/sub","Output":"    a_test.go:4: wanted 1, got 2\n"}
{"Action":"output","Package":"p","Test":"TestBad/sub","Output":"    --- FAIL: TestBad/sub (3.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestBad/sub","Elapsed":3}
{"Action":"output","Package":"p","Test":"TestBad","Output":"--- FAIL: TestBad (3.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestBad","Elapsed":3}
{"Action":"run","Package":"p","Test":"TestSkip"}
{"Action":"skip","Package":"p","Test":"TestSkip","Elapsed":0}
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t3.5s\n"}
{"Action":"fail","Package":"p","Elapsed":3.5}
{"Action":"run","Package":"q","Test":"TestHang"}
{"Action":"output","Package":"q","Test":"TestHang","Output":"panic: test timed out after 10m0s\n"}
{"Action":"output","Package":"q","Output":"FAIL\tq\t600.0s\n"}
{"Action":"fail","Package":"q","Elapsed":600}
{"Action":"output","Package":"r","Output":"PASS\n"}
{"Action":"output","Package":"r","Output":"ok  \tr\t0.1s\n"}
{"Action":"pass","Package":"r","Elapsed":0.1}
`

func TestSummary(t *testing.T) {
	var out strings.Builder
	s := newSummary(&out)
	if err := s.read(strings.NewReader(records)); err != nil {
		t.Fatal(err)
	}
	s.finish()
	got := out.String()
	for _, want := range []string{
		"    --- FAIL: TestBad/sub (3.00s)\n    a_test.go:4: wanted 1, got 2\n",
		"--- FAIL: TestBad (3.00s)\n",
		"FAIL\tp\t3.5s\n",
		"--- FAIL: TestHang (did not end)\npanic: test timed out after 10m0s\n",
		"ok  \tr\t0.1s\n",
		"    3.00s  TestBad/sub  p\n    0.50s  TestOK  p\n",
		"\nFailed:\n  TestBad/sub  p\n  TestBad  p\n  TestHang  q\n\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q; it is:\n%s", want, got)
		}
	}
	for _, noise := range []string{"=== RUN", "PASS\n", "3.00s  TestBad  p"} {
		if strings.Contains(got, noise) {
			t.Errorf("the summary shows %q; it is:\n%s", noise, got)
		}
	}
	if !strings.HasSuffix(got, "\n1 passed, 3 failed, 1 skipped\n") {
		t.Errorf("the summary does not end with the counts:\n%s", got)
	}
	if !s.failed() {
		t.Error("a run with failures is not failed")
	}
}

// A package that fails without a failed test (it did not build) still counts as a failure.
func TestSummaryBuildFailure(t *testing.T) {
	var out strings.Builder
	s := newSummary(&out)
	s.read(strings.NewReader(`{"ImportPath":"p [p.test]","Action":"build-output","Output":"./a_test.go:6:12: undefined: y\n"}
{"ImportPath":"p [p.test]","Action":"build-fail"}
{"Action":"output","Package":"p","Output":"FAIL\tp [build failed]\n"}
{"Action":"fail","Package":"p","Elapsed":0}
`))
	s.finish()
	if got := out.String(); !strings.Contains(got, "undefined: y") || !strings.HasSuffix(got, "\nFailed:\n  (the package)  p\n\n0 passed, 1 failed, 0 skipped\n") {
		t.Errorf("got:\n%s", got)
	}
}

// A test that skips itself under the race detector runs again without it, alone, and its
// second run is what counts.
func TestAgainWithoutRace(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	fake := filepath.Join(dir, "go")
	script := `#!/bin/sh
echo "$*" >>` + log + `
case " $* " in
*" -race "*)
	printf '%s\n' '{"Action":"run","Package":"p","Test":"TestOK"}'
	printf '%s\n' '{"Action":"pass","Package":"p","Test":"TestOK","Elapsed":0.1}'
	printf '%s\n' '{"Action":"run","Package":"q","Test":"TestSlow"}'
	printf '%s\n' '{"Action":"output","Package":"q","Test":"TestSlow","Output":"    a_test.go:9: one goroutine through much data: ` + testkit.AgainWithoutRace + `\n"}'
	printf '%s\n' '{"Action":"skip","Package":"q","Test":"TestSlow","Elapsed":0}'
	printf '%s\n' '{"Action":"run","Package":"q","Test":"TestSkipped"}'
	printf '%s\n' '{"Action":"output","Package":"q","Test":"TestSkipped","Output":"    a_test.go:19: needs tmux\n"}'
	printf '%s\n' '{"Action":"skip","Package":"q","Test":"TestSkipped","Elapsed":0}'
	printf '%s\n' '{"Action":"pass","Package":"q","Elapsed":0.2}'
	printf '%s\n' '{"Action":"run","Package":"r","Test":"TestLate"}'
	printf '%s\n' '{"Action":"output","Package":"r","Test":"TestLate","Output":"    b_test.go:9: ` + testkit.AgainWithoutRace + `\n"}'
	printf '%s\n' '{"Action":"skip","Package":"r","Test":"TestLate","Elapsed":0}'
	;;
*)
	case " $* " in
	*" q "*)
		printf '%s\n' '{"Action":"run","Package":"q","Test":"TestSlow"}'
		printf '%s\n' '{"Action":"output","Package":"q","Test":"TestSlow","Output":"    a_test.go:12: wanted 1, got 2\n"}'
		printf '%s\n' '{"Action":"fail","Package":"q","Test":"TestSlow","Elapsed":4}'
		exit 1
		;;
	*" r "*)
		printf '%s\n' '{"Action":"run","Package":"r","Test":"TestLate"}'
		printf '%s\n' '{"Action":"pass","Package":"r","Test":"TestLate","Elapsed":1}'
		;;
	esac
	;;
esac
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GO", fake)
	var out strings.Builder
	if code := run(&out, []string{"-race", "-count=1", "./..."}); code != 1 {
		t.Errorf("exit status %d, want the second pass's 1", code)
	}
	calls, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// q's second run starts as q ends, r's (whose end was not reported) after the first run:
	// the two may write their lines in either order
	lines := strings.SplitAfter(string(calls), "\n")
	sort.Strings(lines[1:])
	if want := "test -json -race -count=1 ./...\ntest -json -count=1 -run ^(TestLate)$ r\ntest -json -count=1 -run ^(TestSlow)$ q\n"; strings.Join(lines, "") != want {
		t.Errorf("go was run as:\n%s\nwant:\n%s", calls, want)
	}
	got := out.String()
	if !strings.Contains(got, "a_test.go:12: wanted 1, got 2") || !strings.HasSuffix(got, "\nFailed:\n  TestSlow  q\n\n2 passed, 1 failed, 1 skipped\n") {
		t.Errorf("the summary does not count the second run instead of the skip:\n%s", got)
	}
}
