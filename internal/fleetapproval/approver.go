package fleetapproval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fuseraft/fr/pkg/wire"
)

// Prompt is one prompt as an approver gets it.
type Prompt struct {
	ID       string
	Task     string
	Host     string
	Pool     string
	Try      int
	Deadline time.Time
	Type     string // approval_request or question (anything else is decided as an approval)
	Raw      []byte // the daemon's line, unchanged, put back together when it came in parts
	// Rule and Reason are set on a prompt sent to the ask subject: why the policy asks.
	Rule   string
	Reason string
	// WorkerTimeout is how long the worker waits for each try.
	WorkerTimeout time.Duration

	msg *nats.Msg
}

// Decision is an approver's answer.
type Decision struct {
	Response []byte // the response line for the daemon
	Decider  string // "rule:NAME", "default", "person", ...
	// Ask, when set, sends the prompt to the pool's ask subject for a person instead: the
	// response is then the person's (or a refusal when nobody answers by the deadline).
	Ask    bool
	Rule   string // for Ask: the rule that asks, and why, shown to the person
	Reason string
	// Wait, when set, is waited for before the answer is sent (its audit record stored):
	// meanwhile the approver decides the next prompts. When it fails, the answer is a
	// refusal, and Failed is told.
	Wait func(ctx context.Context) error
}

// Approver is a member of a pool's queue group that decides its prompts, one at a time, with
// Decide. Prompts a decision sends to a person (Decision.Ask) wait for the person in the
// background, so the approver goes on with the others meanwhile; Asked is told the outcome.
type Approver struct {
	NC     *nats.Conn
	Pool   string
	ID     string // the approver's name in answers and in the audit stream
	Policy string // sha256:HEX of the policy, sent with each answer
	// Ask makes this an interactive approver: a member of the ask subject's group.
	Ask bool
	// Decide decides one prompt. It is called from one goroutine at a time.
	Decide func(ctx context.Context, p *Prompt) Decision
	// Asked, when set, is told what a person decided about a prompt Decide sent to the ask
	// subject (decider "no-person" when nobody was there to ask, "timeout" at the deadline),
	// and may change the answer (a record that cannot be written makes it a refusal). It is
	// called from the goroutine of that prompt.
	Asked func(p *Prompt, d Decision) Decision
	// Warn reports prompts that cannot be decided (a part that cannot be fetched).
	Warn func(format string, args ...any)
	// Failed is told when a decision's Wait failed (its prompt was refused).
	Failed func(p *Prompt, err error)
	// Ready, when set, is called once the approver is a member of its queue group.
	Ready func()
}

// Decider of a prompt a policy asks about when no interactive approver serves the pool.
const ByNoPerson = "no-person"

// Serve decides prompts until ctx ends or the connection closes.
func (a *Approver) Serve(ctx context.Context) error {
	if err := ValidToken("pool", a.Pool); err != nil {
		return err
	}
	subj, group := PromptSubject(a.Pool), QueueGroup
	if a.Ask {
		subj, group = AskSubject(a.Pool), AskQueueGroup
	}
	msgs := make(chan *nats.Msg, 1024)
	sub, err := a.NC.ChanQueueSubscribe(subj, group, msgs)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	if err := a.NC.Flush(); err != nil {
		return err
	}
	closed := make(chan struct{})
	a.NC.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if a.NC.IsClosed() {
		return nats.ErrConnectionClosed
	}
	if a.Ready != nil {
		a.Ready()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-closed:
			return nats.ErrConnectionClosed
		case m := <-msgs:
			a.handle(ctx, m)
		}
	}
}

func (a *Approver) warn(format string, args ...any) {
	if a.Warn != nil {
		a.Warn(format, args...)
	}
}

// ReadPrompt reads a prompt message, fetching its further parts from the worker.
func ReadPrompt(nc *nats.Conn, m *nats.Msg) (*Prompt, error) {
	h := m.Header
	p := &Prompt{ID: h.Get(HeaderPrompt), Task: h.Get(HeaderTask), Host: h.Get(HeaderHost), Pool: h.Get(HeaderPool),
		Rule: h.Get(HeaderRule), Reason: h.Get(HeaderReason), Raw: m.Data, msg: m}
	if p.ID == "" || m.Reply == "" {
		return nil, errors.New("a prompt without an id or a reply subject")
	}
	p.Try, _ = strconv.Atoi(h.Get(HeaderTry))
	if ms, err := strconv.ParseInt(h.Get(HeaderTimeout), 10, 64); err == nil && ms > 0 {
		p.WorkerTimeout = time.Duration(ms) * time.Millisecond
	}
	dl, err := time.Parse(time.RFC3339Nano, h.Get(HeaderDeadline))
	if err != nil {
		return nil, fmt.Errorf("prompt %s: no deadline", p.ID)
	}
	p.Deadline = dl
	if n := h.Get(HeaderParts); n != "" {
		parts, err := strconv.Atoi(n)
		size, serr := strconv.Atoi(h.Get(HeaderSize))
		if err != nil || serr != nil || parts < 1 || parts > 1<<16 || size < 0 || size > 1<<30 {
			return nil, fmt.Errorf("prompt %s: bad parts", p.ID)
		}
		buf := make([]byte, 0, size)
		buf = append(buf, m.Data...)
		for i := 1; i < parts; i++ {
			left := time.Until(p.Deadline)
			if left <= 0 {
				return nil, fmt.Errorf("prompt %s: past its deadline while its parts were fetched", p.ID)
			}
			r, err := nc.Request(h.Get(HeaderFetch), []byte(strconv.Itoa(i)), min(left, 10*time.Second))
			if err != nil {
				return nil, fmt.Errorf("prompt %s: part %d of %d: %w", p.ID, i+1, parts, err)
			}
			buf = append(buf, r.Data...)
			if len(buf) > size {
				return nil, fmt.Errorf("prompt %s: its parts are larger than its size", p.ID)
			}
		}
		sum := sha256.Sum256(buf)
		if len(buf) != size || hex.EncodeToString(sum[:]) != h.Get(HeaderSHA256) {
			return nil, fmt.Errorf("prompt %s: its parts do not make the prompt sent (size or sha256)", p.ID)
		}
		p.Raw = buf
	}
	p.Type, _ = wire.TopLevelString(p.Raw, "type")
	if p.Type != wire.TypeQuestion {
		p.Type = wire.TypeApproval
	}
	return p, nil
}

func (a *Approver) handle(ctx context.Context, m *nats.Msg) {
	p, err := ReadPrompt(a.NC, m)
	if err != nil {
		a.warn("%v; left for the worker to send again", err)
		return
	}
	if !time.Now().Before(p.Deadline) {
		return // the worker has answered it itself
	}
	d := a.Decide(ctx, p)
	if d.Ask && !a.Ask {
		go a.askPerson(ctx, p, d)
		return
	}
	if d.Wait == nil {
		a.Respond(p, d)
		return
	}
	go a.respondAfter(p, d)
}

// respondAfter sends d once its Wait is done, or a refusal when it failed.
func (a *Approver) respondAfter(p *Prompt, d Decision) {
	ctx, cancel := context.WithDeadline(context.Background(), p.Deadline)
	defer cancel()
	if err := d.Wait(ctx); err != nil {
		if a.Failed != nil {
			a.Failed(p, err)
		}
		d = Decision{Response: wire.Refusal(p.Type).Line, Decider: ByAudit}
	}
	a.Respond(p, d)
}

// Respond sends d as the answer to p.
func (a *Approver) Respond(p *Prompt, d Decision) {
	r := &nats.Msg{Subject: p.msg.Reply, Data: d.Response, Header: nats.Header{}}
	r.Header.Set(HeaderPrompt, p.ID)
	r.Header.Set(HeaderDecider, d.Decider)
	r.Header.Set(HeaderApprover, a.ID)
	if a.Policy != "" {
		r.Header.Set(HeaderPolicy, a.Policy)
	}
	_ = a.NC.PublishMsg(r)
}

// progress tells the worker of p that it is still being decided.
func (a *Approver) progress(p *Prompt) {
	r := &nats.Msg{Subject: p.msg.Reply, Header: nats.Header{}}
	r.Header.Set(HeaderPrompt, p.ID)
	r.Header.Set(HeaderStatus, StatusProgress)
	r.Header.Set(HeaderApprover, a.ID)
	_ = a.NC.PublishMsg(r)
}

// askPerson sends p to the ask subject and answers the worker with what the person said,
// telling the worker meanwhile that it is still at it.
func (a *Approver) askPerson(ctx context.Context, p *Prompt, asked Decision) {
	every := p.WorkerTimeout / 3
	if every <= 0 {
		every = time.Second
	}
	every = max(every, 10*time.Millisecond)
	fwd := &nats.Msg{Subject: AskSubject(a.Pool), Data: p.Raw, Header: nats.Header{}}
	for k, v := range p.msg.Header {
		if k != HeaderParts && k != HeaderSize && k != HeaderSHA256 && k != HeaderFetch {
			fwd.Header[k] = v
		}
	}
	fwd.Header.Set(HeaderRule, asked.Rule)
	fwd.Header.Set(HeaderReason, asked.Reason)
	d := Decision{Response: wire.Refusal(p.Type).Line, Decider: ByTimeout}
	if int64(len(p.Raw))+headerRoom > a.NC.MaxPayload() {
		d.Decider = ByNoPerson
		a.warn("prompt %s is too large to send to a person whole; refused", p.ID)
	} else {
		inbox := a.NC.NewRespInbox()
		replies := make(chan *nats.Msg, 4)
		sub, err := a.NC.ChanSubscribe(inbox, replies)
		if err == nil {
			defer sub.Unsubscribe()
			fwd.Reply = inbox
			a.progress(p)
			_ = a.NC.PublishMsg(fwd)
			tick := time.NewTicker(every)
			defer tick.Stop()
			dl := time.NewTimer(time.Until(p.Deadline))
			defer dl.Stop()
		wait:
			for {
				select {
				case <-ctx.Done():
					d.Decider = ByCanceled
					break wait
				case <-dl.C:
					break wait
				case <-tick.C:
					a.progress(p)
				case m := <-replies:
					if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
						d.Decider = ByNoPerson
						break wait
					}
					if m.Header.Get(HeaderPrompt) != p.ID {
						continue
					}
					if resp, ok := valid(p.Type, m.Data); ok {
						d = Decision{Response: resp, Decider: deciderOf(m)}
						break wait
					}
				}
			}
		}
	}
	if a.Asked != nil {
		d = a.Asked(p, d)
	}
	if d.Wait != nil {
		a.respondAfter(p, d)
		return
	}
	a.Respond(p, d)
}
