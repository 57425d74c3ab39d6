package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fuseraft/fr/internal/cmd/sim/scenario"
	"github.com/fuseraft/fr/pkg/wire"
)

// daemon is the state of one fr-sim serve: its clients, the task queue, uncollected results.
// One mutex guards it all; the runner goroutine plays one task at a time.
type daemon struct {
	opts options
	warn func(format string, args ...any)

	mu       sync.Mutex
	clients  map[string]*client
	conns    map[*conn]struct{}
	queue    []*task // waiting to run, in order
	running  *task
	results  []*savedResult // uncollected: kept until written to their client's connection
	done     []doneTask     // finished, for the MCP tools (mcp.go)
	wake     chan struct{}
	connSeq  int
	runID    string // tells this run's anonymous connections from an earlier run's
	wg       sync.WaitGroup
	closing  bool // no new connection handlers
	asked    int  // approval_requests sent, for --drop-after-approval
	autoDone bool // the --auto-objective tasks are dispatched
	ownerSeq int  // numbers the clients of tasks nobody sent
	stateDir string
	rec      io.Writer // the record file (written under mu)
	trace    io.Writer // the trace file (written under mu)

	sc       *scenario.Scenario
	pace     float64
	noDelays bool
	crash    *scenario.Crash // set when a crash step or the crashAfter fault fired
	die      func()          // stops the daemon at once (a crash)
}

// client is one dispatcher of tasks: a client id under a bearer token, or a single connection
// without an id (anonymous), which nobody can ever reconnect as.
type client struct {
	key       string
	id        *string
	anonymous bool
	ownerless bool  // the daemon's own (an objective's, an A2A or MCP call's): nobody attends it
	conn      *conn // the current connection; a newer one closes the older
	task      *task // queued or running
	buffered  [][]byte
	notify    chan struct{}
	missed    [][]byte // task_resumed events sent while it was away

	// the approval being asked
	asking    bool
	askID     string // the prompt's id in the trace: sessionId/step/n
	askReq    []byte
	askSentTo *conn
	answered  bool
	answer    []byte
}

// changed wakes whoever waits on the client (the approval loop).
func (c *client) changed() {
	close(c.notify)
	c.notify = make(chan struct{})
}

type task struct {
	sessionID   string
	text        string
	owner       *client
	status      string            // queued, running
	step        int               // the top-level step being played
	answers     []json.RawMessage // the answers its prompts were given so far (null: unattended)
	replayed    int               // how many of answers this run has given back to the player
	resumed     bool
	cancel      context.CancelFunc
	interrupted bool
}

func newSessionID() string {
	var b [8]byte
	rand.Read(b[:])
	return "sim-" + hex.EncodeToString(b[:])
}

func newDaemon(opts options, sc *scenario.Scenario, warn func(string, ...any)) *daemon {
	return &daemon{
		opts:    opts,
		sc:      sc,
		die:     func() {},
		warn:    warn,
		runID:   newSessionID()[len("sim-"):],
		clients: map[string]*client{},
		conns:   map[*conn]struct{}{},
		wake:    make(chan struct{}, 1),
	}
}

// encode applies the dotnet fault to an event the daemon builds itself.
func (d *daemon) encode(b []byte) []byte {
	if d.sc.Faults.DotNet {
		return scenario.DotNetJSON(b)
	}
	return b
}

// ownerlessPrefix starts the key of the clients of tasks nobody sent.
const ownerlessPrefix = "daemon-"

func (d *daemon) clientFor(key string, id *string, anonymous bool) *client {
	c := d.clients[key]
	if c == nil {
		c = &client{key: key, id: id, anonymous: anonymous, ownerless: anonymous && strings.HasPrefix(key, ownerlessPrefix), notify: make(chan struct{})}
		d.clients[key] = c
	}
	return c
}

// restore loads the saved state: unfinished tasks go back in the queue (resumed), results wait
// for their clients.
func (d *daemon) restore() error {
	st, err := loadState(d.stateDir)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, st := range st.Tasks {
		c := d.clientFor(st.Owner, st.ClientID, st.Anonymous)
		t := &task{sessionID: st.SessionID, text: st.Task, owner: c, status: "queued", step: st.Step,
			answers: st.Answers, resumed: st.Status == "running"}
		c.task = t
		d.queue = append(d.queue, t)
	}
	d.results = st.Results
	if d.done, err = loadDone(d.stateDir); err != nil {
		return err
	}
	if len(d.queue) > 0 {
		d.kick()
	}
	return nil
}

// persist writes the state file. Called with d.mu held.
func (d *daemon) persist() {
	st := savedState{Tasks: []savedTask{}, Results: d.results}
	if st.Results == nil {
		st.Results = []*savedResult{}
	}
	add := func(t *task, status string) {
		st.Tasks = append(st.Tasks, savedTask{SessionID: t.sessionID, Task: t.text, Owner: t.owner.key,
			ClientID: t.owner.id, Anonymous: t.owner.anonymous, Status: status, Step: t.step, Answers: t.answers})
	}
	if d.running != nil {
		add(d.running, "running")
	}
	for _, t := range d.queue {
		status := "queued"
		if t.resumed {
			status = "running"
		}
		add(t, status)
	}
	b, _ := json.Marshal(st)
	if err := writeFileAtomic(filepath.Join(d.stateDir, stateFile), append(b, '\n')); err != nil {
		d.warn("cannot save the daemon state: %v", err)
	}
}

func (d *daemon) kick() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *daemon) hello(c *client, readOnly bool) []byte {
	var inFlight any
	if t := c.task; t != nil {
		var pos any
		status := "running"
		if t != d.running {
			status = "queued"
			pos = d.position(t)
		}
		inFlight = json.RawMessage(encodeObject(field{"sessionId", t.sessionID}, field{"task", t.text},
			field{"status", status}, field{"position", pos}))
	}
	pending := []string{}
	for _, r := range d.results {
		if r.Owner == c.key && r.queuedOn == nil {
			pending = append(pending, r.SessionID)
		}
	}
	return encodeEvent(wire.TypeHello, field{"protocolVersion", d.sc.Faults.Version()}, field{"clientId", c.id},
		field{"readOnly", readOnly}, field{"inFlight", inFlight}, field{"pendingResults", pending})
}

func encodeObject(fields ...field) []byte {
	b := encodeEvent("", fields...)
	// encodeEvent starts every object with "type"; an object without one drops it.
	return append([]byte{'{'}, b[len(`{"type":"",`):]...)
}

// position is how many tasks are ahead of t.
func (d *daemon) position(t *task) int {
	n := 0
	if d.running != nil && d.running != t {
		n++
	}
	for _, q := range d.queue {
		if q == t {
			break
		}
		n++
	}
	return n
}

// attach registers a new connection for client key and sends its hello, the results it had not
// collected, and the approval it had pending.
func (d *daemon) attach(cn *conn, key string, id *string, anonymous bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.connSeq++
	cn.seq = d.connSeq
	if anonymous {
		// Unique across restarts, so a new connection is never taken for the owner of a
		// resumed task that came on a connection of an earlier run.
		key = fmt.Sprintf("conn-%s-%d", d.runID, cn.seq)
	}
	c := d.clientFor(key, id, anonymous)
	cn.client = c
	d.conns[cn] = struct{}{}
	id0 := "-"
	if id != nil {
		id0 = *id
	}
	cn.label = fmt.Sprintf("connection %d (%s, client %s)", cn.seq, cn.kind, id0)
	if old := c.conn; old != nil {
		old.closeAfter(closeReplaced, d.encode(encodeEvent(wire.TypeError, field{"text", "a newer connection with this client id replaced this one"})))
		delete(d.conns, old)
		for _, r := range old.takeResults() {
			r.queuedOn = nil // the newer connection gets them
		}
	}
	c.conn = cn
	c.buffered = nil
	cn.send(d.encode(d.hello(c, cn.readOnly)))
	for _, r := range d.results {
		if r.Owner == c.key && r.queuedOn == nil {
			d.deliver(cn, r)
		}
	}
	for _, ev := range c.missed {
		cn.send(ev)
	}
	c.missed = nil
	d.traceEvent("connected", cn, field{"readOnly", cn.readOnly})
	if c.asking && !c.answered {
		d.sendAsk(c)
	}
	c.changed()
	if !d.autoDone && len(d.opts.autoObjectives) > 0 {
		// The daemon's own objectives start once somebody is there to see them.
		d.autoDone = true
		for _, o := range d.opts.autoObjectives {
			t := d.dispatchOwnerless(o.task)
			d.broadcastLocked(d.encode(encodeEvent(wire.TypeAutoDispatched, field{"sessionId", t.sessionID},
				field{"objectiveId", o.id}, field{"task", o.task})))
		}
	}
}

// dispatchOwnerless queues a task no client sent (an objective's, an A2A call's): nobody
// answers its approvals (denied, as unattended) and nobody gets its result. Called with d.mu
// held.
func (d *daemon) dispatchOwnerless(text string) *task {
	d.ownerSeq++
	c := &client{key: fmt.Sprintf("%s%s-%d", ownerlessPrefix, d.runID, d.ownerSeq), anonymous: true, ownerless: true, notify: make(chan struct{})}
	t := &task{sessionID: newSessionID(), text: text, owner: c, status: "queued"}
	c.task = t
	d.queue = append(d.queue, t)
	d.persist()
	d.kick()
	return t
}

// a2aCall queues an A2A call to agent and announces it to every client; it returns the
// call's session id.
func (d *daemon) a2aCall(agent, text string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.dispatchOwnerless(text)
	d.broadcastLocked(d.encode(encodeEvent(wire.TypeA2ACall, field{"agent", agent}, field{"sessionId", t.sessionID})))
	return t.sessionID
}

// detach forgets a closed connection. A client without an id is gone for good.
func (d *daemon) detach(cn *conn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.conns, cn)
	d.traceEvent("closed", cn)
	// Results it was given but did not write go to the client's current connection, or wait
	// for its next one.
	for _, r := range d.results {
		if r.queuedOn != cn {
			continue
		}
		r.queuedOn = nil
		if oc := d.clients[r.Owner]; oc != nil && oc.conn != nil && oc.conn != cn {
			d.deliver(oc.conn, r)
		}
	}
	c := cn.client
	if c == nil || c.conn != cn {
		return
	}
	c.conn = nil
	c.buffered = nil
	if c.anonymous && c.task == nil {
		delete(d.clients, c.key)
	}
	c.changed()
}

// deliver queues result r for cn; it stays saved until written. Called with d.mu held.
func (d *daemon) deliver(cn *conn, r *savedResult) {
	if cn.enqueue(outItem{b: r.Event, result: r}) {
		r.queuedOn = cn
	}
}

// sent is told by a connection's writer what it wrote, and whether the write failed. A
// result written is collected: no longer saved (then traced as delivered). One not written is
// queued for its client's current connection, or waits for its next one. A daemon killed
// between the write and the save sends the result again after the client's next hello: a
// result is never lost, and sent twice only then.
func (d *daemon) sent(cn *conn, batch []outItem, err error) {
	if !hasResult(batch) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		for _, it := range batch {
			r := it.result
			if r == nil || r.queuedOn != cn {
				continue
			}
			r.queuedOn = nil
			if c := d.clients[r.Owner]; c != nil && c.conn != nil && c.conn != cn {
				d.deliver(c.conn, r)
			}
		}
		return
	}
	n := len(d.results)
	kept := d.results[:0]
	for _, r := range d.results {
		if !inBatch(batch, r) {
			kept = append(kept, r)
		}
	}
	for i := len(kept); i < len(d.results); i++ {
		d.results[i] = nil
	}
	d.results = kept
	if len(kept) != n {
		d.persist()
	}
	for _, it := range batch {
		if r := it.result; r != nil {
			d.traceEvent("delivered", cn, field{"sessionId", r.SessionID}, field{"owner", r.ClientID})
		}
	}
}

func hasResult(batch []outItem) bool {
	for _, it := range batch {
		if it.result != nil {
			return true
		}
	}
	return false
}

func inBatch(batch []outItem, r *savedResult) bool {
	for _, it := range batch {
		if it.result == r {
			return true
		}
	}
	return false
}

// slow disconnects a connection whose client does not read, with reason as its last line
// and on stderr.
func (d *daemon) slow(cn *conn, reason string) {
	d.mu.Lock()
	if _, live := d.conns[cn]; !live || cn.dropped {
		d.mu.Unlock()
		return
	}
	d.disconnect(cn, closeSlow, d.encode(encodeEvent(wire.TypeError, field{"text", reason + "; disconnected"})))
	d.mu.Unlock()
	d.warn("%s: %s; disconnected", cn.label, reason)
}

// sendAsk sends the pending approval to the client's connection. Called with d.mu held.
func (d *daemon) sendAsk(c *client) {
	cn := c.conn
	c.askSentTo = cn
	queued := cn.send(c.askReq)
	d.traceEvent("asked", cn, field{"prompt", c.askID}, field{"queued", queued}, field{"line", rawLine(c.askReq)})
	d.asked++
	if d.opts.dropAfterApproval > 0 && d.asked == d.opts.dropAfterApproval {
		d.drop(cn)
		return
	}
	if len(c.buffered) > 0 {
		// A line read while the task ran is the answer, whatever it says.
		ans := c.buffered[0]
		c.buffered = c.buffered[1:]
		d.took(c, cn, ans)
	}
}

// took gives c's pending prompt its answer (nil: nobody answered, a denial) and saves it
// before anything else, so that a restarted daemon never asks it again. Called with d.mu
// held.
func (d *daemon) took(c *client, cn *conn, ans []byte) {
	c.answer, c.answered = ans, true
	if t := c.task; t != nil {
		saved := json.RawMessage("null")
		if ans != nil {
			saved = json.RawMessage(compactJSON(ans))
		}
		t.answers = append(t.answers, saved)
		t.replayed = len(t.answers)
		d.persist()
	}
	if ans == nil {
		d.traceEvent("unanswered", nil, field{"prompt", c.askID}, field{"line", nil})
	} else {
		d.traceEvent("answered", cn, field{"prompt", c.askID}, field{"line", rawLine(ans)})
	}
	c.changed()
}

// compactJSON is a JSON line compacted, or anything else as a JSON string.
func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if json.Valid(b) && json.Compact(&buf, b) == nil {
		return buf.Bytes()
	}
	s, _ := json.Marshal(string(b))
	return s
}

// rawLine is a line for the trace: JSON as it is (compacted), anything else a string.
func rawLine(b []byte) json.RawMessage { return json.RawMessage(compactJSON(b)) }

// drop closes cn after what it was sent, as if the network dropped it: from here on it is
// gone for the daemon, and nothing it sends any more is read. Called with d.mu held.
func (d *daemon) drop(cn *conn) { d.disconnect(cn, closeDropped, nil) }

// disconnect closes cn after what it was queued and last (when not nil): from here on it is
// gone for the daemon, and nothing it sends any more is read. Called with d.mu held.
func (d *daemon) disconnect(cn *conn, how int, last []byte) {
	d.traceEvent("disconnected", cn, field{"reason", map[int]string{closeDropped: "dropped", closeSlow: "slow"}[how]})
	cn.dropped = true
	cn.closeAfter(how, last)
	delete(d.conns, cn)
	for _, r := range cn.takeResults() {
		r.queuedOn = nil // kept for the client's next connection
	}
	if c := cn.client; c != nil && c.conn == cn {
		c.conn = nil
		c.buffered = nil
		if c.anonymous && c.task == nil {
			delete(d.clients, c.key)
		}
		c.changed()
	}
}

// line handles one input line from a connection.
func (d *daemon) line(cn *conn, line []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if cn.dropped {
		return
	}
	d.traceEvent("read", cn, field{"line", rawLine(line)})
	// Recorded once handled: an answer is saved in the state before it is in the record.
	defer d.record(cn, line)
	c := cn.client
	if c == nil || c.conn != cn {
		return // replaced: the older connection's input no longer counts
	}
	l := wire.ParseLine(line)
	if l.Kind == wire.EventLine && l.Type == wire.TypeInterrupt {
		if t := c.task; t != nil && t.cancel != nil {
			t.interrupted = true
			t.cancel()
		}
		return // with nothing running it is dropped
	}
	if cn.readOnly {
		cn.send(d.encode(encodeEvent(wire.TypeError, field{"text", "this connection's token is read-only: it cannot dispatch tasks"})))
		return
	}
	if c.asking && c.askSentTo == cn && !c.answered {
		d.took(c, cn, append([]byte(nil), line...))
		return
	}
	if c.task != nil {
		// Read while the task runs: it will be taken as the answer to the next approval.
		c.buffered = append(c.buffered, append([]byte(nil), line...))
		return
	}
	d.dispatch(c, line)
}

// taskText is what fuseraft takes as the message: the text field, or the line verbatim.
func taskText(line []byte) (text string, ok bool) {
	if json.Valid(line) {
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) == nil {
			if raw, has := m["text"]; has {
				if string(raw) == "null" {
					return "", false
				}
				var s string
				if json.Unmarshal(raw, &s) == nil {
					return s, true
				}
			}
		}
	}
	return string(line), true
}

// dispatch queues a new task for c. Called with d.mu held.
func (d *daemon) dispatch(c *client, line []byte) {
	text, ok := taskText(line)
	if !ok {
		return
	}
	t := &task{sessionID: newSessionID(), text: text, owner: c, status: "queued"}
	c.task = t
	d.queue = append(d.queue, t)
	d.traceEvent("dispatched", c.conn, field{"sessionId", t.sessionID}, field{"task", text})
	if c.conn != nil {
		c.conn.send(d.encode(encodeEvent(wire.TypeQueued, field{"sessionId", t.sessionID}, field{"position", d.position(t)})))
	}
	d.persist()
	d.kick()
}

// broadcast sends a progress event to every connection. Sending never blocks; with stop not
// nil (a task's events) it then paces the task to its readers (see conn.pace).
func (d *daemon) broadcast(ev []byte, stop <-chan struct{}) {
	d.mu.Lock()
	conns := make([]*conn, 0, len(d.conns))
	for cn := range d.conns {
		conns = append(conns, cn)
	}
	d.mu.Unlock()
	for _, cn := range conns {
		cn.send(ev)
	}
	if stop == nil {
		return
	}
	for _, cn := range conns {
		cn.pace(stop)
	}
}

// broadcastLocked is broadcast with d.mu held.
func (d *daemon) broadcastLocked(ev []byte) {
	for cn := range d.conns {
		cn.send(ev)
	}
}

// runner plays queued tasks one at a time until ctx ends.
func (d *daemon) runner(ctx context.Context) {
	for {
		d.mu.Lock()
		var t *task
		if len(d.queue) > 0 {
			t = d.queue[0]
			d.queue = d.queue[1:]
			d.running = t
			t.status = "running"
			d.persist()
		}
		d.mu.Unlock()
		if t == nil {
			select {
			case <-ctx.Done():
				return
			case <-d.wake:
				continue
			}
		}
		if !d.play(ctx, t) {
			return // shutting down: the task stays saved as running
		}
	}
}

// play runs one task. It returns false when the daemon is shutting down mid-task (or
// crashing): the task then stays saved as running, to be resumed.
func (d *daemon) play(ctx context.Context, t *task) bool {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.begin(t, cancel)
	st := d.sc.Serve.TaskFor(t.text)
	if st == nil {
		msg := "no serve task of the scenario matches this task"
		d.finish(t, d.result(t, false, &msg, nil, nil))
		return true
	}
	if st.Uncancellable {
		d.mu.Lock()
		t.cancel = nil // an interrupt is dropped
		d.mu.Unlock()
	}
	faults := d.sc.Faults
	pl := &scenario.Player{Peer: &taskPeer{d: d, t: t, stop: tctx.Done()}, Faults: faults, Pace: d.pace, NoDelays: d.noDelays}
	var failed *string
	cancelled := false
	if faults.Flood > 0 && t.step == 0 {
		out, err := pl.Play(tctx, nil)
		if err != nil || out.Cancelled {
			cancelled = true
		}
		if out.Crash != nil {
			d.crashed(out.Crash)
			return false
		}
	}
	pl.Faults.Flood = 0
	var set *scenario.Result // what the result steps played so far fixed
	// Top-level steps are played one at a time so that the step a task waits at can be saved
	// and a restarted daemon resumes there.
	for i := t.step; i < len(st.Steps) && !cancelled && failed == nil; i++ {
		if i != t.step {
			// A new step: the answers saved were the last step's. Saved at a prompt step, so a
			// restart resumes there rather than replaying the steps before it.
			d.mu.Lock()
			t.step, t.answers, t.replayed = i, nil, 0
			if st.Steps[i].Approval != nil || st.Steps[i].Question != nil || st.Steps[i].Big != nil {
				d.persist()
			}
			d.mu.Unlock()
		}
		out, err := pl.Play(tctx, st.Steps[i:i+1])
		if out.Crash != nil {
			d.crashed(out.Crash)
			return false
		}
		if err != nil || out.Cancelled {
			cancelled = true
		}
		failed = out.Failed
		if out.Result != nil {
			set = set.Over(out.Result)
		}
	}
	if ctx.Err() != nil {
		return false
	}
	d.finish(t, d.outcome(t, st.Result.Over(set), cancelled, failed))
	return true
}

// begin starts playing t, which cancel interrupts: a resumed task is announced to everyone
// (and kept for its owner if it is away).
func (d *daemon) begin(t *task, cancel context.CancelFunc) {
	d.mu.Lock()
	t.cancel = cancel
	if !t.resumed {
		d.mu.Unlock()
		return
	}
	ev := d.encode(encodeEvent(wire.TypeTaskResumed, field{"sessionId", t.sessionID}, field{"task", t.text}))
	if t.owner.conn == nil && !t.owner.anonymous {
		t.owner.missed = append(t.owner.missed, ev)
	}
	d.mu.Unlock()
	d.broadcast(ev, nil)
}

// outcome is the result event of t, played to its end (or cancelled, or failed) with the
// result fields res the scenario and its steps fixed.
func (d *daemon) outcome(t *task, res *scenario.Result, cancelled bool, failed *string) []byte {
	succeeded := true
	var errMsg *string
	switch {
	case cancelled:
		msg := "The task was cancelled."
		succeeded, errMsg = false, &msg
	case failed != nil:
		succeeded, errMsg = false, failed
	case res.Succeeded != nil:
		succeeded = *res.Succeeded
	}
	if errMsg == nil && !succeeded {
		errMsg = res.ErrorMessage
	}
	lastMsg := res.LastMessage
	if lastMsg == nil && succeeded {
		m := "Done: " + t.text
		lastMsg = &m
	}
	return d.result(t, succeeded, errMsg, res.LastAgent, lastMsg, tokenFields(*res)...)
}

func (d *daemon) result(t *task, succeeded bool, errMsg, lastAgent, lastMsg *string, more ...field) []byte {
	return d.encode(encodeEvent(wire.TypeResult, append([]field{{"sessionId", t.sessionID}, {"task", t.text},
		{"succeeded", succeeded}, {"errorMessage", errMsg}, {"lastAgent", lastAgent},
		{"lastMessage", lastMsg}}, more...)...))
}

// tokenFields are the token counts a scenario's result gives, added after the protocol's
// fields as a newer daemon might (protocol v1's serve result has none).
func tokenFields(res scenario.Result) []field {
	var f []field
	if res.InputTokens != nil {
		f = append(f, field{"inputTokens", *res.InputTokens})
	}
	if res.OutputTokens != nil {
		f = append(f, field{"outputTokens", *res.OutputTokens})
	}
	return f
}

// crashed makes the daemon die as a crash step or the crashAfter fault says.
func (d *daemon) crashed(c *scenario.Crash) {
	d.mu.Lock()
	if d.crash == nil {
		d.crash = c
	}
	d.mu.Unlock()
	d.die()
}

// taskPeer is a task's client as the scenario player sees it: events are broadcast, prompts
// go to the client that dispatched the task.
type taskPeer struct {
	d    *daemon
	t    *task
	stop <-chan struct{}
}

func (p *taskPeer) Emit(line []byte) error {
	p.d.broadcast(line, p.stop)
	return nil
}

func (p *taskPeer) Ask(ctx context.Context, prompt []byte) ([]byte, error) {
	return p.d.ask(ctx, p.t, prompt)
}

// Hangup drops the connection of the task's client, as a network would.
func (p *taskPeer) Hangup() error {
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	if cn := p.t.owner.conn; cn != nil {
		p.d.drop(cn)
	}
	return nil
}

// finish delivers a task's result to its client, or keeps it for the client's next hello.
func (d *daemon) finish(t *task, res []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := t.owner
	d.running = nil
	c.task = nil
	d.remember(t, res)
	switch {
	case !c.anonymous:
		r := &savedResult{Owner: c.key, ClientID: c.id, SessionID: t.sessionID, Event: res}
		d.results = append(d.results, r)
		if c.conn != nil {
			d.deliver(c.conn, r)
		}
	case c.conn != nil:
		// Nobody could collect it later: not saved.
		c.conn.enqueue(outItem{b: res, result: &savedResult{Owner: c.key, SessionID: t.sessionID, Event: res}})
	default:
		delete(d.clients, c.key)
	}
	if len(c.buffered) > 0 && c.conn != nil {
		// fuseraft reads the next line after a result as a new task.
		line := c.buffered[0]
		c.buffered = c.buffered[1:]
		d.dispatch(c, line)
	}
	d.persist()
}

// ask sends an approval_request to the task's client and waits for its answer: the next line
// that client sends. Only {"type":"approval_response","approved":true} approves. A client
// whose connection drops is asked again on its next connection within the reconnect grace;
// a client without an id, or nobody within the grace, is a denial (the unattended policy).
func (d *daemon) ask(ctx context.Context, t *task, req []byte) ([]byte, error) {
	c := t.owner
	d.mu.Lock()
	id := fmt.Sprintf("%s/%d/%d", t.sessionID, t.step, t.replayed)
	if t.replayed < len(t.answers) {
		// Answered before a restart: the saved answer, not asked again.
		ans := t.answers[t.replayed]
		t.replayed++
		d.traceEvent("replayed", nil, field{"prompt", id}, field{"line", ans})
		d.mu.Unlock()
		if string(ans) == "null" {
			return nil, io.EOF
		}
		return ans, nil
	}
	c.asking, c.askID, c.askReq, c.askSentTo, c.answered, c.answer = true, id, req, nil, false, nil
	defer func() {
		d.mu.Lock()
		c.asking, c.askReq, c.askSentTo, c.answered, c.answer = false, nil, nil, false, nil
		d.mu.Unlock()
	}()
	var deadline time.Time
	for {
		if c.answered {
			ans := c.answer
			d.mu.Unlock()
			return ans, nil
		}
		switch {
		case c.conn == nil && c.anonymous:
			// Nobody attends it: the unattended policy answers (a denial, or with
			// --unattended-policy allow an approval of the daemon's own tasks).
			ans := d.unattended(c, req)
			d.took(c, nil, ans)
			d.mu.Unlock()
			if ans == nil {
				return nil, io.EOF
			}
			return ans, nil
		case c.conn == nil:
			if deadline.IsZero() {
				deadline = time.Now().Add(d.opts.grace)
			}
			if !time.Now().Before(deadline) {
				d.took(c, nil, nil)
				d.mu.Unlock()
				return nil, io.EOF // nobody to ask: the unattended policy denies
			}
		case c.askSentTo != c.conn:
			deadline = time.Time{}
			d.sendAsk(c)
			continue
		}
		ch := c.notify
		d.mu.Unlock()
		var timer <-chan time.Time
		var tm *time.Timer
		if !deadline.IsZero() {
			tm = time.NewTimer(time.Until(deadline))
			timer = tm.C
		}
		select {
		case <-ch:
		case <-timer:
		case <-ctx.Done():
		}
		if tm != nil {
			tm.Stop()
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		d.mu.Lock()
	}
}

// record appends a line a client sent to the record file in the format of the other modes
// ({"t","mode","line"} for JSON, {"t","mode","text"} otherwise), with the client id, the
// connection's number and its transport.
func (d *daemon) record(cn *conn, line []byte) {
	if d.rec == nil {
		return
	}
	var id *string
	if cn.client != nil {
		id = cn.client.id
	}
	o := scenario.NewObject("t", time.Now().UTC().Format(time.RFC3339Nano), "mode", "serve",
		"client", id, "conn", cn.seq, "transport", cn.kind)
	if json.Valid(line) {
		var buf bytes.Buffer
		if json.Compact(&buf, line) == nil {
			o.Set("line", json.RawMessage(buf.Bytes()))
		} else {
			o.Set("line", json.RawMessage(line))
		}
	} else {
		o.Set("text", string(line))
	}
	d.rec.Write(append(o.Bytes(), '\n'))
}

// traceEvent appends one line to the trace file (--trace): the time, what happened, this
// run of the daemon, the connection (its number, client id and transport; null for none),
// then fields. Called with d.mu held.
func (d *daemon) traceEvent(what string, cn *conn, fields ...field) {
	if d.trace == nil {
		return
	}
	var seq, id, kind any
	if cn != nil {
		seq, kind = cn.seq, cn.kind
		if cn.client != nil && cn.client.id != nil {
			id = *cn.client.id
		}
	}
	all := append([]field{{"t", time.Now().UTC().Format(time.RFC3339Nano)}, {"event", what}, {"run", d.runID},
		{"conn", seq}, {"client", id}, {"transport", kind}}, fields...)
	d.trace.Write(append(encodeObject(all...), '\n'))
}
