package scenario

import (
	"context"
	"testing"
)

// FuzzParse: any input either loads or gives an error; it never panics, and what loads plays.
func FuzzParse(f *testing.F) {
	f.Add(defaultYAML)
	f.Add([]byte(approvalScript))
	f.Add([]byte("version: 1\nrepl: {turns: [{steps: [{emit: {type: x, a: &a [1, *a]}}]}]}\n"))
	f.Add([]byte(`{"version":1,"run":{"steps":[{"question":{"question":"q"},"answers":{"a":[]}}]}}`))
	f.Add([]byte("version: 1\nfaults: {split: {bytes: 0}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse("f.yaml", b)
		if err != nil {
			return
		}
		for _, turn := range s.Repl.Turns {
			if costly(turn.Steps) {
				return
			}
		}
		p := &fakePeer{answers: []string{`{"type":"approval_response","approved":true}`, `x`}}
		pl := &Player{Peer: p, Questions: true, NoDelays: true}
		for _, turn := range s.Repl.Turns {
			if _, err := pl.Play(context.Background(), turn.Steps); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzIsApproval(f *testing.F) {
	for _, s := range []string{`{"type":"approval_response","approved":true}`, `{"type":"approval_response","approved":true,"approved":false}`, `yes`, `{"type":"question_response","answer":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if IsApproval(b) {
			if _, ok := QuestionAnswer(b); ok {
				t.Fatalf("%q is both an approval and a question answer", b)
			}
		}
	})
}

// costly reports steps that would take the fuzzer long: big floods and big events.
func costly(steps []Step) bool {
	for _, s := range steps {
		if (s.Flood != nil && s.Flood.Count > 1000) || (s.Big != nil && s.Big.Bytes > 1<<20) ||
			costly(s.Allow) || costly(s.Deny) || costly(s.Default) {
			return true
		}
		for _, a := range s.Answers {
			if costly(a) {
				return true
			}
		}
	}
	return false
}
