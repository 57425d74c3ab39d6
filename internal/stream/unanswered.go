package stream

import (
	"sync"

	"github.com/fuseraft/fr/internal/prompt"
	"github.com/fuseraft/fr/pkg/wire"
)

// unanswered says, once input has ended, each prompt nothing can answer any more: the one
// pending then and every one that comes after. fuseraft denies them (skips a question) once
// its stdin is closed; the warning is fr-attach's, in the same words (prompt.Unanswered).
type unanswered struct {
	mu     sync.Mutex
	ended  bool
	what   string // the latest prompt, described; "" once an event ended it
	warned bool   // what has been said
}

// observe follows an event from fuseraft, after the Gate has.
func (u *unanswered) observe(ss *session, ev wire.Event) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if wire.EndsPrompts(ev.Type) {
		u.what, u.warned = "", false
	}
	if what := prompt.Describe(ev); what != "" {
		u.what, u.warned = what, false
		if u.ended {
			u.warn(ss, ev.Type == wire.TypeQuestion)
		}
	}
}

// end is called once input has ended, before fuseraft's stdin is closed.
func (u *unanswered) end(ss *session) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ended = true
	if p := ss.pump.Gate.Pending(); p != "" {
		if u.what == "" {
			u.what = prompt.Describe(wire.Event{Type: p})
		}
		u.warn(ss, p == wire.TypeQuestion)
	}
}

// warn says what is pending, once. A prompt a limit denied was said by the limit's line.
func (u *unanswered) warn(ss *session, question bool) {
	if u.warned || (ss.o.budget != nil && ss.o.budget.Breached() != nil) {
		return
	}
	u.warned = true
	ss.warnf("%s", prompt.Unanswered(u.what, question))
}
