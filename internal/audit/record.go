// Package audit is fr-approve's audit log: one hash-chained JSON line per decision, written
// whole or not at all, verified, repaired after a write cut short, and read back (by
// fr-approve on start for its limits, and by fr-report). The file format is a contract: the
// fields keep their order, and each line ends with its own hash.
package audit

import (
	"bytes"
	"encoding/json"
	"time"
)

// Record is one line of the audit log. Fields keep this order on disk.
type Record struct {
	Time     string  `json:"time"`
	Session  *string `json:"session"`
	Type     string  `json:"type"` // approval_request, question, or audit_repair (see Cut)
	Kind     string  `json:"kind,omitempty"`
	Summary  string  `json:"summary"`
	Decision string  `json:"decision"` // allow, deny; for questions answer or skip; cut for audit_repair
	Answer   *string `json:"answer,omitempty"`
	Decider  string  `json:"decider"` // rule, person, timeout, no-tty, default, malformed
	// Typed is every line the person typed at the prompt, in order (a typo asked again, then
	// the answer); absent when nobody was asked, and in logs written before it was recorded.
	Typed   []string `json:"typed,omitempty"`
	Rule    string   `json:"rule,omitempty"`
	Part    string   `json:"part,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Charged []string `json:"charged,omitempty"`
	// Cut is set on the record repair-audit appends (type audit_repair): what it cut.
	Cut *Cut `json:"cut,omitempty"`
	// Where a fleet's prompt came from and who decided it (fr-approve --nats).
	Pool     string  `json:"pool,omitempty"`
	Host     string  `json:"host,omitempty"`
	Task     string  `json:"task,omitempty"`
	Prompt   string  `json:"prompt,omitempty"`
	Approver string  `json:"approver,omitempty"`
	Policy   string  `json:"policy"`
	Latency  float64 `json:"latencyMs"`
	Prev     *string `json:"prev"`
	// Hash is the sha256 of the line as it would be without its hash field. It is written
	// after marshalling, never by encoding/json.
	Hash string `json:"-"`
}

// When is the record's time; ok is false when it is not an RFC 3339 time.
func (r *Record) When() (t time.Time, ok bool) {
	t, err := time.Parse(time.RFC3339Nano, r.Time)
	return t, err == nil
}

// TypeRepair is the type of the record repair-audit appends after a cut.
const TypeRepair = "audit_repair"

// Cut says what repair-audit cut from the end of an audit log.
type Cut struct {
	Line   int    `json:"line"`   // the number of the first line cut
	Offset int64  `json:"offset"` // where the bytes cut started
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`          // of the bytes cut
	Saved  string `json:"saved,omitempty"` // the file they were saved to
	Reason string `json:"reason"`          // what was wrong with the first line cut
}

// VerifyResult is what verify-audit prints for an intact chain.
type VerifyResult struct {
	File    string `json:"file"`
	Subject string `json:"subject,omitempty"` // of a chain of an audit stream: its writer's subject
	Lines   int    `json:"lines"`
	OK      bool   `json:"ok"`
	Last    string `json:"last,omitempty"`  // hash of the last line: keep it elsewhere to detect truncation
	Since   *int   `json:"since,omitempty"` // with --head: lines written after that line
	Cut     *Cut   `json:"cut,omitempty"`   // repair-audit: what it cut
}

// Encode is a record's line body, {...}, without escaping <, > and & (people read these):
// what Seal takes.
func Encode(rec *Record) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}
