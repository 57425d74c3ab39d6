package approve

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseraft/fr/internal/audit"
	"github.com/fuseraft/fr/internal/cmd/approve/policy"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

// A decision checks its own time at bounded points and is denied past --decision-timeout
// (policy.Decider.Timeout). The watchdog is for a decision that does not come back to such a
// point (a file system that hangs while a path is resolved): one goroutine for the whole run
// looks at the prompt being decided now and then, and answers it with a denial (and its audit
// line) once it has run a quarter of the timeout past it. The decision's own answer, if it ever
// comes, is then dropped: each prompt gets exactly one.
type watchdog struct {
	timeout time.Duration
	now     func() int64 // UnixNano: the clock the decisions are bounded with

	// mu is held by the watchdog while it answers; the loop takes it after a decision the
	// watchdog answered, so that it writes nothing before the watchdog is done.
	mu sync.Mutex
	// word is the number of the prompt being decided (gen) and its state: gen<<2 | watchIdle,
	// watchDeciding or watchAnswered. The watchdog answers a prompt by moving its word from
	// deciding to answered, which fails once the loop has moved on.
	word    atomic.Uint64
	gen     uint64       // the loop's count of prompts
	started atomic.Int64 // when the prompt being decided began (now)

	// the prompt being decided, set by the loop before its word says deciding; the watchdog
	// reads them only once it has taken the prompt (the loop then waits for mu)
	raw      []byte
	question bool
	session  *string

	err  error // the watchdog's failure to answer (a closed stdout, a full disk)
	stop chan struct{}
}

const (
	watchIdle uint64 = iota
	watchDeciding
	watchAnswered
)

// watchTicks, when set, gives the watchdog's ticks instead of a ticker: tests send them.
var watchTicks func() <-chan time.Time

// startWatchdog starts the watchdog of srv's decisions, bounded by dec.Timeout.
func (srv *server) startWatchdog(dec *policy.Decider) {
	w := &watchdog{timeout: dec.Timeout, stop: make(chan struct{})}
	w.now = policy.CoarseNow
	if dec.Now != nil {
		clock := dec.Now
		w.now = func() int64 { return clock().UnixNano() }
	}
	var ticks <-chan time.Time
	if watchTicks != nil {
		ticks = watchTicks()
	} else {
		t := time.NewTicker(max(w.timeout/4, 10*time.Millisecond))
		ticks = t.C
		go func() { <-w.stop; t.Stop() }()
	}
	srv.watch = w
	go func() {
		for {
			select {
			case <-w.stop:
				return
			case <-ticks:
				srv.watchOnce()
			}
		}
	}()
}

// begin is called by the loop before it decides the prompt raw.
func (w *watchdog) begin(raw []byte, question bool, session *string) {
	if w == nil {
		return
	}
	w.raw, w.question, w.session = raw, question, session
	w.started.Store(w.now())
	w.gen++
	w.word.Store(w.gen<<2 | watchDeciding)
}

// end is called by the loop once the decision is made; false when the watchdog answered the
// prompt meanwhile (its answer and audit line are written then), and the decision is dropped.
func (w *watchdog) end() bool {
	if w == nil {
		return true
	}
	if w.word.CompareAndSwap(w.gen<<2|watchDeciding, w.gen<<2|watchIdle) {
		return true
	}
	w.mu.Lock() // the watchdog holds it until it has answered
	w.mu.Unlock()
	return false
}

// watchOnce answers the prompt being decided when it has run past the timeout and a quarter.
func (srv *server) watchOnce() {
	w := srv.watch
	cur := w.word.Load()
	// started may already be that of a later prompt, which began later: never too early
	if cur&3 != watchDeciding || time.Duration(w.now()-w.started.Load()) <= w.timeout+w.timeout/4 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.word.CompareAndSwap(cur, cur&^3|watchAnswered) {
		return // the loop has moved on
	}
	// From here to the unlock the loop is inside the decision: the writer and the audit log
	// are the watchdog's.
	reason := fmt.Sprintf("deciding it took longer than the decision timeout (%s) and did not stop; denied", w.timeout)
	now := time.Now()
	rec := audit.Record{Time: now.UTC().Format(time.RFC3339Nano), Session: w.session, Type: wire.TypeApproval,
		Summary: "approval_request", Decision: "deny", Decider: policy.ByError, Reason: reason,
		Policy: "sha256:" + srv.p.SHA256, Latency: float64(time.Duration(w.now()-w.started.Load()).Microseconds()) / 1000}
	resp := wire.ApprovalResponse(false)
	if w.question {
		rec.Type, rec.Summary, rec.Decision = wire.TypeQuestion, "question", "skip"
		resp = wire.QuestionResponse(nil)
		if q, ok := wire.TopLevelString(w.raw, "question"); ok {
			rec.Summary = "question: " + q
		}
	} else if req, err := wire.DecodeApprovalRequest(w.raw); err == nil {
		rec.Kind, rec.Summary = req.Kind, req.Summary()
	}
	srv.denied = true
	if srv.verbose {
		fmt.Fprintf(srv.s.Err, "%s: %s %s (%s)\n", prog, rec.Decision, termsafe.Line(rec.Summary), termsafe.Line(reason))
	}
	if srv.audit != nil {
		w.err = srv.audit.Append(rec)
	}
	// a denial is answered even when its audit line could not be written (the error ends
	// the run once the loop is back)
	if err := srv.out.WriteLine(resp); err != nil && w.err == nil {
		w.err = err
	}
	if err := srv.out.Flush(); err != nil && w.err == nil {
		w.err = err
	}
}
