package wire

import (
	"strings"
	"testing"
)

// A gate script: lines starting with "<" are events from fuseraft, ">" inputs from the user,
// and "=" asserts what Next releases at that point: a comma-separated list of what was sent
// ("send:TEXT" shows a user_input's text or another input's type) and dropped ("drop:TYPE").
type gateStep struct {
	op   byte // '<', '>' or '='
	line string
}

func runGate(t *testing.T, mode Mode, steps []gateStep) {
	t.Helper()
	g := NewGate(mode)
	if mode != Serve {
		g.Observe(Event{Type: TypeReady, Raw: []byte(replReady)})
	}
	for i, st := range steps {
		switch st.op {
		case '<':
			l := ParseLine([]byte(st.line))
			ev, ok := l.Event()
			if !ok {
				t.Fatalf("step %d: %q is not an event", i, st.line)
			}
			g.Observe(ev)
		case '>':
			in, ok := ParseInput([]byte(st.line))
			if !ok {
				t.Fatalf("step %d: blank input", i)
			}
			g.Push(in)
		case '=':
			var got []string
			for {
				d, ok := g.Next()
				if !ok {
					break
				}
				got = append(got, describe(d))
			}
			if strings.Join(got, ",") != st.line {
				t.Fatalf("step %d: released %q, want %q", i, strings.Join(got, ","), st.line)
			}
		}
	}
}

func describe(d Decision) string {
	what := d.Input.Type
	if d.Input.Type == TypeUserInput {
		text, _ := TopLevelString(d.Input.Line, "text")
		what = text
	}
	if d.Action == Drop {
		return "drop:" + what
	}
	return "send:" + what
}

const (
	shellPrompt = `{"type":"approval_request","kind":"shell_command","command":"go test ./..."}`
	question    = `{"type":"question","question":"Which?","options":["a","b"],"allowOther":false}`
	allow       = `{"type":"approval_response","approved":true}`
	deny        = `{"type":"approval_response","approved":false}`
	answerA     = `{"type":"question_response","answer":"a"}`
)

func TestGateStdio(t *testing.T) {
	tests := []struct {
		name  string
		steps []gateStep
	}{
		{"plain text goes at once", []gateStep{{'>', "hello"}, {'=', "send:hello"}}},
		{"typed JSON goes as it is", []gateStep{{'>', `{"type":"user_input","text":"hi"}`}, {'=', "send:hi"}}},
		{"a message typed ahead during an approval waits for the answer", []gateStep{
			{'<', shellPrompt}, {'>', "next message"}, {'=', ""},
			{'>', allow}, {'=', "send:approval_response,send:next message"},
		}},
		{"the answer overtakes waiting input but waiting input keeps its order", []gateStep{
			{'<', shellPrompt}, {'>', "one"}, {'>', "two"}, {'>', deny}, {'=', "send:approval_response,send:one"},
			{'<', `{"type":"message_end","turnIndex":1,"toolCalls":[]}`}, {'=', "send:two"},
		}},
		{"a response with nothing pending is dropped", []gateStep{{'>', allow}, {'=', "drop:approval_response"}}},
		{"a question response with nothing pending is dropped", []gateStep{{'>', answerA}, {'=', "drop:question_response"}}},
		{"exactly one answer per prompt", []gateStep{
			{'<', shellPrompt}, {'>', allow}, {'>', allow}, {'=', "send:approval_response,drop:approval_response"},
		}},
		{"two prompts are answered in order", []gateStep{
			{'<', shellPrompt}, {'<', shellPrompt}, {'>', allow}, {'>', deny}, {'=', "send:approval_response,send:approval_response"},
		}},
		{"an approval response does not answer a question, and answers no approval_request to come", []gateStep{
			{'<', question}, {'>', allow}, {'=', "drop:approval_response"}, {'<', shellPrompt}, {'=', ""},
			{'>', answerA}, {'=', "send:question_response"}, {'>', deny}, {'=', "send:approval_response"},
		}},
		{"a question then an approval", []gateStep{
			{'<', question}, {'<', shellPrompt}, {'>', allow}, {'>', answerA}, {'=', "send:question_response,send:approval_response"},
		}},
		{"interrupt waits while a prompt is pending", []gateStep{
			{'<', shellPrompt}, {'>', `{"type":"interrupt"}`}, {'=', ""}, {'>', deny}, {'=', "send:approval_response,send:interrupt"},
		}},
		{"interrupt goes at once otherwise", []gateStep{{'>', `{"type":"interrupt"}`}, {'=', "send:interrupt"}}},
		{"a turn that ends clears a stale prompt", []gateStep{
			{'<', shellPrompt}, {'>', "later"}, {'=', ""}, {'<', `{"type":"cancelled"}`}, {'=', "send:later"},
		}},
		{"message_end clears a stale prompt", []gateStep{
			{'<', shellPrompt}, {'<', `{"type":"message_end","turnIndex":1,"toolCalls":[]}`}, {'>', "x"}, {'=', "send:x"},
		}},
		{"unknown input types pass when nothing is pending", []gateStep{{'>', `{"type":"future_input"}`}, {'=', "send:future_input"}}},
		{"other events change nothing", []gateStep{
			{'<', `{"type":"token","text":"hi"}`}, {'>', "x"}, {'=', "send:x"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runGate(t, Stdio, tt.steps) })
	}
}

func TestGateServe(t *testing.T) {
	hello := `{"type":"hello","protocolVersion":1,"clientId":"ci-1","readOnly":false,"inFlight":null,"pendingResults":[]}`
	tests := []struct {
		name  string
		steps []gateStep
	}{
		{"a second task waits for the first one's result", []gateStep{
			{'<', hello}, {'>', "task one"}, {'>', "task two"}, {'=', "send:task one"},
			{'<', `{"type":"queued","sessionId":"s1","position":0}`}, {'=', ""},
			{'<', shellPrompt}, {'>', allow}, {'=', "send:approval_response"},
			{'<', `{"type":"result","sessionId":"s1","task":"task one","succeeded":true,"errorMessage":null,"lastAgent":"A","lastMessage":"ok"}`},
			{'=', "send:task two"},
		}},
		{"an answer with nothing pending is dropped, not kept behind a held task for a later prompt", []gateStep{
			{'<', hello}, {'>', "task one"}, {'=', "send:task one"},
			{'<', `{"type":"queued","sessionId":"s1","position":0}`},
			{'>', "task two"}, {'>', allow}, {'=', "drop:approval_response"},
			{'<', `{"type":"approval_request","kind":"shell_command","command":"rm -rf ~"}`}, {'=', ""},
			{'>', deny}, {'=', "send:approval_response"},
		}},
		{"a task in flight in hello holds new tasks", []gateStep{
			{'<', `{"type":"hello","protocolVersion":1,"clientId":"c","readOnly":false,"inFlight":{"sessionId":"s9","task":"t","status":"running","position":null},"pendingResults":[]}`},
			{'>', "new"}, {'=', ""},
			{'<', `{"type":"result","sessionId":"s9","task":"t","succeeded":true,"errorMessage":null,"lastAgent":null,"lastMessage":null}`},
			{'=', "send:new"},
		}},
		{"a pending result is not our live task's result", []gateStep{
			{'<', `{"type":"hello","protocolVersion":1,"clientId":"c","readOnly":false,"inFlight":null,"pendingResults":["old"]}`},
			{'>', "a"}, {'>', "b"}, {'=', "send:a"},
			{'<', `{"type":"result","sessionId":"old","task":"t","succeeded":true,"errorMessage":null,"lastAgent":null,"lastMessage":null}`},
			{'=', ""},
			{'<', `{"type":"queued","sessionId":"s2","position":1}`},
			{'<', `{"type":"result","sessionId":"s2","task":"a","succeeded":false,"errorMessage":"x","lastAgent":null,"lastMessage":null}`},
			{'=', "send:b"},
		}},
		{"a read-only token drops tasks", []gateStep{
			{'<', `{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":true,"inFlight":null,"pendingResults":[]}`},
			{'>', "task"}, {'=', "drop:task"},
		}},
		{"a reconnect voids the old prompt; the daemon asks again", []gateStep{
			{'<', hello}, {'>', "t"}, {'=', "send:t"}, {'<', `{"type":"queued","sessionId":"s1","position":0}`},
			{'<', shellPrompt},
			{'<', `{"type":"hello","protocolVersion":1,"clientId":"ci-1","readOnly":false,"inFlight":{"sessionId":"s1","task":"t","status":"running","position":null},"pendingResults":[]}`},
			{'>', allow}, {'=', "drop:approval_response"},
			{'<', shellPrompt}, {'>', allow}, {'=', "send:approval_response"},
		}},
		{"after a reconnect, a task the daemon finished meanwhile is over", []gateStep{
			{'<', hello}, {'>', "t"}, {'>', "u"}, {'=', "send:t"}, {'<', `{"type":"queued","sessionId":"s1","position":0}`},
			{'<', `{"type":"hello","protocolVersion":1,"clientId":"ci-1","readOnly":false,"inFlight":null,"pendingResults":["s1"]}`},
			{'=', ""},
			{'<', `{"type":"result","sessionId":"s1","task":"t","succeeded":true,"errorMessage":null,"lastAgent":null,"lastMessage":null}`},
			{'=', "send:u"},
		}},
		{"a task the daemon never confirmed before a reconnect is not in flight", []gateStep{
			{'<', hello}, {'>', "t"}, {'>', "u"}, {'=', "send:t"},
			{'<', hello}, {'=', "send:u"},
		}},
		{"interrupts are never held as tasks", []gateStep{
			{'<', hello}, {'>', "t"}, {'=', "send:t"}, {'>', `{"type":"interrupt"}`}, {'=', "send:interrupt"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runGate(t, Serve, tt.steps) })
	}
}

func TestGateAccessors(t *testing.T) {
	g := NewGate(Serve)
	g.Observe(Event{Type: TypeHello, Raw: []byte(`{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":true,"inFlight":{"sessionId":"s","task":"t","status":"queued","position":2},"pendingResults":[]}`)})
	if !g.ReadOnly() {
		t.Error("ReadOnly false")
	}
	if in, id := g.TaskInFlight(); !in || id != "s" {
		t.Errorf("TaskInFlight %v %q", in, id)
	}
	g.Observe(Event{Type: TypeQuestion, Raw: []byte(question)})
	if g.Pending() != TypeQuestion {
		t.Errorf("Pending %q", g.Pending())
	}
	g.Push(Input{Line: []byte("x"), Type: TypeUserInput})
	if g.Waiting() != 1 {
		t.Errorf("Waiting %d", g.Waiting())
	}
	if _, ok := g.Next(); ok {
		t.Error("released input while a question is pending")
	}
	// A malformed hello changes nothing but voids prompts.
	g.Observe(Event{Type: TypeHello, Raw: []byte(`{"type":"hello","readOnly":"yes"}`)})
	if g.Pending() != "" || !g.ReadOnly() {
		t.Errorf("after malformed hello: pending %q readOnly %v", g.Pending(), g.ReadOnly())
	}
}

func TestGateReadOnlyErrorEndsTask(t *testing.T) {
	// The daemon may say readOnly only by answering the task with an error.
	g := NewGate(Serve)
	g.readOnly = false
	g.Push(Input{Line: []byte(`{"type":"user_input","text":"t"}`), Type: TypeUserInput})
	if d, ok := g.Next(); !ok || d.Action != Send {
		t.Fatal("first task not sent")
	}
	g.readOnly = true
	g.Observe(Event{Type: TypeError, Raw: []byte(`{"type":"error","text":"read-only token"}`)})
	if in, _ := g.TaskInFlight(); in {
		t.Error("task still in flight after the daemon refused it")
	}
}

func TestParseInput(t *testing.T) {
	tests := []struct {
		in, wantType, wantLine string
		ok                     bool
	}{
		{"hello world", TypeUserInput, `{"type":"user_input","text":"hello world"}`, true},
		{"say \"hi\" <now>", TypeUserInput, `{"type":"user_input","text":"say \"hi\" \u003cnow\u003e"}`, true},
		{"  /title Fix it  \r", TypeUserInput, `{"type":"user_input","text":"  /title Fix it  "}`, true},
		{` {"type":"approval_response","approved":true} `, TypeApprovalResponse, `{"type":"approval_response","approved":true}`, true},
		{`{"text":"no type"}`, "", `{"text":"no type"}`, true},
		{`{broken json`, TypeUserInput, `{"type":"user_input","text":"{broken json"}`, true},
		{`["an","array"]`, TypeUserInput, `{"type":"user_input","text":"[\"an\",\"array\"]"}`, true},
		{"", "", "", false},
		{" \t\r", "", "", false},
	}
	for _, tt := range tests {
		in, ok := ParseInput([]byte(tt.in))
		if ok != tt.ok || in.Type != tt.wantType || string(in.Line) != tt.wantLine {
			t.Errorf("ParseInput(%q) = %q %s %v, want %q %s %v", tt.in, in.Type, in.Line, ok, tt.wantType, tt.wantLine, tt.ok)
		}
	}
}
