package worker

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/pkg/wire"
)

var randN = rand.Int64N

// line handles one line from the daemon on this slot's connection.
func (s *slot) line(conn *wire.Conn, ln wire.Line) {
	if ln.Kind != wire.EventLine {
		return // not an event: never data
	}
	ev, _ := ln.Event()
	raw := ln.Raw
	s.mu.Lock()
	j := s.cur
	if j != nil && !j.sent {
		j = nil
	}
	s.mu.Unlock()
	w := s.w
	switch ln.Type {
	case wire.TypeHello:
		s.hello(ln)
	case wire.TypeQueued:
		if j == nil {
			s.untaken(raw)
			return
		}
		sid, _ := wire.TopLevelString(raw, "sessionId")
		s.mu.Lock()
		j.session = sid
		s.mu.Unlock()
		s.taskEvent(j, ev)
		rec := j.rec
		rec.SessionID = quote(sid)
		go fleet.Put(context.Background(), w.kv, rec)
	case wire.TypeResult:
		sid, _ := wire.TopLevelString(raw, "sessionId")
		s.mu.Lock()
		mine := j != nil && j.session != "" && j.session == sid
		s.mu.Unlock()
		if !mine {
			w.warnf("a result for a session this worker is not waiting for (%s): not taken as any task's result", sid)
			return
		}
		s.flushPend() // every event before the result is published before it
		j.end(outcome{result: append([]byte(nil), raw...)})
	case wire.TypeApproval, wire.TypeQuestion:
		if j == nil {
			// Not a prompt of a task of ours: it still gets its one answer, a refusal.
			w.warnf("a %s for no task of this worker: denied", ln.Type)
			conn.Answer(answer(ln.Type, fleet.Deny(raw)))
			conn.Flush()
			return
		}
		s.taskEvent(j, ev)
		s.flushPend() // the prompt is published before it is answered
		prompt := append([]byte(nil), raw...)
		go s.decide(conn, j, ln.Type, prompt)
	case wire.TypeAgentStarting, wire.TypeToolCalling, wire.TypeTokenBudgetWarning, wire.TypeAutoDispatched, wire.TypeA2ACall:
		s.progress(j, ev)
	case wire.TypeTaskResumed:
		sid, _ := wire.TopLevelString(raw, "sessionId")
		if j != nil && sid == j.session {
			s.taskEvent(j, ev)
		} else {
			s.progress(j, ev)
		}
	default:
		s.untakenOr(j, ev)
	}
}

func quote(s string) []byte {
	if s == "" {
		return nil
	}
	b, _ := jsonString(s)
	return b
}

// untaken is an event of this connection for no task of ours: the daemon's, published once
// (by the first slot).
func (s *slot) untaken(raw []byte) {
	if s.i == 0 {
		s.daemonEvent(raw)
	}
}

func (s *slot) untakenOr(j *job, ev wire.Event) {
	if j != nil {
		s.taskEvent(j, ev)
		return
	}
	s.untaken(ev.Raw)
}

// progress places a broadcast progress event: with the task when it is the worker's one task
// in flight (published by the slot that carries it), else with the daemon (by the first slot).
func (s *slot) progress(j *job, ev wire.Event) {
	n := s.w.inflight.Load()
	switch {
	case n == 1 && j != nil:
		s.taskEvent(j, ev)
	case n != 1 && s.i == 0:
		s.daemonEvent(ev.Raw)
	}
}

// taskEvent publishes one event of j, in order.
func (s *slot) taskEvent(j *job, ev wire.Event) {
	w, raw := s.w, ev.Raw
	s.mu.Lock()
	j.seq++
	seq, session := runSeq(j.deliv, j.seq), j.session
	s.mu.Unlock()
	s.queue(fleet.EventSubject(w.o.pool, j.t.TaskID), seq, raw, func() map[string]string {
		hdr := map[string]string{fleet.HeaderHost: w.o.host, fleet.HeaderPool: w.o.pool, fleet.HeaderTask: j.t.TaskID}
		if session != "" {
			hdr[fleet.HeaderSession] = session
		}
		return hdr
	})
	if w.o.budget != nil {
		if err := w.o.budget.Event(context.Background(), j.t.TaskID, ev); err != nil {
			s.limitStop(j, err)
		}
	}
}

// limitStop stops a task past a limit: from now on its prompts are denied by the worker, and
// it is sent an interrupt. An interrupt cancels a turn at most, so each turn the task starts
// past the limit is interrupted as it starts (limitStop is called again).
func (s *slot) limitStop(j *job, err error) {
	s.mu.Lock()
	first := !j.stopped
	if first {
		j.stopped, j.limit, j.why = true, limitOf(err), err.Error()
	}
	conn := s.conn
	s.mu.Unlock()
	if first {
		s.w.warnf("task %s: %v: interrupting it", j.t.TaskID, err)
	}
	if conn != nil {
		conn.Send(wire.Input{Line: wire.Interrupt(), Type: wire.TypeInterrupt})
		conn.Flush()
	}
}

// limitStopTask stops the running task taskID (--max-duration ran out), and reports false when
// this worker has not handed it to its daemon (yet).
func (w *worker) limitStopTask(taskID string, err error) bool {
	for _, s := range w.slots {
		s.mu.Lock()
		j := s.cur
		s.mu.Unlock()
		if j != nil && j.sent && j.t.TaskID == taskID {
			s.limitStop(j, err)
			return true
		}
	}
	return false
}

// decide asks the approver about a prompt and sends its answer; an answer of the wrong kind
// is replaced by a refusal, so the prompt gets exactly one answer and never a wrong one.
func (s *slot) decide(conn *wire.Conn, j *job, typ string, prompt []byte) {
	w := s.w
	s.mu.Lock()
	stopped, why := j.stopped, j.why
	s.mu.Unlock()
	if stopped {
		// A task a limit stopped asks no one: its prompts are denied here, decided by "limit".
		s.refuse(conn, j, typ, prompt, why)
		return
	}
	resp, decider := w.o.approver.Decide(context.Background(), j.t.TaskID, w.o.host, w.o.pool, prompt)
	want := wire.TypeApprovalResponse
	if typ == wire.TypeQuestion {
		want = wire.TypeQuestionResponse
	}
	if got, _ := wire.TopLevelString(resp, "type"); got != want {
		w.warnf("task %s: the approver (%s) answered a %s with %q: denied instead", j.t.TaskID, decider, typ, got)
		resp = fleet.Deny(prompt)
	}
	conn.Answer(wire.Input{Line: resp, Type: want})
	conn.Flush()
}

// refuse denies a prompt of a task a limit stopped (a question is skipped): through the
// approvers' client when it records such denials (the audit stream), else here.
func (s *slot) refuse(conn *wire.Conn, j *job, typ string, prompt []byte, why string) {
	w := s.w
	resp := fleet.Deny(prompt)
	if r, ok := w.o.approver.(fleet.Refuser); ok {
		resp = r.Refuse(context.Background(), j.t.TaskID, w.o.host, w.o.pool, prompt, deciderLimit, why)
	}
	w.warnf("task %s: a %s denied (decided by %s): %s", j.t.TaskID, typ, deciderLimit, why)
	conn.Answer(answer(typ, resp))
	conn.Flush()
}

// deciderLimit decides the prompts of a task a limit stopped.
const deciderLimit = "limit"

func answer(typ string, line []byte) wire.Input {
	if typ == wire.TypeQuestion {
		return wire.Input{Line: line, Type: wire.TypeQuestionResponse}
	}
	return wire.Input{Line: line, Type: wire.TypeApprovalResponse}
}

// hello is a (re)connection. A task sent before it is still ours if the daemon says so (its
// inFlight, or a result waiting for us); otherwise it is handed back.
func (s *slot) hello(ln wire.Line) {
	ev, _ := ln.Event()
	var h wire.Hello
	ev.Decode(&h)
	s.mu.Lock()
	j := s.cur
	s.mu.Unlock()
	if j != nil && j.sent {
		s.mu.Lock()
		sid := j.session
		s.mu.Unlock()
		kept := false
		if s.w.o.daemon.URL != "" {
			switch {
			case h.InFlight != nil && (sid == "" || h.InFlight.SessionID == sid):
				kept = true
				if sid == "" {
					s.mu.Lock()
					j.session = h.InFlight.SessionID
					s.mu.Unlock()
				}
			case sid != "" && slices.Contains(h.PendingResults, sid):
				kept = true
			}
		}
		if !kept {
			j.end(outcome{handBack: "the daemon no longer has the task after the connection dropped"})
		}
	}
	s.setUp()
}

func jsonString(s string) ([]byte, error) { return json.Marshal(s) }

// batchBytes bounds the events put in one message.
const batchBytes = 64 << 10

// queue adds an event to the messages of the batch being read: to the last one when it is for
// the same subject and has room, else to a new one. An event too large to share a message is
// published at once, split when it must be.
func (s *slot) queue(subject string, seq uint64, raw []byte, hdr func() map[string]string) {
	if len(raw) > batchBytes {
		s.flushPend()
		s.w.publish(subject, seq, raw, hdr())
		return
	}
	if n := len(s.pend); n > 0 {
		if p := s.pend[n-1]; p.subject == subject && len(p.data)+1+len(raw) <= batchBytes {
			p.data = append(append(p.data, '\n'), raw...)
			p.n++
			return
		}
	}
	s.pend = append(s.pend, &pendMsg{subject: subject, hdr: hdr(), seq: seq, n: 1, data: append(make([]byte, 0, min(batchBytes, 4*len(raw)+256)), raw...)})
}

// flushPend publishes the messages of the batch read so far.
func (s *slot) flushPend() {
	for _, p := range s.pend {
		if p.n > 1 {
			p.hdr[fleet.HeaderCount] = strconv.Itoa(p.n)
		}
		s.w.publishOwned(p.subject, p.seq, p.data, p.hdr)
	}
	clear(s.pend)
	s.pend = s.pend[:0]
}

// daemonEvent queues a progress event no single task can be named for.
func (s *slot) daemonEvent(raw []byte) {
	w := s.w
	s.queue(fleet.DaemonSubject(w.o.pool, w.daemonID), w.daemonSeq.Add(1), raw, func() map[string]string {
		return map[string]string{fleet.HeaderHost: w.o.host, fleet.HeaderPool: w.o.pool, fleet.HeaderDaemon: w.daemon}
	})
}
