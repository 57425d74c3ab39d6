package stream

import (
	"sync"

	"github.com/fuseraft/fr/internal/approvalprompt"
	"github.com/fuseraft/fr/pkg/wire"
)

// unanswered says, once input has ended, each prompt nothing can answer any more: every one
// still waiting then (fuseraft may have asked several before fr-stream saw the end of input)
// and every one that comes after. fuseraft denies them (skips a question) once its stdin is
// closed; the warning is fr-attach's, in the same words (approvalprompt.Unanswered).
type unanswered struct {
	mu    sync.Mutex
	ended bool
	asked []askedPrompt // the prompts since the last event that ended them, described
}

type askedPrompt struct {
	what     string
	question bool
}

// maxAsked bounds what is kept of the prompts asked since the last event that ended them.
const maxAsked = 256

// observe follows an event from fuseraft, and gate, which has the Gate observe it, under the
// same lock: end sees a prompt both in the Gate and here, or in neither, and so says it once.
func (u *unanswered) observe(ss *session, ev wire.Event, gate func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	gate()
	if wire.EndsPrompts(ev.Type) {
		u.asked = u.asked[:0]
	}
	what := approvalprompt.Describe(ev)
	if what == "" {
		return
	}
	a := askedPrompt{what: what, question: ev.Type == wire.TypeQuestion}
	if u.ended {
		u.warn(ss, a)
		return
	}
	if len(u.asked) == maxAsked {
		u.asked = append(u.asked[:0], u.asked[1:]...)
	}
	u.asked = append(u.asked, a)
}

// end is called once input has ended, before fuseraft's stdin is closed: each prompt the Gate
// still waits on is said, newest ones being the ones not answered (answers go in order).
func (u *unanswered) end(ss *session) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ended = true
	waiting := ss.pump.Gate.Unanswered()
	for i, t := range waiting {
		a := askedPrompt{what: approvalprompt.Describe(wire.Event{Type: t}), question: t == wire.TypeQuestion}
		if j := len(u.asked) - len(waiting) + i; j >= 0 && j < len(u.asked) {
			a = u.asked[j]
		}
		u.warn(ss, a)
	}
	u.asked = u.asked[:0]
}

// warn says that a cannot be answered. A prompt a limit denied was said by the limit's line.
func (u *unanswered) warn(ss *session, a askedPrompt) {
	if ss.o.budget != nil && ss.o.budget.Breached() != nil {
		return
	}
	ss.warnf("%s", approvalprompt.Unanswered(a.what, a.question))
}
