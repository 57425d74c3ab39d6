package fleetapproval

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fuseraft/fr/pkg/wire"
)

// Whatever an answer holds, what reaches the daemon is one of the responses fr writes itself,
// to the prompt's type, and means what the answer said.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{`{"type":"approval_response","approved":true}`, `{"type":"approval_response","approved":false,"x":1}`,
		`{"type":"question_response","answer":"Yes"}`, `{"type":"question_response","answer":null}`, `{"type":"question_response"}`,
		`{"type":"approval_response","approved":"yes"}`, `{"type":"approval_response","approved":true,"approved":false}`, `[]`, `nul`} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, question bool) {
		typ := wire.TypeApproval
		if question {
			typ = wire.TypeQuestion
		}
		resp, ok := valid(typ, data)
		if !ok {
			return
		}
		if !question {
			if !bytes.Equal(resp, wire.ApprovalResponse(true)) && !bytes.Equal(resp, wire.ApprovalResponse(false)) {
				t.Fatalf("%q gave %q", data, resp)
			}
			var in, out struct{ Approved bool }
			json.Unmarshal(data, &in)
			json.Unmarshal(resp, &out)
			if in.Approved != out.Approved {
				t.Fatalf("%q read as %q", data, resp)
			}
			return
		}
		var in, out struct{ Answer *string }
		json.Unmarshal(data, &in)
		if err := json.Unmarshal(resp, &out); err != nil {
			t.Fatalf("%q gave %q: %v", data, resp, err)
		}
		if (in.Answer == nil) != (out.Answer == nil) || (in.Answer != nil && *in.Answer != *out.Answer) {
			t.Fatalf("%q read as %q", data, resp)
		}
		if !bytes.Equal(resp, wire.QuestionResponse(out.Answer)) {
			t.Fatalf("%q gave %q, not fr's own encoding", data, resp)
		}
	})
}

// A prompt message with any headers is read or refused, never half read.
func FuzzReadPrompt(f *testing.F) {
	f.Add("abc", "2026-12-03T22:00:00Z", "1", "10000", "", "", []byte(`{"type":"question","question":"q"}`))
	f.Add("abc", "bad", "x", "-1", "3", "10", []byte(`{}`))
	f.Add("", "2026-12-03T22:00:00Z", "", "", "", "", []byte(``))
	f.Fuzz(func(t *testing.T, id, deadline, try, timeout, parts, size string, data []byte) {
		m := &nats.Msg{Subject: "fr.approve.p", Reply: "_INBOX.x.r." + id, Data: data, Header: nats.Header{}}
		m.Header.Set(HeaderPrompt, id)
		m.Header.Set(HeaderDeadline, deadline)
		m.Header.Set(HeaderTry, try)
		m.Header.Set(HeaderTimeout, timeout)
		if parts != "" {
			m.Header.Set(HeaderParts, parts)
			m.Header.Set(HeaderSize, size)
			// no connection: a prompt in more than one part cannot be fetched here
			if n, _ := json.Number(parts).Int64(); n > 1 {
				return
			}
		}
		p, err := ReadPrompt(nil, m)
		if err != nil {
			return
		}
		if p.ID != id || p.ID == "" || !bytes.Equal(p.Raw, data) && parts == "" {
			t.Fatalf("read %+v from id %q", p, id)
		}
		if p.Type != wire.TypeApproval && p.Type != wire.TypeQuestion {
			t.Fatalf("type %q", p.Type)
		}
		if p.Deadline.IsZero() || p.Deadline.Before(time.Time{}.Add(time.Nanosecond)) {
			t.Fatalf("no deadline from %q", deadline)
		}
	})
}
