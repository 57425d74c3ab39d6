package testkit

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

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
