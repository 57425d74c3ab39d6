package fleetapproval

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fuseraft/fr/pkg/wire"
)

// Defaults of the worker's waits.
const (
	DefaultTimeout  = 10 * time.Second // per try: then the prompt is sent again
	DefaultDeadline = 60 * time.Second // in all: then the worker denies it
)

// Deciders the worker names itself.
const (
	ByTimeout  = "timeout"  // no approver answered before the deadline
	ByCanceled = "canceled" // the worker stopped waiting (its context ended)
	ByAudit    = "audit"    // the decision could not be recorded, so it was refused
	ByLimit    = "limit"    // the fleet is at a budget limit: the worker denies its prompts itself
)

// What a Client reports of each answer it gets (Event.What).
const (
	Won      = "won"      // the answer given to the daemon
	Dropped  = "dropped"  // a decision for a prompt already answered: a re-sent prompt decided twice
	Late     = "late"     // a decision that came after the worker denied the prompt at the deadline
	Forged   = "forged"   // an answer for a prompt this worker never asked, or whose id does not match
	Invalid  = "invalid"  // an answer that is not a response to the prompt's type
	TimedOut = "timeout"  // nobody answered by the deadline: denied
	Canceled = "canceled" // the worker stopped waiting: denied
	Refused  = "refused"  // the worker denied it without asking (Refuse)
)

// Event is one thing a Client saw happen to a prompt's answers.
type Event struct {
	What     string
	Prompt   string // the prompt id
	Task     string
	Host     string
	Pool     string
	Type     string // the prompt's type, approval_request or question
	Decider  string
	Approver string
	Policy   string // the approver's policy, sha256:HEX
	Response []byte // the answer received (or given, for Won, TimedOut and Canceled)
	Tries    int
	Latency  time.Duration // from the first try to this answer
	Reason   string
}

// Client is a worker's side: it sends prompts to the approvers of a pool and waits for one
// answer each. It is safe for concurrent use; each Decide is one prompt.
type Client struct {
	nc       *nats.Conn
	pool     string
	timeout  time.Duration
	deadline time.Duration
	log      func(Event)
	audit    *Chain
	host     string
	now      func() time.Time

	inbox string
	sub   *nats.Subscription

	mu      sync.Mutex
	pending map[string]*pending
	recent  map[string]string // prompt id -> Won or TimedOut, for the answers still to come
	order   []string          // recent's ids, oldest first
}

// recentKept is how many answered prompts a Client remembers, to tell a late or second
// answer from a forged one.
const recentKept = 1 << 16

type pending struct {
	ev      Event
	replies chan *nats.Msg
	raw     []byte
	parts   [][]byte // a prompt sent in parts: what an approver fetches
}

// Option sets up a Client.
type Option func(*Client)

// WithTimeout sets how long one try waits before the prompt is sent again (--approval-timeout).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithDeadline sets how long a prompt waits in all before it is denied (--approval-deadline).
func WithDeadline(d time.Duration) Option { return func(c *Client) { c.deadline = d } }

// WithLog is told of every answer: the one that won, and the others, dropped, late, forged or
// invalid, which are otherwise ignored. It is called from the Client's goroutines.
func WithLog(f func(Event)) Option { return func(c *Client) { c.log = f } }

// WithAudit records each prompt's outcome, and every answer ignored, in an audit chain.
func WithAudit(ch *Chain) Option { return func(c *Client) { c.audit = ch } }

// NewClient makes the Client of a worker on nc; pool is the pool of prompts Decide is given
// without one.
func NewClient(nc *nats.Conn, pool string, opts ...Option) (*Client, error) {
	if pool == "" {
		pool = DefaultPool
	}
	if err := ValidToken("pool", pool); err != nil {
		return nil, err
	}
	c := &Client{nc: nc, pool: pool, timeout: DefaultTimeout, deadline: DefaultDeadline, now: time.Now,
		pending: map[string]*pending{}, recent: map[string]string{}}
	for _, o := range opts {
		o(c)
	}
	if c.timeout <= 0 || c.deadline <= 0 {
		return nil, errors.New("the approval timeout and deadline must be positive")
	}
	c.inbox = nc.NewInbox() // its own: never the connection's request inbox, which JetStream uses
	sub, err := nc.Subscribe(c.inbox+".>", c.incoming)
	if err != nil {
		return nil, err
	}
	sub.SetPendingLimits(-1, -1) // every answer is looked at: none is dropped unseen
	c.sub = sub
	return c, nil
}

// Close stops taking answers. Prompts still waiting are denied at their deadline.
func (c *Client) Close() error { return c.sub.Unsubscribe() }

func newID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Decide sends the prompt raw (the daemon's line, unchanged) of task to the approvers of pool
// (the Client's when empty) and returns the one response line to send the daemon, and who
// decided. It always returns an answer: past the deadline, or when ctx ends, it is a denial
// (a question is skipped) decided by "timeout" or "canceled".
func (c *Client) Decide(ctx context.Context, taskID, host, pool string, raw []byte) (response []byte, decider string) {
	if pool == "" {
		pool = c.pool
	}
	start := c.now()
	typ, _ := wire.TopLevelString(raw, "type")
	if typ != wire.TypeQuestion {
		typ = wire.TypeApproval // anything else is refused as an approval would be
	}
	id := newID()
	p := &pending{ev: Event{Prompt: id, Task: taskID, Host: host, Pool: pool, Type: typ}, replies: make(chan *nats.Msg, 16), raw: raw}
	deadline := start.Add(c.deadline)
	msg := &nats.Msg{Subject: PromptSubject(pool), Reply: c.inbox + ".r." + id, Header: nats.Header{}}
	msg.Header.Set(HeaderPrompt, id)
	msg.Header.Set(HeaderTask, taskID)
	msg.Header.Set(HeaderHost, host)
	msg.Header.Set(HeaderPool, pool)
	msg.Header.Set(HeaderDeadline, deadline.UTC().Format(time.RFC3339Nano))
	msg.Header.Set(HeaderTimeout, strconv.FormatInt(c.timeout.Milliseconds(), 10))
	msg.Data = raw
	if err := ValidToken("pool", pool); err != nil {
		return c.finish(ctx, p, wire.Refusal(typ).Line, "invalid-pool", Canceled, start, err.Error())
	}
	if room := c.nc.MaxPayload() - headerRoom; int64(len(raw)) > room {
		p.parts = split(raw, int(room))
		sum := sha256.Sum256(raw)
		msg.Data = p.parts[0]
		msg.Header.Set(HeaderParts, strconv.Itoa(len(p.parts)))
		msg.Header.Set(HeaderSize, strconv.Itoa(len(raw)))
		msg.Header.Set(HeaderSHA256, hex.EncodeToString(sum[:]))
		msg.Header.Set(HeaderFetch, c.inbox+".f."+id)
	}
	c.mu.Lock()
	c.pending[id] = p
	c.mu.Unlock()

	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for try := 1; ; {
		now := c.now()
		if !now.Before(deadline) {
			return c.finish(ctx, p, wire.Refusal(typ).Line, ByTimeout, TimedOut, start,
				fmt.Sprintf("no approver answered within %s (%d tries)", c.deadline, try-1))
		}
		msg.Header.Set(HeaderTry, strconv.Itoa(try))
		p.ev.Tries = try
		// a failed publish (a connection being re-made) is a try that got no answer
		_ = c.nc.PublishMsg(msg)
		timer.Reset(min(c.timeout, deadline.Sub(now)))
	wait:
		for {
			select {
			case <-ctx.Done():
				return c.finish(ctx, p, wire.Refusal(typ).Line, ByCanceled, Canceled, start, "the worker stopped waiting: "+context.Cause(ctx).Error())
			case <-timer.C:
				try++
				break wait
			case m := <-p.replies:
				if m.Header.Get(HeaderStatus) == StatusProgress {
					// an approver is asking a person: wait a try longer, not past the deadline
					if !timer.Stop() {
						<-timer.C
					}
					timer.Reset(min(c.timeout, deadline.Sub(c.now())))
					continue
				}
				resp, ok := valid(typ, m.Data)
				if !ok {
					c.report(p, Invalid, m, "the answer is not a "+responseType(typ)+" line")
					continue
				}
				p.ev.Approver, p.ev.Policy = m.Header.Get(HeaderApprover), m.Header.Get(HeaderPolicy)
				p.ev.Latency = c.now().Sub(start)
				return c.finish(ctx, p, resp, deciderOf(m), Won, start, "")
			}
		}
	}
}

// Refuse answers a prompt without asking anyone: a denial (a question skipped), recorded in
// the audit chain with decider (ByLimit for a fleet at a budget limit) and reason. It is for
// the prompts a worker must deny itself.
func (c *Client) Refuse(ctx context.Context, taskID, host, pool string, raw []byte, decider, reason string) []byte {
	if pool == "" {
		pool = c.pool
	}
	typ, _ := wire.TopLevelString(raw, "type")
	if typ != wire.TypeQuestion {
		typ = wire.TypeApproval
	}
	p := &pending{ev: Event{Prompt: newID(), Task: taskID, Host: host, Pool: pool, Type: typ}, raw: raw}
	resp, _ := c.finish(ctx, p, wire.Refusal(typ).Line, decider, Refused, c.now(), reason)
	return resp
}

// headerRoom is what a prompt's headers may take of the maximum payload.
const headerRoom = 4096

func split(b []byte, n int) [][]byte {
	if n < 1024 {
		n = 1024
	}
	var parts [][]byte
	for len(b) > n {
		parts = append(parts, b[:n])
		b = b[n:]
	}
	return append(parts, b)
}

func deciderOf(m *nats.Msg) string {
	if d := m.Header.Get(HeaderDecider); d != "" {
		return d
	}
	return "unknown"
}

func responseType(typ string) string {
	if typ == wire.TypeQuestion {
		return wire.TypeQuestionResponse
	}
	return "approval_response"
}

// valid reads an answer and encodes it afresh: only the response to the prompt's type, with
// its one field, ever reaches the daemon, whatever else the answer held.
func valid(typ string, data []byte) ([]byte, bool) {
	if typ == wire.TypeQuestion {
		var r struct {
			Type   string           `json:"type"`
			Answer *json.RawMessage `json:"answer"`
		}
		if json.Unmarshal(data, &r) != nil || r.Type != wire.TypeQuestionResponse || r.Answer == nil {
			return nil, false
		}
		var a *string
		if string(*r.Answer) != "null" {
			var s string
			if json.Unmarshal(*r.Answer, &s) != nil {
				return nil, false
			}
			a = &s
		}
		return wire.QuestionResponse(a), true
	}
	var r struct {
		Type     string `json:"type"`
		Approved *bool  `json:"approved"`
	}
	if json.Unmarshal(data, &r) != nil || r.Type != "approval_response" || r.Approved == nil {
		return nil, false
	}
	return wire.ApprovalResponse(*r.Approved), true
}

// finish ends a prompt: it is forgotten (answers still to come are reported as dropped or
// late), its outcome recorded, and the answer returned. When the outcome cannot be recorded
// in the audit chain the answer is a refusal: nothing is allowed that the trail does not hold.
func (c *Client) finish(ctx context.Context, p *pending, resp []byte, decider, what string, start time.Time, reason string) ([]byte, string) {
	id := p.ev.Prompt
	c.mu.Lock()
	delete(c.pending, id)
	state := Won
	if what != Won {
		state = TimedOut
	}
	c.remember(id, state)
	// answers that came with this one lose to it (incoming sends under c.mu: none comes after)
	var rest []*nats.Msg
	for len(p.replies) > 0 {
		if m := <-p.replies; m.Header.Get(HeaderStatus) != StatusProgress {
			rest = append(rest, m)
		}
	}
	c.mu.Unlock()
	for _, m := range rest {
		if state == Won {
			c.report(p, Dropped, m, "a decision came after another was given")
		} else {
			c.report(p, Late, m, "the prompt was denied at its deadline before this answer came")
		}
	}
	ev := p.ev
	ev.What, ev.Decider, ev.Response, ev.Reason = what, decider, resp, reason
	if ev.Latency == 0 {
		ev.Latency = c.now().Sub(start)
	}
	if c.audit != nil {
		actx := ctx
		if actx.Err() != nil {
			actx = context.WithoutCancel(ctx)
		}
		actx, cancel := context.WithTimeout(actx, 10*time.Second)
		err := c.audit.Append(actx, recordOf(ev, p.raw))
		cancel()
		if err != nil && what == Won && !isRefusal(resp) {
			ev.Reason = "the decision could not be recorded in the audit stream: " + err.Error()
			ev.What, ev.Decider, ev.Response = Won, ByAudit, wire.Refusal(ev.Type).Line
		}
	}
	if c.log != nil {
		c.log(ev)
	}
	return ev.Response, ev.Decider
}

func isRefusal(resp []byte) bool {
	return string(resp) == string(wire.ApprovalResponse(false)) || string(resp) == string(wire.QuestionResponse(nil))
}

// remember keeps id's state for the answers still to come; c.mu is held.
func (c *Client) remember(id, state string) {
	if len(c.order) >= recentKept {
		delete(c.recent, c.order[0])
		c.order = c.order[1:]
	}
	c.recent[id] = state
	c.order = append(c.order, id)
}

// report records an answer that is not given to the daemon.
func (c *Client) report(p *pending, what string, m *nats.Msg, reason string) {
	ev := p.ev
	ev.What, ev.Decider, ev.Approver, ev.Response, ev.Reason = what, deciderOf(m), m.Header.Get(HeaderApprover), m.Data, reason
	ev.Policy = m.Header.Get(HeaderPolicy)
	if c.audit != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = c.audit.Append(ctx, recordOf(ev, p.raw)) // a lost record of an ignored answer changes no answer
		cancel()
	}
	if c.log != nil {
		c.log(ev)
	}
}

// incoming takes every message on the Client's inbox: answers (INBOX.r.ID) and requests for a
// prompt's parts (INBOX.f.ID).
func (c *Client) incoming(m *nats.Msg) {
	rest := strings.TrimPrefix(m.Subject, c.inbox+".")
	kind, id, ok := strings.Cut(rest, ".")
	if !ok {
		c.report(&pending{ev: Event{Prompt: rest}}, Forged, m, "an answer on a subject this worker never gave")
		return
	}
	c.mu.Lock()
	p := c.pending[id]
	c.mu.Unlock()
	switch kind {
	case "f":
		if p == nil || p.parts == nil {
			return
		}
		n, err := strconv.Atoi(string(m.Data))
		if err != nil || n < 0 || n >= len(p.parts) {
			return
		}
		_ = m.Respond(p.parts[n])
		return
	case "r":
	default:
		c.report(&pending{ev: Event{Prompt: id}}, Forged, m, "an answer on a subject this worker never gave")
		return
	}
	if len(m.Data) == 0 && m.Header.Get("Status") != "" {
		return // the server saying no approver is there: the try waits its time out
	}
	if got := m.Header.Get(HeaderPrompt); got != id {
		c.report(&pending{ev: Event{Prompt: id}}, Forged, m, fmt.Sprintf("the answer names prompt %q, not the prompt it answers", got))
		return
	}
	c.mu.Lock()
	p, state := c.pending[id], c.recent[id]
	if p != nil {
		select {
		case p.replies <- m:
			c.mu.Unlock()
			return
		default:
		}
	}
	c.mu.Unlock()
	if m.Header.Get(HeaderStatus) == StatusProgress {
		return // an approver still at a prompt answered meanwhile: nothing to record
	}
	switch {
	case p != nil:
		c.report(p, Dropped, m, "too many answers at once for one prompt")
	case state == Won:
		c.report(&pending{ev: Event{Prompt: id}}, Dropped, m, "a decision came after another was given")
	case state == TimedOut:
		c.report(&pending{ev: Event{Prompt: id}}, Late, m, "the prompt was denied at its deadline before this answer came")
	default:
		c.report(&pending{ev: Event{Prompt: id}}, Forged, m, "an answer for a prompt this worker never asked")
	}
}
