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

// Budget is told of each task before it is handed to its daemon, of each of its events, and
// when the worker is done with it (its result stored, or handed back); an error from Start
// fails the task with the error's text (no daemon sees it), one from Event interrupts the
// task, and its later prompts are refused. An error that is a *LimitError names the limit in
// the task's record. nil means no budget.
type Budget interface {
	Start(ctx context.Context, taskID, host, pool string) error
	Event(ctx context.Context, taskID string, ev wire.Event) error
	End(taskID string)
}

// LimitError is a limit the user set, reached: Limit is its flag (--max-turns, --max-tokens,
// --max-duration, --max-cost, or --budget-kv / --budget-file when the store itself failed),
// the text says by what figures.
type LimitError struct {
	Limit string
	Text  string
}

func (e *LimitError) Error() string { return e.Text }

// Refuser is an Approver that can deny a prompt without asking anyone and record it with a
// decider ("limit") and a reason: the worker's own denials of a task stopped by a limit.
type Refuser interface {
	Refuse(ctx context.Context, taskID, host, pool string, raw []byte, decider, reason string) []byte
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
