package worker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/pkg/wire"
)

// slot is one connection to the daemon and the one task it may carry: the daemon runs one
// task per connection at a time, so --capacity K is K connections.
type slot struct {
	w        *worker
	i        int
	clientID string

	mu     sync.Mutex
	conn   *wire.Conn
	isUp   bool
	up     chan struct{} // closed while the connection is up
	cur    *job
	downAt time.Time
	warned bool

	pend []*pendMsg // events of the batch being read, not yet published (reader only)
}

// pendMsg is one message to publish: one or more events of one subject, newline-separated.
type pendMsg struct {
	subject string
	hdr     map[string]string
	seq     uint64
	n       int
	data    []byte
}

// job is a task handed to the daemon.
type job struct {
	t       fleet.Task
	msg     jetstream.Msg
	rec     fleet.Record
	session string // the daemon's sessionId, once queued
	seq     uint64 // events published: runSeq(delivery, n) is the n-th
	deliv   int    // which delivery of the task this is
	sent    bool
	stopped bool   // a limit interrupted it
	limit   string // the limit, by its flag
	why     string // the limit's breach, for the prompts refused
	done    chan outcome
	once    sync.Once
}

// outcome ends a job: the daemon's result, or why the task goes back to the queue.
type outcome struct {
	result   []byte
	handBack string
}

func (j *job) end(oc outcome) {
	j.once.Do(func() { j.done <- oc })
}

func (s *slot) upChan() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.up
}

// setUp marks the connection usable.
func (s *slot) setUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.isUp {
		s.isUp = true
		close(s.up)
		if s.warned {
			s.w.sayf("the daemon at %s answers again: taking tasks", s.w.daemon)
			s.warned = false
		}
	}
}

// setDown marks the connection lost. A task in flight over the Unix socket is handed back at
// once (its outcome cannot be learned there); over the WebSocket it waits for the connection
// to come back, for --hand-back-after at most.
func (s *slot) setDown(why error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isUp {
		s.isUp = false
		s.up = make(chan struct{})
		s.downAt = time.Now()
	}
	j := s.cur
	if j == nil || !j.sent {
		return
	}
	if s.w.o.daemon.URL == "" {
		j.end(outcome{handBack: fmt.Sprintf("the connection to the daemon dropped (%v); over the Unix socket the task's outcome cannot be learned", why)})
		return
	}
	wait := s.w.o.handBack
	time.AfterFunc(wait, func() {
		s.mu.Lock()
		down := !s.isUp && s.cur == j
		s.mu.Unlock()
		if down {
			j.end(outcome{handBack: fmt.Sprintf("the daemon could not be reached for %s (%v)", wait, why)})
		}
	})
}

// run takes tasks while ctx lasts, one at a time, when the daemon is connected; runCtx bounds
// the task in hand.
func (s *slot) run(ctx, runCtx context.Context) {
	go s.connect(runCtx)
	for {
		select {
		case <-s.upChan():
		case <-ctx.Done():
			return
		}
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		msg, err := s.w.cons.Next(jetstream.FetchContext(fctx))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
				select {
				case <-ctx.Done():
					return
				case <-time.After(250 * time.Millisecond):
				}
			}
			continue
		}
		s.handle(runCtx, msg)
	}
}

// connect dials the daemon and reads it until runCtx ends, dialling again when it must.
func (s *slot) connect(runCtx context.Context) {
	d := s.w.o.daemon
	if d.URL != "" {
		d.ClientID = s.clientID
	}
	d.Ping = 10 * time.Second
	d.MaxReconnects = -1
	d.MaxBackoff = 2 * time.Second
	d.Reconnecting = func(attempt int, _ time.Duration, lost error) {
		if attempt == 1 {
			s.setDown(lost)
		}
	}
	for attempt := 1; runCtx.Err() == nil; attempt++ {
		conn, err := wire.Dial(runCtx, d)
		if err != nil {
			s.mu.Lock()
			first := !s.warned
			s.warned = true
			s.mu.Unlock()
			if first && s.i == 0 {
				s.w.warnf("cannot reach the daemon at %s: %v; no task is taken until it answers", s.w.daemon, err)
			}
			select {
			case <-runCtx.Done():
				return
			case <-time.After(wire.Backoff(attempt, 2*time.Second, randN)):
			}
			continue
		}
		attempt = 0
		s.mu.Lock()
		s.conn = conn
		s.mu.Unlock()
		// Lines are taken a batch at a time (those that had arrived together), and the
		// events of a batch published in as few messages as they fit in.
		for {
			var b []wire.Line
			ok := false
			select {
			case b, ok = <-conn.Batches():
			case <-runCtx.Done():
			}
			if !ok {
				err := conn.Err()
				if err == nil {
					err = runCtx.Err()
				}
				if runCtx.Err() == nil && s.i == 0 {
					s.w.warnf("lost the daemon at %s: %v", s.w.daemon, err)
				}
				s.setDown(err)
				break
			}
			for _, ln := range b {
				s.line(conn, ln)
			}
			s.flushPend()
			conn.Release(b)
			conn.Flush()
		}
		conn.Close()
	}
}

// handle runs one delivered task to its result, or hands it back.
func (s *slot) handle(runCtx context.Context, msg jetstream.Msg) {
	w := s.w
	md, err := msg.Metadata()
	if err != nil {
		w.errorf("a message on %s that is not a JetStream delivery: %v", msg.Subject(), err)
		msg.Term()
		return
	}
	n := int(md.NumDelivered)
	t, perr := fleet.ParseTask(msg.Data())
	if perr != nil {
		if t.TaskID == "" && msg.Headers() != nil {
			if id := msg.Headers().Get("Nats-Msg-Id"); fleet.ValidName(id) {
				t.TaskID = id
			}
		}
		w.errorf("task message %d on %s: %v: not run, terminated", md.Sequence.Stream, msg.Subject(), perr)
		if t.TaskID != "" {
			why := "not run: " + perr.Error()
			s.settle(runCtx, t, fleet.FailedRecord(w.record(t, n), why), workerResult(t, why), runSeq(n, 1<<32-1))
		}
		msg.TermWithReason(perr.Error())
		return
	}
	if n > w.o.maxDeliver {
		times := fmt.Sprintf("%d times", w.o.maxDeliver)
		if w.o.maxDeliver == 1 {
			times = "once"
		}
		why := "delivered " + times + " without a result (--max-deliver): each worker that took it died, or handed it back"
		w.errorf("task %s: %s", t.TaskID, why)
		s.settle(runCtx, t, fleet.FailedRecord(w.record(t, n), why), workerResult(t, why), runSeq(n, 1<<32-1))
		msg.TermWithReason(why)
		return
	}
	if cur, _, ok, err := fleet.Lookup(runCtx, w.kv, t.TaskID); err == nil && ok && fleet.Final(cur.Status) {
		w.sayf("task %s already has its result: acknowledged without running it again", t.TaskID)
		ack(runCtx, msg)
		return
	}
	select {
	case <-s.upChan():
	default:
		msg.NakWithDelay(time.Second)
		return
	}
	rec := w.record(t, n)
	if w.o.budget != nil {
		if err := w.o.budget.Start(runCtx, t.TaskID, w.o.host, w.o.pool); err != nil {
			w.warnf("task %s: %v", t.TaskID, err)
			rec.Limit = limitOf(err)
			s.settle(runCtx, t, fleet.FailedRecord(rec, err.Error()), workerResult(t, err.Error()), runSeq(n, 1<<32-1))
			ack(runCtx, msg)
			return
		}
		defer w.o.budget.End(t.TaskID)
	}
	rec.Status = fleet.StatusRunning
	if _, err := fleet.Put(runCtx, w.kv, rec); errors.Is(err, fleet.ErrFinal) {
		ack(runCtx, msg)
		return
	}
	j := &job{t: t, msg: msg, rec: rec, deliv: n, done: make(chan outcome, 1)}
	w.inflight.Add(1)
	stopBeat := heartbeat(msg, w.o.ackWait)
	line, _ := wire.UserInput(t.Task)
	s.mu.Lock()
	s.cur = j
	conn := s.conn
	j.sent = true
	s.mu.Unlock()
	conn.Send(wire.Input{Line: line, Type: wire.TypeUserInput})
	conn.Flush()
	var oc outcome
	select {
	case oc = <-j.done:
	case <-runCtx.Done():
		oc = outcome{handBack: "the worker stopped before the task finished"}
	}
	s.mu.Lock()
	if s.cur == j {
		s.cur = nil
	}
	seq, session := j.seq, j.session
	rec.Limit = j.limit
	s.mu.Unlock()
	w.inflight.Add(-1)
	if oc.handBack != "" {
		stopBeat()
		w.warnf("task %s handed back to the queue: %s", t.TaskID, oc.handBack)
		msg.NakWithDelay(time.Second)
		return
	}
	// The result is stored before the task is acknowledged; the heartbeat goes on meanwhile,
	// for a server that is restarting.
	fctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rec.SessionID = nil
	if session != "" {
		rec.SessionID = []byte(strconv.Quote(session))
	}
	won, err := w.finish(fctx, t, fleet.ResultRecord(rec, oc.result), oc.result, runSeq(n, seq+1), session)
	stopBeat()
	if err != nil {
		w.errorf("task %s: could not store its result (%v): it will be delivered again", t.TaskID, err)
		return
	}
	if !won {
		w.warnf("task %s already had a result (it ran twice): this run's result was dropped", t.TaskID)
	}
	ack(fctx, msg)
}

// settle stores a result the worker made itself.
func (s *slot) settle(ctx context.Context, t fleet.Task, rec fleet.Record, result []byte, seq uint64) {
	fctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.w.finish(fctx, t, rec, result, seq, ""); err != nil {
		s.w.errorf("task %s: could not store its result: %v", t.TaskID, err)
	}
}

// ack acknowledges a task, trying again while the server is away.
func ack(ctx context.Context, msg jetstream.Msg) {
	for {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := msg.DoubleAck(c)
		cancel()
		if err == nil || ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgAlreadyAckd) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// heartbeat tells JetStream the task is being worked on, four times per ack wait.
func heartbeat(msg jetstream.Msg, ackWait time.Duration) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(ackWait / 4)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				msg.InProgress()
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// runSeq is the Fr-Seq of the n-th event of a task's delivery-th run: a task run again (its
// worker died) numbers its events anew, and a reader must not take them for repeats of the
// first run's.
func runSeq(delivery int, n uint64) uint64 { return uint64(delivery)<<32 | n }
