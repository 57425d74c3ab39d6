package testkit

import (
	"regexp"
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
