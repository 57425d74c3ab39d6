package wire

import (
	"fmt"
	"strings"
	"testing"
)

// A pairing script: "<" an event, ">" an answer pushed, "!" an answer given with Answer, "x"
// Deny called with the line as why, and "=" what Next releases, each as send:LINE or drop:LINE
// with the input's bytes (drop(WHY):LINE when Deny's why, starting "deny:", is the reason), so
// that a test sees which answer went, not just that one did.
func runPairs(t *testing.T, mode Mode, steps []gateStep) {
	t.Helper()
	g := NewGate(mode)
	if mode != Serve {
		g.Observe(Event{Type: TypeReady, Raw: []byte(replReady)})
	}
	for i, st := range steps {
		switch st.op {
		case '<':
			ev, ok := ParseLine([]byte(st.line)).Event()
			if !ok {
				t.Fatalf("step %d: %q is not an event", i, st.line)
			}
			g.Observe(ev)
		case 'x':
			g.Deny(st.line)
		case '>', '!':
			in, ok := ParseInput([]byte(st.line))
			if !ok {
				t.Fatalf("step %d: blank input", i)
			}
			if st.op == '!' {
				g.Answer(in)
			} else {
				g.Push(in)
			}
		case '=':
			var got []string
			for {
				d, ok := g.Next()
				if !ok {
					break
				}
				verb := "send:"
				if d.Action == Drop {
					verb = "drop:"
					if d.Reason == "" {
						t.Errorf("step %d: dropped %s without a reason", i, d.Input.Line)
					}
				}
				if d.Action == Drop && strings.HasPrefix(d.Reason, "deny:") {
					verb = "drop(" + d.Reason + "):" // dropped after Deny
				}
				got = append(got, verb+string(d.Input.Line))
			}
			if g, w := strings.Join(got, " | "), st.line; g != w {
				t.Fatalf("step %d: released\n  %s\nwant\n  %s", i, g, w)
			}
		}
	}
}

func approvalFor(cmd string) string {
	return fmt.Sprintf(`{"type":"approval_request","kind":"shell_command","command":%q}`, cmd)
}

func answerText(text string) string {
	return fmt.Sprintf(`{"type":"question_response","answer":%q}`, text)
}

// TestGatePairsAnswersWithTheirPrompts holds the protocol's hardest rule through reconnects,
// restarts and ended turns: the k-th answer read is the answer to the k-th prompt written, and
// an answer to a prompt that died never answers another one.
func TestGatePairsAnswersWithTheirPrompts(t *testing.T) {
	hello := `{"type":"hello","protocolVersion":1,"clientId":"ci","readOnly":false,"inFlight":null,"pendingResults":[]}`
	rehello := `{"type":"hello","protocolVersion":1,"clientId":"ci","readOnly":false,"inFlight":{"sessionId":"s1","task":"t","status":"running","position":null},"pendingResults":[]}`
	queued := `{"type":"queued","sessionId":"s1","position":0}`
	p1, p2, p3 := approvalFor("go test ./p1"), approvalFor("curl http://x/p2"), approvalFor("go test ./p3")
	allowLine, denyLine := allow, deny
	serve := []struct {
		name  string
		steps []gateStep
	}{
		{"a daemon restart mid-approval: the late answer to the dead copy is dropped, the re-asked copy waits for its own", []gateStep{
			{'<', hello}, {'>', "t"}, {'=', `send:{"type":"user_input","text":"t"}`}, {'<', queued},
			{'<', p1}, {'>', allowLine}, {'=', "send:" + allowLine},
			{'<', p2}, {'<', rehello}, {'<', p2}, // the daemon died and asks p2 again
			{'>', denyLine}, // written for the first copy of p2
			{'=', "drop:" + denyLine},
			{'<', p3}, {'=', ""}, // p3 must not take the answer written for p2's copy
			{'>', denyLine}, // written for the re-asked p2
			{'=', "send:" + denyLine},
			{'>', allowLine}, // written for p3
			{'=', "send:" + allowLine},
		}},
		{"the late answer arrives before the re-asked copy", []gateStep{
			{'<', hello}, {'>', "t"}, {'=', `send:{"type":"user_input","text":"t"}`}, {'<', queued},
			{'<', p2}, {'<', rehello}, {'>', denyLine}, {'=', "drop:" + denyLine},
			{'<', p2}, {'=', ""}, {'>', allowLine}, {'=', "send:" + allowLine},
		}},
		{"both answers read before the re-asked copy is observed", []gateStep{
			{'<', hello}, {'>', "t"}, {'=', `send:{"type":"user_input","text":"t"}`}, {'<', queued},
			{'<', p2}, {'<', rehello}, {'<', p2}, {'>', denyLine}, {'>', allowLine},
			{'=', "drop:" + denyLine + " | send:" + allowLine},
		}},
		{"two restarts in a row", []gateStep{
			{'<', hello}, {'>', "t"}, {'=', `send:{"type":"user_input","text":"t"}`}, {'<', queued},
			{'<', p2}, {'<', rehello}, {'<', p2}, {'<', rehello}, {'<', p2},
			{'>', denyLine}, {'>', denyLine}, {'=', "drop:" + denyLine + " | drop:" + denyLine},
			{'>', allowLine}, {'=', "send:" + allowLine},
		}},
		{"an answer for a prompt not written yet answers nothing", []gateStep{
			{'<', hello}, {'>', "t"}, {'=', `send:{"type":"user_input","text":"t"}`}, {'<', queued},
			{'>', allowLine}, {'=', "drop:" + allowLine}, {'<', p1}, {'=', ""}, {'>', denyLine}, {'=', "send:" + denyLine},
		}},
		{"a result voids the prompt; the next task's prompt waits for its own answer", []gateStep{
			{'<', hello}, {'>', "t"}, {'=', `send:{"type":"user_input","text":"t"}`}, {'<', queued},
			{'<', p1},
			{'<', `{"type":"result","sessionId":"s1","task":"t","succeeded":false,"errorMessage":"x","lastAgent":null,"lastMessage":null}`},
			{'>', "u"}, {'=', `send:{"type":"user_input","text":"u"}`},
			{'<', `{"type":"queued","sessionId":"s2","position":0}`}, {'<', p3},
			{'>', allowLine}, {'=', "drop:" + allowLine}, {'>', denyLine}, {'=', "send:" + denyLine},
		}},
		{"Answer answers the pending prompt whatever was not pushed for a void one", []gateStep{
			{'<', hello}, {'>', "t"}, {'=', `send:{"type":"user_input","text":"t"}`}, {'<', queued},
			{'<', p2}, {'<', rehello}, {'<', p2}, {'!', denyLine}, {'=', "send:" + denyLine},
			{'<', p3}, {'>', allowLine}, {'=', "send:" + allowLine},
		}},
		{"Answer with nothing pending answers nothing", []gateStep{
			{'<', hello}, {'!', denyLine}, {'=', "drop:" + denyLine},
		}},
	}
	for _, tt := range serve {
		t.Run("serve/"+tt.name, func(t *testing.T) { runPairs(t, Serve, tt.steps) })
	}
	end := `{"type":"message_end","turnIndex":1,"toolCalls":[]}`
	q1 := `{"type":"question","question":"Which?","options":["a","b"],"allowOther":false}`
	stdio := []struct {
		name  string
		steps []gateStep
	}{
		{"an answer to a prompt of an ended turn never answers the next turn's", []gateStep{
			{'<', `{"type":"turn_start","text":""}`}, {'<', p1}, {'<', end},
			{'<', `{"type":"turn_start","text":""}`}, {'<', p3},
			{'>', allowLine}, {'>', denyLine}, {'=', "drop:" + allowLine + " | send:" + denyLine},
		}},
		{"a question of a cancelled turn", []gateStep{
			{'<', q1}, {'<', `{"type":"cancelled"}`}, {'<', q1},
			{'>', answerText("a")}, {'=', "drop:" + answerText("a")},
			{'>', answerText("b")}, {'=', "send:" + answerText("b")},
		}},
		{"a new ready voids what the old session asked", []gateStep{
			{'<', p1}, {'<', replReady}, {'<', p3}, {'>', allowLine}, {'>', denyLine},
			{'=', "drop:" + allowLine + " | send:" + denyLine},
		}},
		{"kinds are counted apart", []gateStep{
			{'<', q1}, {'<', p1}, {'>', denyLine}, {'=', ""}, {'>', answerText("a")},
			{'=', "send:" + answerText("a") + " | send:" + denyLine},
		}},
	}
	for _, tt := range stdio {
		t.Run("stdio/"+tt.name, func(t *testing.T) { runPairs(t, Stdio, tt.steps) })
	}
}

// TestGateForgetsVoidPromptsBoundedly: a client that never answers void prompts cannot make
// the Gate grow without bound, and the answers that do come late are still dropped.
func TestGateForgetsVoidPromptsBoundedly(t *testing.T) {
	g := NewGate(Stdio)
	g.Observe(Event{Type: TypeReady, Raw: []byte(replReady)})
	for i := 0; i < 3*maxVoid; i++ {
		g.Observe(Event{Type: TypeApproval, Raw: []byte(shellPrompt)})
		g.Observe(Event{Type: "cancelled", Raw: []byte(`{"type":"cancelled"}`)})
	}
	if len(g.prompts) > maxVoid {
		t.Fatalf("%d prompts remembered, want at most %d", len(g.prompts), maxVoid)
	}
	g.Observe(Event{Type: TypeApproval, Raw: []byte(shellPrompt)})
	// The first late answer is for a prompt forgotten long ago.
	g.Push(Input{Line: []byte(allow), Type: TypeApprovalResponse})
	d, ok := g.Next()
	if !ok || d.Action != Drop {
		t.Fatalf("late answer: %+v %v, want a drop", d, ok)
	}
	if g.Pending() != TypeApproval {
		t.Fatalf("the live prompt is gone: pending %q", g.Pending())
	}
}
