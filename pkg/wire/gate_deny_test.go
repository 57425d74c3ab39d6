package wire

import (
	"strings"
	"testing"
)

// After Deny nothing is approved: answers queued before, and pushed after, go as denials (or
// skips), still one per prompt; tasks and messages are dropped wherever they wait; interrupts
// go. A "!" step calls Deny; "=" shows each answer's line.
func TestGateDeny(t *testing.T) {
	hello := `{"type":"hello","protocolVersion":1,"clientId":"c","readOnly":false,"inFlight":null,"pendingResults":[]}`
	queued := `{"type":"queued","sessionId":"s1","position":0}`
	tests := []struct {
		name  string
		mode  Mode
		steps []gateStep
		want  string // the last "=" step's lines, joined by " "
	}{
		{"an approval queued for a later prompt goes as a denial", Serve, []gateStep{
			{'<', hello}, {'>', "t"}, {'=', "send:t"}, {'<', queued},
			{'<', shellPrompt}, {'<', shellPrompt}, {'>', allow}, {'!', "limit"}, {'>', allow},
			{'=', ""},
		}, deny + " " + deny},
		{"an approval pushed after Deny goes as a denial", Serve, []gateStep{
			{'<', hello}, {'>', "t"}, {'=', "send:t"}, {'<', queued}, {'!', "limit"},
			{'<', shellPrompt}, {'>', allow}, {'=', ""},
		}, deny},
		{"a question's answer goes as a skip", Serve, []gateStep{
			{'<', hello}, {'>', "t"}, {'=', "send:t"}, {'<', queued}, {'!', "limit"},
			{'<', question}, {'>', answerA}, {'=', ""},
		}, `{"type":"question_response","answer":null}`},
		{"held tasks are dropped, and the answer still goes, once", Serve, []gateStep{
			{'<', hello}, {'>', "t"}, {'=', "send:t"}, {'<', queued}, {'>', "u"}, {'>', "v"},
			{'<', shellPrompt}, {'!', "limit"}, {'>', allow}, {'>', allow}, {'=', ""},
		}, deny + " drop:approval_response drop:u(limit) drop:v(limit)"},
		{"an interrupt goes after the pending prompt's answer", Serve, []gateStep{
			{'<', hello}, {'>', "t"}, {'=', "send:t"}, {'<', queued}, {'<', shellPrompt},
			{'!', "limit"}, {'>', `{"type":"interrupt"}`}, {'=', ""}, {'>', allow}, {'=', ""},
		}, deny + " " + `{"type":"interrupt"}`},
		{"a task pushed with nothing in flight is dropped", Serve, []gateStep{
			{'<', hello}, {'!', "limit"}, {'>', "t"}, {'=', ""},
		}, "drop:t(limit)"},
		{"a REPL message is dropped; the first why stays", Stdio, []gateStep{
			{'!', "first"}, {'!', "second"}, {'>', "hello"}, {'=', ""},
		}, "drop:hello(first)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGate(tt.mode)
			if tt.mode != Serve {
				g.Observe(Event{Type: TypeReady, Raw: []byte(replReady)})
			}
			var got []string
			for i, st := range tt.steps {
				switch st.op {
				case '<':
					ev, ok := ParseLine([]byte(st.line)).Event()
					if !ok {
						t.Fatalf("step %d: %q is not an event", i, st.line)
					}
					g.Observe(ev)
				case '>':
					in, _ := ParseInput([]byte(st.line))
					g.Push(in)
				case '!':
					g.Deny(st.line)
				case '=':
					got = got[:0]
					for {
						d, ok := g.Next()
						if !ok {
							break
						}
						switch {
						case d.Action == Drop && answerKind(d.Input.Type) < 0:
							got = append(got, describe(d)+"("+d.Reason+")")
						case d.Action == Drop || d.Input.Type == TypeUserInput:
							got = append(got, describe(d))
						default:
							got = append(got, string(d.Input.Line))
						}
					}
					if st.line != "" && strings.Join(got, " ") != st.line {
						t.Fatalf("step %d: released %q, want %q", i, strings.Join(got, " "), st.line)
					}
				}
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("released %q, want %q", strings.Join(got, " "), tt.want)
			}
			if g.Waiting() != 0 {
				t.Errorf("%d inputs still wait", g.Waiting())
			}
		})
	}
}
