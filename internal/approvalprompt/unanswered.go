package approvalprompt

import (
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// Describe names a prompt event for a line on stderr: "an approval_request (SUMMARY)" or "a
// question"; "" for any other event.
func Describe(ev wire.Event) string {
	switch ev.Type {
	case wire.TypeApproval:
		what := "an approval_request"
		if r, err := wire.DecodeApprovalRequest(ev.Raw); err == nil {
			what += " (" + cmdutil.FirstLine(r.Summary()) + ")"
		}
		return what
	case wire.TypeQuestion:
		return "a question"
	}
	return ""
}

// Unanswered is the warning, in every command that passes prompts on, for a prompt that
// nothing can answer because input has ended: what (Describe) is denied, or a question
// skipped, as fuseraft and its daemon do with nobody to ask.
func Unanswered(what string, question bool) string {
	if question {
		return "input has ended and nobody can answer " + what + "; skipping it"
	}
	return "input has ended and nobody can answer " + what + "; denying it"
}
