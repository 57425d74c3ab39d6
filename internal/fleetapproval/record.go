package fleetapproval

import (
	"encoding/json"
	"time"

	"github.com/fuseraft/fr/pkg/wire"
)

// Types of the audit records a worker writes beside the decisions themselves.
const (
	// TypeDropped is a decision that reached the worker after another was given for the
	// same prompt (or was late, forged or invalid): it changed nothing.
	TypeDropped = "answer_dropped"
)

// Record is a line of a worker's audit chain: the outcome of one prompt (type
// approval_request or question, as fr-approve's records), or an answer it ignored
// (TypeDropped). The fields fr-approve writes keep their names and order, so verify-audit and
// fr-report read both.
type Record struct {
	Time     string  `json:"time"`
	Session  *string `json:"session"`
	Type     string  `json:"type"`
	Kind     string  `json:"kind,omitempty"`
	Summary  string  `json:"summary"`
	Decision string  `json:"decision"` // allow, deny; answer, skip
	Answer   *string `json:"answer,omitempty"`
	Decider  string  `json:"decider"`
	Reason   string  `json:"reason,omitempty"`
	Outcome  string  `json:"outcome"` // won, dropped, late, forged, invalid, timeout, canceled, refused
	Pool     string  `json:"pool,omitempty"`
	Host     string  `json:"host,omitempty"`
	Task     string  `json:"task,omitempty"`
	Prompt   string  `json:"prompt,omitempty"`
	Approver string  `json:"approver,omitempty"`
	Tries    int     `json:"tries,omitempty"`
	Policy   string  `json:"policy"`
	Latency  float64 `json:"latencyMs"`
	Prev     *string `json:"prev"`
}

// Summary is what a prompt asks, in a few words, as fr-approve's records say it.
func Summary(raw []byte) (kind, summary string) {
	typ, _ := wire.TopLevelString(raw, "type")
	if typ == wire.TypeQuestion {
		if q, ok := wire.TopLevelString(raw, "question"); ok {
			return "", "question: " + q
		}
		return "", "question"
	}
	req, err := wire.DecodeApprovalRequest(raw)
	if err != nil {
		return "", "malformed approval_request"
	}
	return req.Kind, req.Summary()
}

// decision reads a response line as a record's decision and answer.
func decision(resp []byte) (string, *string) {
	var r struct {
		Type     string  `json:"type"`
		Approved bool    `json:"approved"`
		Answer   *string `json:"answer"`
	}
	if json.Unmarshal(resp, &r) != nil {
		return "invalid", nil
	}
	switch {
	case r.Type == wire.TypeQuestionResponse && r.Answer != nil:
		return "answer", r.Answer
	case r.Type == wire.TypeQuestionResponse:
		return "skip", nil
	case r.Approved:
		return "allow", nil
	}
	return "deny", nil
}

// recordOf makes the record of ev; summary is filled in when the prompt is at hand.
func recordOf(ev Event, raw []byte) func(prev *string) []byte {
	rec := Record{Time: time.Now().UTC().Format(time.RFC3339Nano), Type: ev.Type, Decider: ev.Decider,
		Reason: ev.Reason, Outcome: ev.What, Pool: ev.Pool, Host: ev.Host, Task: ev.Task, Prompt: ev.Prompt,
		Approver: ev.Approver, Tries: ev.Tries, Policy: ev.Policy, Latency: float64(ev.Latency.Microseconds()) / 1000}
	if ev.What != Won && ev.What != TimedOut && ev.What != Canceled && ev.What != Refused {
		rec.Type = TypeDropped
	}
	if rec.Type == "" {
		rec.Type = TypeDropped
	}
	rec.Decision, rec.Answer = decision(ev.Response)
	if raw != nil {
		rec.Kind, rec.Summary = Summary(raw)
	}
	return func(prev *string) []byte {
		rec.Prev = prev
		b, _ := json.Marshal(rec)
		return b
	}
}
