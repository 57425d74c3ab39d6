package attach

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// limits holds a session to --max-turns, --max-tokens, --max-duration, --max-cost and a
// --budget-file. Over the daemon a turn is an agent_starting while a task of this client is in
// flight (progress events are broadcast, and the daemon runs one task at a time), and a task is
// checked against the limits before it is sent. Past a limit the Gate denies every later
// answer and drops every held task (wire.Gate.Deny), an interrupt goes to our running task,
// fr-attach denies this client's later prompts itself, and it exits 6 once the task has its
// result, or when --grace has passed: the daemon may run a task it did not cancel to its end.
type limits struct {
	b       *budget.Budget // nil: no limits
	grace   time.Duration  // how long a running task may take to end once a limit is reached
	breach  *budget.Breach // once there is one
	timer   <-chan time.Time
	running string // the task that ran at the breach, for the messages
}

// limitFlags are fr-attach's flags for limits: fr-stream's, and how long a task may take to
// end once one is reached.
func limitFlags() []cli.Flag {
	return append(budget.SessionFlags(),
		&cli.DurationFlag{Name: "grace", Value: 60 * time.Second, Usage: "once a limit is reached, wait at most `DUR` for this client's running task to end (its prompts denied meanwhile) before exiting 6"})
}

// newLimits checks the limits the flags ask for: the budget b (nil: none) and --grace.
func newLimits(b *budget.Budget, grace time.Duration, s cmdutil.Streams) (limits, error) {
	if grace < 0 {
		return limits{}, cmdutil.Usagef("--grace must not be negative")
	}
	l := limits{b: b, grace: grace}
	if b != nil && (b.Limits().Tokens > 0 || b.Limits().CostUSD > 0) {
		cmdutil.Warnf(s.Err, prog, "the daemon's events carry no token counts (protocol v1): --max-tokens and --max-cost count only the tokens an event reports")
	}
	return l, nil
}

// startLimits checks the budget before anything is sent: a budget file's totals may have
// reached a limit already, and then no task is sent at all. stop is called on the way out.
func (a *attacher) startLimits() (stop func(), err error) {
	b := a.o.limits.b
	if b == nil {
		return func() {}, nil
	}
	if br := b.Start(); br != nil {
		return nil, br.Err("no task sent")
	}
	a.lim = a.o.limits
	if left, ok := b.Left(); ok {
		a.lim.timer = time.After(left)
	}
	return b.Close, nil
}

// limitTimer is when the limits have something to do: --max-duration runs out, or --grace has
// passed since a limit was reached.
func (a *attacher) limitTimer() <-chan time.Time { return a.lim.timer }

// limitTick is the limit timer going off.
func (a *attacher) limitTick() error {
	a.lim.timer = nil
	if a.lim.breach != nil {
		what := "after --grace " + a.lim.grace.String()
		if a.lim.running != "" {
			what = a.lim.running + " still runs on the daemon " + what + "; its prompts now follow the daemon's unattended policy (deny unless it says allow)"
		}
		a.flush()
		return &errStop{a.lim.breach.Err(what)}
	}
	b := a.lim.b
	if br := b.Tick(); br != nil {
		a.limit(br)
		return nil
	}
	// Other runs sharing a budget file may have used time meanwhile.
	left, _ := b.Left()
	a.lim.timer = time.After(max(left, 100*time.Millisecond))
	return nil
}

// limitEvent counts an event against the limits.
func (a *attacher) limitEvent(ev wire.Event) {
	b := a.lim.b
	if b == nil {
		return
	}
	// Progress events are broadcast; they are ours while a task of ours is in flight. A
	// result comes only to the client whose task it ends.
	if inFlight, _ := a.gate.TaskInFlight(); inFlight || len(a.tasks) > 0 || ev.Type == wire.TypeResult {
		if br := b.Observe(ev); br != nil {
			a.limit(br)
		}
	}
}

// limitHold reports whether input must not be written now: the Gate has seen our task end and
// would send the next one, but the event that ended it is still on its way to us, and the
// limits have not counted it yet. Otherwise, before a held task may go, it checks the limits
// (and the budget file, which other runs may have used up meanwhile).
func (a *attacher) limitHold() bool {
	b := a.lim.b
	if b == nil || a.lim.breach != nil || a.gate.Waiting() == 0 {
		return false
	}
	if inFlight, _ := a.gate.TaskInFlight(); inFlight {
		return false
	}
	if len(a.tasks) > 0 {
		return true
	}
	if br := b.BeforeTurn(); br != nil {
		a.limit(br)
	}
	return false
}

// limitDeny answers the pending prompt with a denial (a question with a skip) once a limit was
// reached, as it arrives. It reports false when there was nothing to do.
func (a *attacher) limitDeny(p string) bool {
	if a.lim.breach == nil {
		return false
	}
	if p == wire.TypeQuestion {
		a.warnf("stopped by a limit: skipping %s", a.lastPrompt)
		a.gate.Answer(wire.Input{Line: wire.QuestionResponse(nil), Type: wire.TypeQuestionResponse})
	} else {
		a.warnf("stopped by a limit: denying %s", a.lastPrompt)
		a.gate.Answer(wire.Input{Line: wire.ApprovalResponse(false), Type: wire.TypeApprovalResponse})
	}
	return true
}

// limitDropped says a task not sent because a limit was reached; false for another drop. An
// answer dropped then is one written for a prompt fr-attach denied already: nothing to say.
func (a *attacher) limitDropped(d wire.Decision) bool {
	switch {
	case a.lim.breach == nil:
		return false
	case isTaskInput(d.Input):
		a.warnf("stopped by a limit: task not sent: %s", taskLabel(d.Input))
	}
	return true
}

// limitStop is how the attach ends once a limit was reached and no task of ours runs any more.
func (a *attacher) limitStop() *errStop {
	if a.lim.breach == nil || len(a.tasks) > 0 || a.gate.Waiting() > 0 {
		return nil
	}
	if inFlight, _ := a.gate.TaskInFlight(); inFlight {
		return nil
	}
	return &errStop{a.lim.breach.Err("")}
}

// limit acts on a limit reached, once: it says so, makes the Gate deny every later answer and
// drop every held task, and interrupts our running task. The daemon need not cancel it
// (protocol v1's interrupt cancels a turn), so fr-attach stays to deny its later prompts.
func (a *attacher) limit(br *budget.Breach) {
	if a.lim.breach != nil {
		return
	}
	a.lim.breach = br
	a.gate.Deny("stopped by " + br.String())
	inFlight, id := a.gate.TaskInFlight()
	if !inFlight {
		cmdutil.Sayf(a.s.Err, prog, "limit reached: %s; no task runs, no more tasks are sent", br)
		return
	}
	a.lim.running = "task " + id
	if id == "" {
		a.lim.running = "our task"
	}
	a.conn.Send(wire.Input{Line: wire.Interrupt(), Type: wire.TypeInterrupt})
	a.lim.timer = time.After(a.lim.grace)
	see := "--socket " + a.o.target.socket
	if a.o.target.url != "" {
		see = "--url " + a.o.target.url
	}
	cmdutil.Sayf(a.s.Err, prog, "limit reached: %s; interrupt sent, but the daemon cannot be made to cancel a task (an interrupt cancels its turn at most): %s may go on running there (watch it with 'fr-attach %s'); every later prompt of this client's tasks is denied, no more tasks are sent, and fr-attach exits 6 once it has its result (within --grace %s)",
		br, a.lim.running, see, a.lim.grace)
}
