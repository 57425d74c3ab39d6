package policy

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// ByError is the Decider of a prompt denied because deciding it failed: it panicked, or ran
// past the Decider's Timeout. Nothing else about the prompt is known then.
const ByError = "error"

// DefaultTimeout is the wall-clock bound of one decision (fr-approve --decision-timeout).
// Deciding a prompt takes microseconds; the bound is a backstop that is never reached in
// normal use.
const DefaultTimeout = 10 * time.Second

// stepsPerClock is how many steps of work (rules tried, parts judged, pattern positions)
// pass between two readings of the clock against the deadline.
const stepsPerClock = 1024

// errTimeout is what a check of the clock panics with past the deadline; end turns it, like
// any panic, into a denial.
type errTimeout struct{ limit time.Duration }

func (e errTimeout) Error() string {
	return fmt.Sprintf("deciding it took longer than the decision timeout (%s)", e.limit)
}

// startBound starts the wall-clock bound of one decision.
func (d *Decider) startBound() {
	d.steps, d.work = 0, 0
	if d.Timeout > 0 {
		d.started = d.boundNow()
	}
}

// boundNow is the time the bound of a decision is measured with, in nanoseconds: the
// Decider's clock when it has one (tests), else coarseNow, which costs no system call.
func (d *Decider) boundNow() int64 {
	if d.Now != nil {
		return d.Now().UnixNano()
	}
	return coarseNow()
}

// coarseTick is how often the coarse clock is set; a decision is cut off at most that long
// after its Timeout (plus stepsPerClock steps).
const coarseTick = 20 * time.Millisecond

// coarse is a clock for the bound of decisions, which are measured in microseconds and
// bounded in seconds: one goroutine for the whole process sets it every coarseTick while
// decisions read it, and stops when a second has passed without one. Reading it is an atomic
// load, where reading the system's clock twice a prompt would cost a few percent of deciding.
var coarse struct {
	mu      sync.Mutex
	running bool
	used    atomic.Bool
	now     atomic.Int64 // UnixNano
}

// CoarseNow is the clock decisions are bounded with when the Decider has no Now: the time
// (UnixNano) to within coarseTick, read without a system call.
func CoarseNow() int64 { return coarseNow() }

func coarseNow() int64 {
	if !coarse.used.Load() {
		coarse.used.Store(true)
		coarse.mu.Lock()
		if !coarse.running {
			coarse.running = true
			coarse.now.Store(time.Now().UnixNano())
			go coarseLoop()
		}
		coarse.mu.Unlock()
	}
	return coarse.now.Load()
}

func coarseLoop() {
	idle := 0
	for {
		time.Sleep(coarseTick)
		coarse.now.Store(time.Now().UnixNano())
		if coarse.used.Swap(false) {
			idle = 0
			continue
		}
		if idle++; idle*int(coarseTick) < int(time.Second) {
			continue
		}
		coarse.mu.Lock()
		if !coarse.used.Load() {
			coarse.running = false
			coarse.mu.Unlock()
			return
		}
		coarse.mu.Unlock()
	}
}

// step counts n steps of work of the decision under way, and every stepsPerClock steps
// reads the clock: past the Timeout it panics with errTimeout, which the decision's end
// turns into a denial. Steps bound the work between two readings, so a long decision is cut
// short at most stepsPerClock steps after its deadline.
func (d *Decider) step(n int) {
	d.work += n
	d.steps += n
	if d.steps < stepsPerClock {
		return
	}
	d.steps = 0
	d.checkClock()
}

func (d *Decider) checkClock() {
	if d.overdue() {
		panic(errTimeout{d.Timeout})
	}
}

// overdue reports whether the decision under way has run past the Timeout.
func (d *Decider) overdue() bool {
	return d.Timeout > 0 && time.Duration(d.boundNow()-d.started) > d.Timeout
}

// failure is the reason for denying a prompt whose decision panicked with r (recover's value)
// or ran past the Timeout (r == nil). A panic is a bug: it is reported on Warn with where it
// happened.
func (d *Decider) failure(r any) string {
	if e, ok := r.(errTimeout); ok || r == nil {
		if !ok {
			e = errTimeout{d.Timeout}
		}
		return e.Error()
	}
	if d.Warn != nil {
		buf := make([]byte, 8<<10)
		buf = buf[:runtime.Stack(buf, false)]
		d.warn("internal error while deciding a prompt (it gets no allow; please report this): %v\n%s", r, buf)
	}
	return fmt.Sprintf("internal error while deciding it: %v", r)
}
