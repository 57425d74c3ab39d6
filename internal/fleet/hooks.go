package fleet

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/fuseraft/fr/pkg/wire"
)

// Approver answers the approval prompts and questions of a worker's tasks.
type Approver interface {
	// Decide returns the response line (approval_response / question_response JSON, one
	// line, no newline) to send to the daemon for the prompt `raw` (the daemon's line,
	// unchanged), and who decided ("rule:NAME", "person", "timeout", "limit", ...).
	Decide(ctx context.Context, taskID, host, pool string, raw []byte) (response []byte, decider string)
}

// Budget is told of each task before it is handed to its daemon and of each of its events;
// an error from Start fails the task with the error's text (no daemon sees it), one from
// Event interrupts the task. nil means no budget.
type Budget interface {
	Start(ctx context.Context, taskID, host, pool string) error
	Event(ctx context.Context, taskID string, raw []byte) error
}

// DenyAll is the Approver of a worker that has none: every prompt is denied (a question
// skipped), decided by "no-approver", and the first one is reported on Warn's writer.
type DenyAll struct {
	Warn io.Writer
	Prog string
	once sync.Once
}

// Decide denies.
func (d *DenyAll) Decide(_ context.Context, taskID, _, _ string, raw []byte) ([]byte, string) {
	d.once.Do(func() {
		if d.Warn != nil {
			fmt.Fprintf(d.Warn, "%s: warning: no approver is configured: every approval prompt is denied and every question skipped (task %s asked first)\n", d.Prog, taskID)
		}
	})
	return Deny(raw), "no-approver"
}

// Deny is the answer that refuses the prompt raw: a denial for an approval_request, a skip
// for a question (anything else is treated as an approval_request, whose denial is safe).
func Deny(raw []byte) []byte {
	t, _ := wire.TopLevelString(raw, "type")
	return wire.Refusal(t).Line
}
