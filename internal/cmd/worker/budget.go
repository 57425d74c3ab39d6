package worker

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/pkg/wire"
)

// checkBudget reads the limit flags into o.plan (nil: none). Over the daemon a turn is an
// agent_starting, which the daemon broadcasts without a session id: it can be told to be a
// task's only while that task is the one running there, so --max-turns needs --capacity 1.
func checkBudget(c *cli.Context, s cmdutil.Streams, o *options) error {
	p, err := budget.PlanFrom(c, s.Time)
	if err != nil || p == nil {
		return err
	}
	if p.Limits.Turns > 0 && o.capacity > 1 {
		return cmdutil.WithHint(cmdutil.Usagef("--max-turns needs --capacity 1: the daemon's agent_starting names no task, so with %d tasks running its turns cannot be counted against the right one", o.capacity),
			"run one worker per task slot, each with --capacity 1, sharing --budget-kv")
	}
	if p.Limits.Tokens > 0 || p.Limits.CostUSD > 0 {
		cmdutil.Warnf(s.Err, prog, "the daemon's events carry no token counts (protocol v1): --max-tokens and --max-cost count only the tokens an event reports")
	}
	o.plan = p
	return nil
}

// openBudget opens the store of the limits, if any: --budget-kv BUCKET is a bucket on the
// worker's own NATS connection. Without a store the limits hold for this worker process.
func openBudget(ctx context.Context, o *options, js jetstream.JetStream) (*taskBudgets, error) {
	if o.plan == nil {
		return nil, nil
	}
	st, err := o.plan.Open(ctx, js, o.conn.String())
	if err != nil {
		return nil, err
	}
	tb := &taskBudgets{plan: o.plan, store: st, runs: map[string]*budget.Budget{}, timers: map[string]*time.Timer{}}
	if st == nil {
		tb.shared = budget.New(o.plan.Limits, o.plan.Options)
	}
	return tb, nil
}

// taskBudgets is the worker's fleet.Budget: each task is a run of the budget store's totals
// (a Budget of its own, started before the task is handed to the daemon, closed when the
// worker is done with it), or, without a store, a part of the worker's one Budget.
type taskBudgets struct {
	plan   *budget.Plan
	store  budget.Store   // nil: the limits hold for this process
	shared *budget.Budget // without a store: the worker's Budget

	// stop interrupts a running task once --max-duration runs out while it runs (set by the
	// worker; nil: not).
	stop func(taskID string, err error) bool

	mu     sync.Mutex
	runs   map[string]*budget.Budget
	timers map[string]*time.Timer // --max-duration, per running task
}

// Start refuses a task once a limit is reached: the store's totals (or this worker's), checked
// as a turn is about to start, since the task's message starts one.
func (tb *taskBudgets) Start(_ context.Context, taskID, _, _ string) error {
	b := tb.shared
	if b == nil {
		o := tb.plan.Options
		o.Store, o.KeepStore = tb.store, true
		b = budget.New(tb.plan.Limits, o)
	}
	br := b.Breached()
	if br == nil {
		br = b.Start()
	}
	if br == nil {
		br = b.BeforeTurn()
	}
	if br != nil {
		if b != tb.shared {
			b.Close()
		}
		return limitErr(br, "not handed to the daemon")
	}
	tb.mu.Lock()
	tb.runs[taskID] = b
	tb.mu.Unlock()
	if left, ok := b.Left(); ok && tb.stop != nil {
		tb.timeTask(taskID, b, left)
	}
	return nil
}

// timeTask checks --max-duration when it should run out for a running task: with a store,
// other runs' time may have moved it, so it is checked again then; past it, the task is
// stopped as by any limit.
func (tb *taskBudgets) timeTask(taskID string, b *budget.Budget, left time.Duration) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.runs[taskID] != b {
		return // ended meanwhile
	}
	tb.timers[taskID] = time.AfterFunc(max(left, 100*time.Millisecond), func() {
		br := b.Tick()
		if br == nil {
			br = b.Breached()
		}
		if br != nil && tb.stop(taskID, limitErr(br, "")) {
			return
		}
		// not past it yet, or the task not yet handed to its daemon: look again
		if left, ok := b.Left(); ok {
			tb.timeTask(taskID, b, left)
		}
	})
}

// Event counts one event of a task: past a limit, the task is to be interrupted, and so is
// each turn it starts afterwards.
func (tb *taskBudgets) Event(_ context.Context, taskID string, ev wire.Event) error {
	tb.mu.Lock()
	b := tb.runs[taskID]
	tb.mu.Unlock()
	if b == nil {
		return nil
	}
	br := b.Observe(ev)
	if br == nil && budget.StartsTurn(ev.Type) {
		// A limit another task of this worker reached (without a store, one Budget counts
		// them all) stops this one's turns too.
		br = b.Breached()
	}
	if br == nil {
		return nil
	}
	return limitErr(br, "")
}

// End closes the task's run: what the store has not been told yet is written.
func (tb *taskBudgets) End(taskID string) {
	tb.mu.Lock()
	b := tb.runs[taskID]
	delete(tb.runs, taskID)
	if t := tb.timers[taskID]; t != nil {
		t.Stop()
		delete(tb.timers, taskID)
	}
	tb.mu.Unlock()
	if b != nil && b != tb.shared {
		b.Close()
	}
}

// Close closes the store.
func (tb *taskBudgets) Close() {
	if c, ok := tb.store.(interface{ Close() }); ok {
		c.Close()
	}
}

// limitErr is a breach as the task's error: "stopped by --max-turns 9: ...: what".
func limitErr(br *budget.Breach, what string) error {
	return &fleet.LimitError{Limit: br.Limit, Text: br.Err(what).Error()}
}

// limitOf is the limit an error names, if it is a limit.
func limitOf(err error) string {
	if le, ok := err.(*fleet.LimitError); ok {
		return le.Limit
	}
	return ""
}
