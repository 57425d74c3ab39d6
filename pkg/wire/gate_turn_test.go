package wire

import "testing"

const (
	replReady    = `{"type":"ready","protocolVersion":1,"sessionId":"s","model":"m","title":null,"autoTitle":null,"midTurnCommands":["/model","/status"]}`
	runReady     = `{"type":"ready","protocolVersion":1,"sessionId":"r","task":"t","config":"c.yaml","resumed":false,"agents":["A"]}`
	turnStart    = `{"type":"turn_start","text":""}`
	messageEnd   = `{"type":"message_end","turnIndex":0,"toolCalls":[]}`
	turnCanceled = `{"type":"cancelled"}`
)

func TestGateStdioTurn(t *testing.T) {
	tests := []struct {
		name  string
		steps []gateStep
	}{
		{"a message typed during a turn waits for message_end, not for the prompt", []gateStep{
			{'<', replReady}, {'<', turnStart}, {'>', "next"}, {'=', ""},
			{'<', shellPrompt}, {'=', ""}, {'>', allow}, {'=', "send:approval_response"},
			{'<', messageEnd}, {'=', "send:next"},
		}},
		{"held messages and typeless objects keep their order", []gateStep{
			{'<', turnStart}, {'>', "one"}, {'>', `{"text":"two"}`}, {'>', "three"}, {'=', ""},
			{'<', messageEnd}, {'=', "send:one"},
			{'<', turnStart}, {'<', messageEnd}, {'=', "send:"},
			{'<', turnStart}, {'<', messageEnd}, {'=', "send:three"},
		}},
		{"a message sent is a turn before its turn_start arrives", []gateStep{
			{'>', "one"}, {'>', "two"}, {'=', "send:one"},
			{'<', turnStart}, {'<', shellPrompt}, {'=', ""},
			{'>', allow}, {'=', "send:approval_response"},
			{'<', messageEnd}, {'=', "send:two"},
		}},
		{"a slash command starts no turn; a !command is a shell escape", []gateStep{
			{'>', "/status"}, {'>', "!ls"}, {'>', "after"}, {'=', "send:/status,send:!ls"},
			{'<', `{"type":"shell_start","command":"ls"}`}, {'<', `{"type":"shell_end"}`}, {'=', "send:after"},
		}},
		{"an error ends a turn that never started", []gateStep{
			{'>', "one"}, {'>', "two"}, {'=', "send:one"},
			{'<', `{"type":"error","text":"no model"}`}, {'=', "send:two"},
		}},
		{"cancelled ends the turn", []gateStep{
			{'<', turnStart}, {'>', "x"}, {'=', ""}, {'<', turnCanceled}, {'=', "send:x"},
		}},
		{"an error ends the turn", []gateStep{
			{'<', turnStart}, {'>', "x"}, {'=', ""}, {'<', `{"type":"error","text":"the provider failed"}`}, {'=', "send:x"},
		}},
		{"session_end ends the turn", []gateStep{
			{'<', turnStart}, {'>', "x"}, {'=', ""}, {'<', `{"type":"session_end"}`}, {'=', "send:x"},
		}},
		{"ready starts clean", []gateStep{
			{'<', turnStart}, {'<', shellPrompt}, {'>', "x"}, {'=', ""}, {'<', replReady}, {'=', "send:x"},
		}},
		{"a shell escape holds messages until shell_end", []gateStep{
			{'<', `{"type":"shell_start","command":"ls"}`}, {'>', "x"}, {'=', ""},
			{'<', `{"type":"shell_output","text":"a.go"}`}, {'=', ""},
			{'<', `{"type":"shell_end"}`}, {'=', "send:x"},
		}},
		{"other events keep the turn running", []gateStep{
			{'<', turnStart}, {'>', "x"}, {'<', `{"type":"token","text":"hi"}`}, {'<', `{"type":"tool_call","id":"1","name":"n","summary":"s"}`},
			{'<', `{"type":"warning","text":"w"}`}, {'=', ""}, {'<', messageEnd}, {'=', "send:x"},
		}},
		{"interrupt goes at once, ahead of held messages", []gateStep{
			{'<', turnStart}, {'>', "x"}, {'>', `{"type":"interrupt"}`}, {'=', "send:interrupt"},
			{'<', turnCanceled}, {'=', "send:x"},
		}},
		{"a stray response is dropped at once during a turn, never kept for a later prompt", []gateStep{
			{'<', turnStart}, {'>', "x"}, {'>', allow}, {'>', answerA}, {'=', "drop:approval_response,drop:question_response"},
			{'<', shellPrompt}, {'=', ""}, {'>', deny}, {'=', "send:approval_response"}, {'<', messageEnd}, {'=', "send:x"},
		}},
		{"a mid-turn command goes at once, ahead of held messages", []gateStep{
			{'<', replReady}, {'<', turnStart}, {'>', "x"}, {'>', "/model big"}, {'>', "/status"}, {'=', "send:/model big,send:/status"},
			{'<', messageEnd}, {'=', "send:x"},
		}},
		{"a mid-turn command waits while a prompt is pending", []gateStep{
			{'<', replReady}, {'<', turnStart}, {'<', shellPrompt}, {'>', "/model big"}, {'=', ""},
			{'>', allow}, {'=', "send:approval_response,send:/model big"},
		}},
		{"only listed commands, matched by their first word, go during a turn", []gateStep{
			{'<', replReady}, {'<', turnStart}, {'>', "/title x"}, {'>', "/modelx"}, {'>', "/model"}, {'=', "send:/model"},
			{'<', messageEnd}, {'=', "send:/title x,send:/modelx"},
		}},
		{"a ready without midTurnCommands makes no command mid-turn", []gateStep{
			{'<', `{"type":"ready","protocolVersion":1,"sessionId":"s","model":"m","title":null,"autoTitle":null,"midTurnCommands":[]}`},
			{'<', turnStart}, {'>', "/model big"}, {'=', ""}, {'<', messageEnd}, {'=', "send:/model big"},
		}},
		{"a later ready replaces the commands", []gateStep{
			{'<', replReady}, {'<', `{"type":"ready","protocolVersion":1,"midTurnCommands":["/mode"]}`},
			{'<', turnStart}, {'>', "/model big"}, {'>', "/mode plan"}, {'=', "send:/mode plan"},
		}},
		{"any line but an answer or an interrupt is a message to fuseraft, held by a turn", []gateStep{
			{'<', turnStart}, {'>', "x"}, {'>', `{"type":"future_input"}`}, {'=', ""},
			{'<', messageEnd}, {'=', "send:x"}, {'<', turnStart}, {'<', messageEnd}, {'=', "send:future_input"},
		}},
		{"a line without a text string starts a turn", []gateStep{
			{'>', `{"foo":1}`}, {'>', "second"}, {'=', "send:"}, {'<', turnStart}, {'<', shellPrompt}, {'=', ""},
			{'>', allow}, {'=', "send:approval_response"}, {'<', messageEnd}, {'=', "send:second"},
		}},
		{"a slash command with a leading space is a message", []gateStep{
			{'>', " /title x"}, {'>', "next"}, {'=', "send: /title x"},
		}},
		{"between turns messages go at once", []gateStep{
			{'<', turnStart}, {'<', messageEnd}, {'>', "x"}, {'=', "send:x"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runGate(t, Stdio, tt.steps) })
	}
}

func TestGateBridge(t *testing.T) {
	// run --bridge reads only approval_response and interrupt: any other line it read after a
	// prompt would be its answer.
	runGate(t, Bridge, []gateStep{
		{'<', runReady}, {'<', `{"type":"agent_starting","agent":"A"}`},
		{'>', "a message"}, {'>', `{"type":"future_input"}`}, {'=', "drop:a message,drop:future_input"},
		{'<', shellPrompt}, {'>', `{"type":"interrupt"}`}, {'>', "typed"}, {'=', ""},
		{'>', allow}, {'=', "send:approval_response,send:interrupt,drop:typed"},
		{'>', deny}, {'=', "drop:approval_response"},
	})
}

func TestGateServeIgnoresTurns(t *testing.T) {
	// The daemon has no turn events of its own; a turn_start never holds a task there.
	runGate(t, Serve, []gateStep{{'<', turnStart}, {'>', "task"}, {'=', "send:task"}})
}

func TestGateHoldsInputUntilReady(t *testing.T) {
	// fuseraft reads nothing before ready, and a message sent before it would be read by a
	// session this Gate knows nothing about yet.
	for _, mode := range []Mode{Stdio, Bridge} {
		g := NewGate(mode)
		g.Push(Input{Line: []byte(`{"type":"user_input","text":"early"}`), Type: TypeUserInput})
		g.Push(Input{Line: []byte(`{"type":"interrupt"}`), Type: TypeInterrupt})
		if d, ok := g.Next(); ok || !g.Busy() {
			t.Errorf("mode %d: released %+v before ready (busy %v)", mode, d, g.Busy())
		}
	}
	runGate(t, Stdio, []gateStep{{'>', "one"}, {'>', "two"}, {'=', "send:one"}, {'<', turnStart}, {'<', messageEnd}, {'=', "send:two"}})
}

func TestGateBusy(t *testing.T) {
	g := NewGate(Stdio)
	if !g.Busy() {
		t.Error("not busy before ready")
	}
	g.Observe(Event{Type: TypeReady, Raw: []byte(replReady)})
	if g.Busy() {
		t.Error("busy after ready")
	}
	g.Observe(Event{Type: "turn_start", Raw: []byte(turnStart)})
	if !g.Busy() {
		t.Error("not busy after turn_start")
	}
	g.Observe(Event{Type: "message_end", Raw: []byte(messageEnd)})
	if g.Busy() {
		t.Error("busy after message_end")
	}
	s := NewGate(Serve)
	s.Observe(Event{Type: "turn_start", Raw: []byte(turnStart)})
	if s.Busy() {
		t.Error("a Serve gate is busy after turn_start")
	}
}
