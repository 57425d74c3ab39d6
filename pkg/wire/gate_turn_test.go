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

// Which events end a turn and which leave no prompt pending: one list, used by the Gate and
// by every client.
func TestEndsTurnAndPrompts(t *testing.T) {
	for _, tc := range []struct {
		typ           string
		turn, prompts bool
	}{
		{TypeMessageEnd, true, true},
		{TypeCancelled, true, true},
		{TypeSessEnd, true, true},
		{TypeResult, true, true},
		{TypeError, true, false}, // a failed model call ends the turn; its prompt is still answered
		{TypeReady, false, true},
		{TypeHello, false, true},
		{TypeShellEnd, false, false},
		{TypeTurnStart, false, false},
		{TypeToken, false, false},
		{TypeApproval, false, false},
		{"some_future_event", false, false},
	} {
		if got := EndsTurn(tc.typ); got != tc.turn {
			t.Errorf("EndsTurn(%q) = %v, want %v", tc.typ, got, tc.turn)
		}
		if got := EndsPrompts(tc.typ); got != tc.prompts {
			t.Errorf("EndsPrompts(%q) = %v, want %v", tc.typ, got, tc.prompts)
		}
	}
}

// Running follows what fuseraft says it runs, not what was sent: a message sent makes the
// Gate busy at once, but there is nothing to interrupt until its turn starts.
func TestRunning(t *testing.T) {
	ev := func(g *Gate, raw string) {
		e, ok := ParseLine([]byte(raw)).Event()
		if !ok {
			t.Fatalf("not an event: %s", raw)
		}
		g.Observe(e)
	}
	g := NewGate(Stdio)
	ev(g, `{"type":"ready","protocolVersion":1,"sessionId":"s","model":"m","title":null,"autoTitle":null,"midTurnCommands":[]}`)
	in, _ := ParseInput([]byte("hi"))
	g.Push(in)
	if d, ok := g.Next(); !ok || d.Action != Send {
		t.Fatal("the message was not sent")
	}
	if !g.Busy() || g.Running() {
		t.Errorf("after a message is sent: Busy %v Running %v, want true false", g.Busy(), g.Running())
	}
	steps := []struct {
		raw     string
		running bool
	}{
		{`{"type":"turn_start","text":""}`, true},
		{`{"type":"error","text":"the provider failed"}`, false},
		{`{"type":"shell_start","command":"ls"}`, true},
		{`{"type":"shell_end"}`, false},
		{`{"type":"turn_start","text":""}`, true},
		{`{"type":"message_end","turnIndex":0,"toolCalls":[]}`, false},
	}
	for _, s := range steps {
		ev(g, s.raw)
		if g.Running() != s.running {
			t.Errorf("Stdio after %s: Running %v, want %v", s.raw, g.Running(), s.running)
		}
	}

	b := NewGate(Bridge)
	if b.Running() {
		t.Error("Bridge: running before ready")
	}
	for _, s := range []struct {
		raw     string
		running bool
	}{
		{`{"type":"ready","protocolVersion":1,"sessionId":"s","task":"t","config":null,"resumed":false,"agents":[]}`, true},
		{`{"type":"error","text":"an agent failed"}`, true}, // the run goes on
		{`{"type":"result","sessionId":"s","succeeded":true,"exitCode":0}`, false},
	} {
		ev(b, s.raw)
		if b.Running() != s.running {
			t.Errorf("Bridge after %s: Running %v, want %v", s.raw, b.Running(), s.running)
		}
	}

	sv := NewGate(Serve)
	ev(sv, `{"type":"hello","protocolVersion":1,"clientId":"c","readOnly":false,"inFlight":{"sessionId":"s1","task":"t","status":"running","position":0},"pendingResults":[]}`)
	if !sv.Running() {
		t.Error("Serve: our task in flight is not running")
	}
	ev(sv, `{"type":"result","sessionId":"s1","task":"t","succeeded":true,"errorMessage":null,"lastAgent":null,"lastMessage":null}`)
	if sv.Running() {
		t.Error("Serve: running after its result")
	}
}

// Every event type is a constant, listed once.
func TestEventTypesListedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, typ := range EventTypes() {
		if seen[typ] {
			t.Errorf("%q listed twice", typ)
		}
		seen[typ] = true
	}
	for _, in := range []string{TypeUserInput, TypeApprovalResponse, TypeQuestionResponse, TypeInterrupt} {
		if seen[in] {
			t.Errorf("the input line %q is listed as an event", in)
		}
	}
	if len(seen) != 40 {
		t.Errorf("%d event types, want the protocol page's 40", len(seen))
	}
}
