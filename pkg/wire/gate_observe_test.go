package wire

import (
	"fmt"
	"reflect"
	"testing"
)

// Observe skips the lock for the event types that cannot change a Gate: every event type, in
// every state these scripts reach, leaves the Gate exactly as the locked path does.
func TestObserveSkipsOnlyWhatChangesNothing(t *testing.T) {
	states := map[string]func() *Gate{
		"stdio new": func() *Gate { return NewGate(Stdio) },
		"stdio in a turn, a prompt pending": func() *Gate {
			g := NewGate(Stdio)
			g.Observe(Event{Type: TypeReady, Raw: []byte(replReady)})
			g.Push(Input{Line: []byte(`{"type":"user_input","text":"hi"}`), Type: TypeUserInput})
			g.Next()
			g.Observe(Event{Type: TypeTurnStart, Raw: []byte(`{"type":"turn_start"}`)})
			g.Observe(Event{Type: TypeApproval, Raw: []byte(approvalFor("ls"))})
			g.Push(Input{Line: []byte(`{"type":"user_input","text":"next"}`), Type: TypeUserInput})
			return g
		},
		"stdio in a shell escape": func() *Gate {
			g := NewGate(Stdio)
			g.Observe(Event{Type: TypeReady, Raw: []byte(replReady)})
			g.Observe(Event{Type: TypeShellStart, Raw: []byte(`{"type":"shell_start"}`)})
			return g
		},
		"bridge running, a question pending": func() *Gate {
			g := NewGate(Bridge)
			g.Observe(Event{Type: TypeReady, Raw: []byte(`{"type":"ready","protocolVersion":1}`)})
			g.Observe(Event{Type: TypeQuestion, Raw: []byte(`{"type":"question","question":"?"}`)})
			return g
		},
		"serve, a task in flight": func() *Gate {
			g := NewGate(Serve)
			g.Observe(Event{Type: TypeHello, Raw: []byte(`{"type":"hello","protocolVersion":1,"readOnly":false,"pendingResults":["s0"],"inFlight":null}`)})
			g.Push(Input{Line: []byte(`{"type":"user_input","text":"task"}`), Type: TypeUserInput})
			g.Next()
			g.Push(Input{Line: []byte(`{"type":"user_input","text":"held"}`), Type: TypeUserInput})
			return g
		},
		"serve, read-only, denying": func() *Gate {
			g := NewGate(Serve)
			g.Observe(Event{Type: TypeHello, Raw: []byte(`{"type":"hello","protocolVersion":1,"readOnly":true,"pendingResults":[],"inFlight":null}`)})
			g.Deny("stopped")
			g.Observe(Event{Type: TypeApproval, Raw: []byte(approvalFor("rm"))})
			return g
		},
	}
	types := append(EventTypes(), TypeUserInput, TypeApprovalResponse, TypeQuestionResponse,
		TypeInterrupt, "", "not_a_type", "Token")
	raws := func(typ string) []string {
		r := []string{fmt.Sprintf(`{"type":%q}`, typ)}
		switch typ {
		case TypeReady:
			r = append(r, replReady)
		case TypeHello:
			r = append(r, `{"type":"hello","protocolVersion":1,"readOnly":true,"pendingResults":[],"inFlight":{"sessionId":"s1","task":"t"}}`)
		case TypeQueued:
			r = append(r, `{"type":"queued","sessionId":"s9","position":0}`)
		case TypeResult:
			r = append(r, `{"type":"result","sessionId":"s0","succeeded":true}`, `{"type":"result","sessionId":"s9","succeeded":true}`)
		}
		return r
	}
	// The Conn checks these types as it shows them to the Gate (Conn.observe).
	for _, typ := range []string{TypeError, TypeReady} {
		if !ChangesGate(typ) {
			t.Errorf("ChangesGate(%q) is false", typ)
		}
	}
	for name, make := range states {
		for _, typ := range types {
			for _, raw := range raws(typ) {
				ev := Event{Type: typ, Raw: []byte(raw)}
				fast, locked := make(), make()
				fast.Observe(ev)
				locked.mu.Lock()
				locked.observe(ev)
				locked.mu.Unlock()
				if !reflect.DeepEqual(fast, locked) {
					t.Errorf("%s: Observe(%s) leaves the Gate\n%+v\nthe locked path leaves it\n%+v", name, raw, fast, locked)
				}
			}
		}
	}
}
