package attach

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

func newTestAttacher(o options) *attacher {
	return newAttacher(cmdutil.Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, o)
}

func ev(raw string) wire.Event {
	e, _ := wire.ParseLine([]byte(raw)).Event()
	return e
}

// A scripted conversation: what the attacher counts as its tasks and when it is finished.
func TestExitOnResultAccounting(t *testing.T) {
	a := newTestAttacher(options{exitOnResult: true, tasks: []string{"one"}})
	a.gate.Push(wire.Input{Line: []byte(`{"type":"user_input","text":"one"}`), Type: wire.TypeUserInput})
	if err := a.checkHello(ev(`{"type":"hello","protocolVersion":1,"clientId":"c","readOnly":false,"inFlight":null,"pendingResults":["old"]}`)); err != nil {
		t.Fatal(err)
	}
	a.gate.Observe(ev(`{"type":"hello","protocolVersion":1,"clientId":"c","readOnly":false,"inFlight":null,"pendingResults":["old"]}`))
	if len(a.tasks) != 1 || a.tasks[0].sessionID != "old" {
		t.Fatalf("pending results are not counted: %+v", a.tasks)
	}
	d, ok := a.gate.Next()
	if !ok || d.Action != wire.Send {
		t.Fatal("the task is not sent")
	}
	a.tasks = append(a.tasks, &ourTask{text: "one"})
	a.observe(ev(`{"type":"result","sessionId":"old","task":"before","succeeded":true,"errorMessage":null,"lastAgent":null,"lastMessage":null}`))
	if a.finished() != nil {
		t.Fatal("finished with a task in flight")
	}
	a.observe(ev(`{"type":"queued","sessionId":"s1","position":0}`))
	if a.tasks[0].sessionID != "s1" {
		t.Fatalf("queued did not name our task: %+v", a.tasks[0])
	}
	a.observe(ev(`{"type":"result","sessionId":"s1","task":"one","succeeded":false,"errorMessage":"boom","lastAgent":null,"lastMessage":null}`))
	stop := a.finished()
	if stop == nil || cmdutil.CodeOf(stop.err) != cmdutil.ExitFailed {
		t.Fatalf("finished = %v, want exit 1", stop)
	}
}

// Over the Unix socket a reconnect loses our task's outcome: exit 1 with --exit-on-result.
func TestSocketReconnectLosesTheOutcome(t *testing.T) {
	hello := ev(`{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}`)
	a := newTestAttacher(options{exitOnResult: true})
	a.checkHello(hello)
	a.tasks = append(a.tasks, &ourTask{text: "x", sessionID: "s1"})
	err := a.checkHello(hello)
	if cmdutil.CodeOf(err) != cmdutil.ExitFailed {
		t.Fatalf("got %v, want exit 1", err)
	}
	b := newTestAttacher(options{})
	b.checkHello(hello)
	b.tasks = append(b.tasks, &ourTask{text: "x", sessionID: "s1"})
	if err := b.checkHello(hello); err != nil || len(b.tasks) != 0 {
		t.Fatalf("without --exit-on-result: %v, tasks %v", err, b.tasks)
	}
}

// A task sent just before a drop, that the daemon never confirmed, must not hold new tasks
// forever once a hello says nothing is in flight.
func TestUnconfirmedTaskDoesNotWedgeTheGate(t *testing.T) {
	a := newTestAttacher(options{})
	hello := ev(`{"type":"hello","protocolVersion":1,"clientId":"c","readOnly":false,"inFlight":null,"pendingResults":[]}`)
	a.checkHello(hello)
	a.gate.Observe(hello)
	a.gate.Push(wire.Input{Line: []byte(`{"type":"user_input","text":"lost"}`), Type: wire.TypeUserInput})
	if _, ok := a.gate.Next(); !ok {
		t.Fatal("first task not sent")
	}
	a.tasks = append(a.tasks, &ourTask{text: "lost"})
	a.checkHello(hello) // reconnect: the daemon never got it
	a.gate.Observe(hello)
	if len(a.failed) != 1 {
		t.Errorf("the lost task is not reported: %v", a.failed)
	}
	a.gate.Push(wire.Input{Line: []byte(`{"type":"user_input","text":"next"}`), Type: wire.TypeUserInput})
	if _, ok := a.gate.Next(); !ok {
		t.Fatal("the next task is held forever")
	}
}

func FuzzEvents(f *testing.F) {
	f.Add([]byte(`{"type":"hello","protocolVersion":1,"clientId":"c","readOnly":false,"inFlight":{"sessionId":"s","task":"t","status":"running","position":null},"pendingResults":["a","b"]}`),
		[]byte(`{"type":"result","sessionId":"a","succeeded":true}`))
	f.Add([]byte(`{"type":"hello","protocolVersion":"1"}`), []byte(`{"type":"queued","sessionId":7}`))
	f.Add([]byte(`{"type":"hello","protocolVersion":1,"clientId":null,"inFlight":null,"pendingResults":null}`), []byte(`not json`))
	f.Fuzz(func(t *testing.T, hello, event []byte) {
		a := newTestAttacher(options{exitOnResult: true, anyVersion: true})
		l := wire.ParseLine(hello)
		if e, ok := l.Event(); ok && e.Type == wire.TypeHello {
			if a.checkHello(e) != nil {
				return
			}
			a.gate.Observe(e)
		}
		if e, ok := wire.ParseLine(event).Event(); ok {
			a.observe(e)
		}
		a.finished()
	})
}

// An inert line is only written out (writeOut, in a flood) where line would do nothing more
// with it: for every event type, with tasks of ours in every state, writeOut and line leave
// the same output and the same attacher.
func TestInertLinesOnlyWriteOut(t *testing.T) {
	setup := func() (*attacher, *bytes.Buffer) {
		a := newTestAttacher(options{exitOnResult: true})
		hello := ev(`{"type":"hello","protocolVersion":1,"clientId":"c","readOnly":false,"inFlight":{"sessionId":"s1","task":"t"},"pendingResults":["s0"]}`)
		a.checkHello(hello)
		a.gate.Observe(hello)
		a.tasks = append(a.tasks, &ourTask{text: "unconfirmed"})
		a.observe(ev(`{"type":"approval_request","requestId":"r1","kind":"shell_command","command":"ls"}`))
		a.gate.Push(wire.Input{Line: []byte(`{"type":"user_input","text":"held"}`), Type: wire.TypeUserInput})
		return a, a.s.Out.(*bytes.Buffer)
	}
	state := func(a *attacher) string {
		var b bytes.Buffer
		for _, t := range a.tasks {
			b.WriteString(t.label() + ";")
		}
		inFlight, id := a.gate.TaskInFlight()
		fmt.Fprintf(&b, " results %d failed %q prompt %q %q gate %q %d %v %s connected %v",
			a.results, a.failed, a.lastPrompt, a.lastPromptType, a.gate.Pending(), a.gate.Waiting(), inFlight, id, a.connected)
		return b.String()
	}
	inerts := 0
	for _, typ := range append(wire.EventTypes(), "not_a_type") {
		for _, raw := range []string{
			fmt.Sprintf(`{"type":%q}`, typ),
			fmt.Sprintf(`{"type":%q,"sessionId":"s1","succeeded":false,"errorMessage":"e","text":"x"}`, typ),
		} {
			ln := wire.ParseLine([]byte(raw))
			if !inert(&ln) {
				continue
			}
			inerts++
			slow, slowOut := setup()
			fast, fastOut := setup()
			if err := slow.line(ln); err != nil {
				t.Fatal(err)
			}
			if err := fast.writeOut(&ln); err != nil {
				t.Fatal(err)
			}
			slow.out.Flush()
			fast.out.Flush()
			if s, f := state(slow), state(fast); s != f || slowOut.String() != fastOut.String() {
				t.Errorf("%s: line leaves %s, writing %q; writeOut %s, writing %q", raw, s, slowOut, f, fastOut)
			}
		}
	}
	if inerts == 0 {
		t.Fatal("no event type is inert")
	}
}
