package dispatch

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// wait and run exit 6 when a task failed because a limit stopped it (its record names the
// limit), 1 for any other failure, and a request that failed (3, 4, 10) outranks both.
func TestExitForALimit(t *testing.T) {
	const (
		ok      = `{"taskId":"a","status":"completed","succeeded":true}`
		failed  = `{"taskId":"b","status":"failed","succeeded":false,"errorMessage":"it failed"}`
		limited = `{"taskId":"c","status":"failed","succeeded":false,"errorMessage":"stopped by --max-turns 9: 9 turns done, no more may start: not handed to the daemon","limit":"--max-turns"}`
		// a task a limit interrupted that the daemon still reports as a success is a success
		limitedOK = `{"taskId":"d","status":"completed","succeeded":true,"limit":"--max-turns"}`
	)
	for _, c := range []struct {
		name  string
		lines []string
		err   error // a request that failed
		want  int
	}{
		{"all succeeded", []string{ok, limitedOK}, nil, cmdutil.ExitOK},
		{"a failure", []string{ok, failed}, nil, cmdutil.ExitFailed},
		{"a limit", []string{ok, limited}, nil, cmdutil.ExitLimit},
		{"a limit and a failure", []string{failed, limited}, nil, cmdutil.ExitLimit},
		{"a limit and a request that failed", []string{limited}, cmdutil.Errorf(cmdutil.ExitUnavailable, "no answer"), cmdutil.ExitUnavailable},
	} {
		var out, errb bytes.Buffer
		p := &printer{s: cmdutil.Streams{Out: &out, Err: &errb}}
		for _, l := range c.lines {
			st, err := decodeState([]byte(l))
			if err != nil {
				t.Fatal(err)
			}
			p.print(outcome{id: "x", line: []byte(l), st: st})
		}
		if c.err != nil {
			p.print(outcome{id: "y", err: c.err})
		}
		err := p.done()
		if got := cmdutil.CodeOf(err); got != c.want {
			t.Errorf("%s: exit %d (%v), want %d", c.name, got, err, c.want)
		}
		var e *cmdutil.Error
		if c.want == cmdutil.ExitLimit && (!errors.As(err, &e) || !strings.Contains(err.Error(), "--max-turns 9")) {
			t.Errorf("%s: the error does not name the limit: %v", c.name, err)
		}
	}
}
