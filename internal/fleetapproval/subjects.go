// Package fleetapproval carries a fleet's approval prompts over NATS: a worker's Client sends
// each prompt of its tasks to the approvers of its pool and hands the daemon exactly one answer,
// and an Approver, one member of the pool's queue group, decides them. It also keeps the
// fleet's audit trail on a JetStream stream, one hash chain per writer.
//
// The wire between them, all on core NATS request/reply:
//
//   - a prompt is a message on fr.approve.POOL (queue group fr-approve) whose data is the
//     daemon's line, unchanged, with the headers Fr-Prompt-Id (made by the worker), Fr-Task,
//     Fr-Host, Fr-Pool, Fr-Try (1, 2, ... as it is re-sent) and Fr-Deadline (RFC 3339, after
//     which the worker has answered it itself). Its reply subject is the worker's, one per
//     prompt;
//   - a prompt larger than the server's maximum payload goes in parts: the message carries
//     the first part with Fr-Parts, Fr-Size, Fr-Sha256 and Fr-Fetch, a subject the approver
//     asks for each further part (the part's number as the data). Nothing is ever cut;
//   - the answer is the response line (approval_response, question_response) with
//     Fr-Prompt-Id, Fr-Decider ("rule:NAME", "default", "person", ...) and Fr-Approver. An
//     approver that asks a person first sends Fr-Status: progress now and then, so the worker
//     waits for the person rather than re-send;
//   - prompts a policy asks about go to fr.approve.POOL.ask (queue group fr-approve-ask),
//     the same message, for an interactive approver.
package fleetapproval

import (
	"fmt"
	"github.com/fuseraft/fr/internal/fleet"
	"strings"
)

// Headers of the messages.
const (
	HeaderPrompt   = "Fr-Prompt-Id"
	HeaderTask     = "Fr-Task"
	HeaderHost     = "Fr-Host"
	HeaderPool     = "Fr-Pool"
	HeaderTry      = "Fr-Try"
	HeaderDeadline = "Fr-Deadline"
	HeaderTimeout  = "Fr-Timeout" // the worker's wait per try, so an approver knows how often to say it is still at it
	HeaderParts    = "Fr-Parts"
	HeaderSize     = "Fr-Size"
	HeaderSHA256   = "Fr-Sha256"
	HeaderFetch    = "Fr-Fetch"
	HeaderDecider  = "Fr-Decider"
	HeaderApprover = "Fr-Approver"
	HeaderPolicy   = "Fr-Policy" // the sha256 of the approver's policy
	HeaderStatus   = "Fr-Status"
	HeaderRule     = "Fr-Rule"   // on a prompt sent to the ask subject: the rule that asks
	HeaderReason   = "Fr-Reason" // and why
)

// StatusProgress is the Fr-Status of a reply that is not an answer: the approver is still at
// it (a person is being asked).
const StatusProgress = "progress"

// Queue groups of the prompt and ask subjects.
const (
	QueueGroup    = "fr-approve"
	AskQueueGroup = "fr-approve-ask"
)

// DefaultPool is the pool of a fleet that names none.
const DefaultPool = fleet.DefaultPool

// PromptSubject is the subject a pool's prompts are sent on.
func PromptSubject(pool string) string { return "fr.approve." + pool }

// AskSubject is the subject a pool's prompts go to when a policy asks a person.
func AskSubject(pool string) string { return "fr.approve." + pool + ".ask" }

// AuditSubject is the subject of one writer's audit chain in the audit stream.
func AuditSubject(pool, writer string) string { return "fr.audit." + pool + "." + writer }

// AuditSubjects is what the audit stream holds.
const AuditSubjects = "fr.audit.>"

// DefaultAuditStream is the name of the audit stream.
const DefaultAuditStream = "FR_AUDIT"

// ValidToken checks a pool name or writer id: one NATS subject token of letters, digits, '-'
// and '_' (no dots, spaces or wildcards), at most 64 bytes.
func ValidToken(what, s string) error {
	switch {
	case fleet.ValidName(s):
		return nil
	case s == "":
		return fmt.Errorf("%s is empty", what)
	case len(s) > 64:
		return fmt.Errorf("%s %q is longer than 64 bytes", what, s)
	}
	return fmt.Errorf("%s %q: only letters, digits, - and _ are allowed", what, s)
}

// Token makes a subject token of s (a host name): every byte ValidToken refuses becomes '_'.
func Token(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 48 {
			break
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
