package worker

import (
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/pkg/wire"
)

// A result for a session the worker is not waiting for (another client's, or one from before
// a reconnect) is never taken as the task's result; the task's own is.
func TestResultOfAnotherSessionIsNotTaken(t *testing.T) {
	var errb testkit.SyncBuffer
	w := &worker{s: cmdutil.Streams{Err: &errb}, o: &options{pool: "p", host: "h"}}
	s := &slot{w: w, up: make(chan struct{})}
	for _, session := range []string{"", "sim-a"} {
		j := &job{sent: true, session: session, done: make(chan outcome, 1)}
		s.cur = j
		s.line(nil, wire.ParseLine([]byte(`{"type":"result","sessionId":"sim-b","task":"x","succeeded":true,"errorMessage":null,"lastAgent":null,"lastMessage":null}`)))
		select {
		case oc := <-j.done:
			t.Fatalf("session %q: a result of sim-b was taken: %s", session, oc.result)
		default:
		}
	}
	if !strings.Contains(errb.String(), "a result for a session this worker is not waiting for (sim-b)") {
		t.Errorf("stderr: %s", errb.String())
	}
	j := s.cur
	s.line(nil, wire.ParseLine([]byte(`{"type":"result","sessionId":"sim-a","task":"x","succeeded":true,"errorMessage":null,"lastAgent":null,"lastMessage":null}`)))
	select {
	case oc := <-j.done:
		if !strings.Contains(string(oc.result), `"sim-a"`) {
			t.Fatalf("got %s", oc.result)
		}
	default:
		t.Fatal("the task's own result was not taken")
	}
}
