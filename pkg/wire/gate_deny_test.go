package wire

import (
	"strings"
	"testing"
)

// After Deny nothing is approved: answers queued before, and pushed after, go as denials (or
// skips), still one per prompt; tasks and messages are dropped wherever they wait; interrupts
// go.
func TestGateDeny(t *testing.T) {
	hello := `{"type":"hello","protocolVersion":1,"clientId":"c","readOnly":false,"inFlight":null,"pendingResults":[]}`
	queued := `{"type":"queued","sessionId":"s1","position":0}`
	task := func(text string) string { return `{"type":"user_input","text":"` + text + `"}` }
	skip := `{"type":"question_response","answer":null}`
	interrupt := `{"type":"interrupt"}`
	tests := []struct {
		name  string
		mode  Mode
		steps []gateStep
	}{
		{"an approval queued for a later prompt goes as a denial", Serve, []gateStep{
			{'<', hello}, {'>', "t"}, {'=', "send:" + task("t")}, {'<', queued},
			{'<', shellPrompt}, {'<', shellPrompt}, {'>', allow}, {'x', "deny: limit"}, {'>', allow},
			{'=', "send:" + deny + " | send:" + deny},
		}},
		{"an approval pushed after Deny goes as a denial", Serve, []gateStep{
			{'<', hello}, {'>', "t"}, {'=', "send:" + task("t")}, {'<', queued}, {'x', "deny: limit"},
			{'<', shellPrompt}, {'>', allow}, {'=', "send:" + deny},
		}},
		{"a question's answer goes as a skip", Serve, []gateStep{
			{'<', hello}, {'>', "t"}, {'=', "send:" + task("t")}, {'<', queued}, {'x', "deny: limit"},
			{'<', question}, {'>', answerA}, {'=', "send:" + skip},
		}},
		{"held tasks are dropped, and the answer still goes, once", Serve, []gateStep{
			{'<', hello}, {'>', "t"}, {'=', "send:" + task("t")}, {'<', queued}, {'>', "u"}, {'>', "v"},
			{'<', shellPrompt}, {'x', "deny: limit"}, {'>', allow}, {'>', allow},
			{'=', "send:" + deny + " | drop:" + allow + " | drop(deny: limit):" + task("u") + " | drop(deny: limit):" + task("v")},
		}},
		{"an interrupt goes after the pending prompt's answer", Serve, []gateStep{
			{'<', hello}, {'>', "t"}, {'=', "send:" + task("t")}, {'<', queued}, {'<', shellPrompt},
			{'x', "deny: limit"}, {'>', interrupt}, {'=', ""}, {'>', allow}, {'=', "send:" + deny + " | send:" + interrupt},
		}},
		{"a task pushed with nothing in flight is dropped", Serve, []gateStep{
			{'<', hello}, {'x', "deny: limit"}, {'>', "t"}, {'=', "drop(deny: limit):" + task("t")},
		}},
		{"a REPL message is dropped; the first why stays", Stdio, []gateStep{
			{'x', "deny: first"}, {'x', "deny: second"}, {'>', "hello"}, {'=', "drop(deny: first):" + task("hello")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runPairs(t, tt.mode, tt.steps) })
	}
}

// DenyUnanswered answers each pending prompt that has no answer yet, once, with a denial paired
// with it; a prompt already answered keeps its one answer (as a denial now), and nothing is
// answered twice.
func TestGateDenyUnanswered(t *testing.T) {
	g := NewGate(Stdio)
	g.Observe(Event{Type: TypeReady, Raw: []byte(`{"type":"ready","protocolVersion":1,"midTurnCommands":[]}`)})
	g.Observe(Event{Type: TypeTurnStart, Raw: []byte(`{"type":"turn_start","text":null}`)})
	if n := g.DenyUnanswered("nobody reads"); n != 0 {
		t.Fatalf("nothing pending, %d answered", n)
	}
	g.Observe(Event{Type: TypeApproval, Raw: []byte(shellPrompt)})
	in, _ := ParseInput([]byte(allow))
	g.Push(in) // answered already
	g.Observe(Event{Type: TypeApproval, Raw: []byte(shellPrompt)})
	g.Observe(Event{Type: TypeQuestion, Raw: []byte(question)})
	if n := g.DenyUnanswered("nobody reads"); n != 2 {
		t.Fatalf("DenyUnanswered = %d, want 2 (the second approval, the question)", n)
	}
	if n := g.DenyUnanswered("nobody reads"); n != 0 {
		t.Fatalf("again: %d, want 0", n)
	}
	var sent []string
	for {
		d, ok := g.Next()
		if !ok {
			break
		}
		if d.Action != Send {
			t.Fatalf("dropped %s: %s", d.Input.Line, d.Reason)
		}
		sent = append(sent, string(d.Input.Line))
	}
	want := []string{deny, deny, `{"type":"question_response","answer":null}`}
	if strings.Join(sent, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sent %q, want %q", sent, want)
	}
}
