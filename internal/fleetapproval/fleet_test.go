package fleetapproval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/audit"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/natstest"
	"github.com/fuseraft/fr/pkg/wire"
)

func connect(t *testing.T, srv *natstest.Server) *nats.Conn { return connectB(t, srv) }

func connectB(t testing.TB, srv *natstest.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(srv.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func shell(n int) []byte {
	return []byte(fmt.Sprintf(`{"type":"approval_request","kind":"shell_command","command":"echo %d"}`, n))
}

// evenPolicy allows `echo N` for an even N: the policy's answer each test checks against.
func evenPolicy(raw []byte) (bool, string) {
	req, err := wire.DecodeApprovalRequest(raw)
	if err != nil {
		return false, "malformed"
	}
	n, err := strconv.Atoi(strings.TrimPrefix(req.Command, "echo "))
	if err != nil {
		return false, "default"
	}
	if n%2 == 0 {
		return true, "rule:even"
	}
	return false, "rule:odd"
}

func policyDecide(_ context.Context, p *Prompt) Decision {
	allow, by := evenPolicy(p.Raw)
	return Decision{Response: wire.ApprovalResponse(allow), Decider: by}
}

// startApprover serves the pool on a connection of its own until the test ends or the
// connection is closed.
func startApprover(t *testing.T, nc *nats.Conn, a *Approver) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done, ready := make(chan struct{}), make(chan struct{})
	a.Ready = func() { close(ready) }
	go func() { defer close(done); a.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-ready:
	case <-testkit.After(20 * time.Second):
		t.Fatalf("approver %s did not join its queue group", a.ID)
	}
}

type events struct {
	mu  sync.Mutex
	all []Event
}

func (e *events) add(ev Event) { e.mu.Lock(); e.all = append(e.all, ev); e.mu.Unlock() }

func (e *events) of(what string) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for _, ev := range e.all {
		if ev.What == what {
			out = append(out, ev)
		}
	}
	return out
}

// 200 prompts from three workers, two approvers, one of which dies a third of the way
// through: each prompt gets exactly one answer, the policy's, and none is denied for want of
// an approver.
func TestEveryPromptAnsweredOnceThroughADeadApprover(t *testing.T) {
	srv := natstest.Start(t)
	const prompts = 200
	var decidedA, decidedB atomic.Int64
	ncA, ncB := connect(t, srv), connect(t, srv)
	a := &Approver{NC: ncA, Pool: "p1", ID: "a", Decide: func(ctx context.Context, p *Prompt) Decision {
		if decidedA.Add(1) == prompts/6 {
			ncA.Close() // dies with its queue of prompts undecided, this answer unsent
		}
		return policyDecide(ctx, p)
	}}
	b := &Approver{NC: ncB, Pool: "p1", ID: "b", Decide: func(ctx context.Context, p *Prompt) Decision {
		decidedB.Add(1)
		return policyDecide(ctx, p)
	}}
	startApprover(t, ncA, a)
	startApprover(t, ncB, b)

	var ev events
	var clients []*Client
	for i := 0; i < 3; i++ {
		// a short try, so prompts the dead approver held are sent again soon; a deadline
		// only a hang reaches
		c, err := NewClient(connect(t, srv), "p1", WithTimeout(200*time.Millisecond),
			WithDeadline(testkit.Bound(60*time.Second)), WithLog(ev.add))
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	ctx := testkit.Context(t, 90*time.Second)
	type answer struct {
		resp    []byte
		decider string
	}
	answers := make([][]answer, prompts)
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 24)
	for n := 0; n < prompts; n++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(n int) {
			defer wg.Done()
			defer func() { <-sem }()
			c := clients[n%3]
			resp, by := c.Decide(ctx, fmt.Sprintf("task-%d", n), fmt.Sprintf("host-%d", n%3), "", shell(n))
			mu.Lock()
			answers[n] = append(answers[n], answer{resp, by})
			mu.Unlock()
		}(n)
	}
	wg.Wait()
	for n, as := range answers {
		if len(as) != 1 {
			t.Fatalf("prompt %d: %d answers, want exactly one", n, len(as))
		}
		allow, by := evenPolicy(shell(n))
		if want := wire.ApprovalResponse(allow); !bytes.Equal(as[0].resp, want) || as[0].decider != by {
			t.Errorf("prompt %d: got %s by %s, want %s by %s", n, as[0].resp, as[0].decider, want, by)
		}
	}
	won := ev.of(Won)
	if len(won) != prompts {
		t.Errorf("%d answers given to daemons, want %d", len(won), prompts)
	}
	seen := map[string]bool{}
	for _, e := range won {
		if seen[e.Prompt] {
			t.Errorf("prompt %s answered twice", e.Prompt)
		}
		seen[e.Prompt] = true
	}
	if decidedA.Load() < prompts/6 {
		t.Fatalf("approver a decided %d prompts before it died, want %d", decidedA.Load(), prompts/6)
	}
	if ncA.IsConnected() {
		t.Fatal("approver a is still connected")
	}
	t.Logf("a decided %d, b %d; %d dropped, %d re-sent", decidedA.Load(), decidedB.Load(), len(ev.of(Dropped)), countTries(won))
}

func countTries(evs []Event) int {
	n := 0
	for _, e := range evs {
		n += e.Tries - 1
	}
	return n
}

// With no approver, every prompt is denied by the worker at its deadline, decided "timeout",
// and a question is skipped.
func TestNoApproverDeniedAtDeadline(t *testing.T) {
	srv := natstest.Start(t)
	var ev events
	c, err := NewClient(connect(t, srv), "lonely", WithTimeout(20*time.Millisecond), WithDeadline(100*time.Millisecond), WithLog(ev.add))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Context(t, 30*time.Second)
	var wg sync.WaitGroup
	for n := 0; n < 20; n++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			raw, want := shell(n), wire.ApprovalResponse(false)
			if n%5 == 0 {
				raw, want = []byte(`{"type":"question","question":"which?","options":["a","b"]}`), wire.QuestionResponse(nil)
			}
			resp, by := c.Decide(ctx, "t", "h", "", raw)
			if !bytes.Equal(resp, want) || by != ByTimeout {
				t.Errorf("prompt %d: got %s by %s, want %s by timeout", n, resp, by, want)
			}
		}(n)
	}
	wg.Wait()
	if got := len(ev.of(TimedOut)); got != 20 {
		t.Errorf("%d prompts recorded as timed out, want 20", got)
	}
}

// A decision for a prompt that was never asked, or that comes after the worker denied the
// prompt at its deadline, or a second one, changes nothing and is logged, in the audit stream
// too.
func TestForgedLateAndSecondAnswersIgnoredAndLogged(t *testing.T) {
	srv := natstest.Start(t)
	nc := connect(t, srv)
	js, _ := jetstream.New(nc)
	ctx := testkit.Context(t, 60*time.Second)
	chain, err := OpenChain(ctx, js, DefaultAuditStream, AuditSubject("p", "worker-1"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	c, err := NewClient(nc, "p", WithTimeout(50*time.Millisecond), WithDeadline(200*time.Millisecond), WithLog(ev.add), WithAudit(chain))
	if err != nil {
		t.Fatal(err)
	}
	// a slow approver: it keeps the prompts and answers later
	held := make(chan *nats.Msg, 64)
	slow := connect(t, srv)
	if _, err := slow.ChanQueueSubscribe(PromptSubject("p"), QueueGroup, held); err != nil {
		t.Fatal(err)
	}
	slow.Flush()
	resp, by := c.Decide(ctx, "t1", "h1", "", shell(2))
	if !bytes.Equal(resp, wire.ApprovalResponse(false)) || by != ByTimeout {
		t.Fatalf("got %s by %s, want a denial by timeout", resp, by)
	}
	first := <-held
	late := &nats.Msg{Subject: first.Reply, Data: wire.ApprovalResponse(true), Header: nats.Header{}}
	late.Header.Set(HeaderPrompt, first.Header.Get(HeaderPrompt))
	late.Header.Set(HeaderDecider, "rule:late")
	slow.PublishMsg(late)
	forged := &nats.Msg{Subject: strings.TrimSuffix(first.Reply, first.Header.Get(HeaderPrompt)) + "0123456789abcdef01234567",
		Data: wire.ApprovalResponse(true), Header: nats.Header{}}
	forged.Header.Set(HeaderPrompt, "0123456789abcdef01234567")
	forged.Header.Set(HeaderDecider, "rule:forged")
	slow.PublishMsg(forged)
	// the id in the headers must be the id of the subject
	mismatched := &nats.Msg{Subject: first.Reply, Data: wire.ApprovalResponse(true), Header: nats.Header{}}
	mismatched.Header.Set(HeaderPrompt, "someotherprompt")
	slow.PublishMsg(mismatched)
	slow.Flush()
	testkit.WaitUntil(t, 20*time.Second, "late and forged answers logged", func() bool {
		return len(ev.of(Late)) >= 1 && len(ev.of(Forged)) >= 2
	})
	for _, e := range ev.of(Late) {
		if e.Decider != "rule:late" && e.Decider != "unknown" {
			t.Errorf("late answer logged with decider %q", e.Decider)
		}
	}
	if got := ev.of(Forged)[0]; got.Decider != "rule:forged" || got.Prompt != "0123456789abcdef01234567" {
		t.Errorf("forged answer logged as %+v", got)
	}
	// a second decision: the first wins, the second is dropped and logged
	go func() {
		for m := range held {
			if m.Header.Get(HeaderTask) != "t2" {
				continue
			}
			for _, allow := range []bool{true, false} {
				r := &nats.Msg{Subject: m.Reply, Data: wire.ApprovalResponse(allow), Header: nats.Header{}}
				r.Header.Set(HeaderPrompt, m.Header.Get(HeaderPrompt))
				r.Header.Set(HeaderDecider, fmt.Sprintf("rule:%v", allow))
				slow.PublishMsg(r)
			}
			return
		}
	}()
	c2, _ := NewClient(nc, "p", WithTimeout(testkit.Bound(20*time.Second)), WithDeadline(testkit.Bound(40*time.Second)), WithLog(ev.add), WithAudit(chain))
	resp, by = c2.Decide(ctx, "t2", "h1", "", shell(3))
	if !bytes.Equal(resp, wire.ApprovalResponse(true)) || by != "rule:true" {
		t.Fatalf("got %s by %s, want the first decision, an allow by rule:true", resp, by)
	}
	testkit.WaitUntil(t, 20*time.Second, "the second decision logged as dropped", func() bool {
		return len(ev.of(Dropped)) == 1
	})
	// the audit stream holds every one of them, in a chain that verifies
	logs, err := audit.ReadStream(ctx, js, DefaultAuditStream)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 {
		t.Fatalf("%d chains in the stream, want 1", len(logs))
	}
	outcomes := map[string]int{}
	for _, r := range verifyLines(t, logs[0].Data) {
		outcomes[r.Outcome]++
	}
	want := map[string]int{TimedOut: 1, Late: 1, Forged: 2, Won: 1, Dropped: 1}
	if fmt.Sprint(outcomes) != fmt.Sprint(want) {
		t.Errorf("audit stream outcomes %v, want %v", outcomes, want)
	}
}

// verifyLines checks a chain's hashes and links, as verify-audit does, and returns its records.
func verifyLines(t *testing.T, data []byte) []Record {
	t.Helper()
	if _, err := audit.Verify("stream", bytes.NewReader(data), ""); err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

// A prompt larger than the server's maximum payload reaches the approver whole.
func TestLargePromptSentInParts(t *testing.T) {
	srv := natstest.Start(t, func(o *server.Options) { o.MaxPayload = 16 << 10 })
	big := bytes.Repeat([]byte("line of a big file\n"), 20000) // ~380 KB, 24 times the payload
	content, _ := json.Marshal(string(big))
	raw := []byte(`{"type":"approval_request","kind":"file_write","path":"big.txt","newContent":` + string(content) + `}`)
	var got []byte
	nc := connect(t, srv)
	startApprover(t, nc, &Approver{NC: nc, Pool: "big", ID: "a", Decide: func(_ context.Context, p *Prompt) Decision {
		got = p.Raw
		return Decision{Response: wire.ApprovalResponse(bytes.Equal(p.Raw, raw)), Decider: "rule:whole"}
	}})
	c, err := NewClient(connect(t, srv), "big", WithTimeout(testkit.Bound(20*time.Second)), WithDeadline(testkit.Bound(40*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	resp, by := c.Decide(testkit.Context(t, 60*time.Second), "t", "h", "", raw)
	if !bytes.Equal(resp, wire.ApprovalResponse(true)) || by != "rule:whole" {
		t.Fatalf("got %s by %s; the approver got %d bytes of %d", resp, by, len(got), len(raw))
	}
}

// A prompt the policy asks about goes to the interactive approver, whose answer the worker
// gets; with none, it is denied at once, decided no-person.
func TestAskGoesToAPerson(t *testing.T) {
	srv := natstest.Start(t)
	nc := connect(t, srv)
	var asked []string
	var mu sync.Mutex
	startApprover(t, nc, &Approver{NC: nc, Pool: "p", ID: "policy",
		Decide: func(_ context.Context, p *Prompt) Decision {
			return Decision{Ask: true, Rule: "ask-me", Reason: "a person decides"}
		},
		Asked: func(p *Prompt, d Decision) Decision {
			mu.Lock()
			asked = append(asked, d.Decider)
			mu.Unlock()
			return d
		}})
	c, err := NewClient(connect(t, srv), "p", WithTimeout(testkit.Bound(20*time.Second)), WithDeadline(testkit.Bound(40*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Context(t, 60*time.Second)
	resp, by := c.Decide(ctx, "t", "h", "", shell(1))
	if !bytes.Equal(resp, wire.ApprovalResponse(false)) || by != ByNoPerson {
		t.Fatalf("with nobody to ask: got %s by %s, want a denial by %s", resp, by, ByNoPerson)
	}
	person := connect(t, srv)
	var rule string
	startApprover(t, person, &Approver{NC: person, Pool: "p", ID: "alice", Ask: true,
		Decide: func(_ context.Context, p *Prompt) Decision {
			rule = p.Rule
			return Decision{Response: wire.ApprovalResponse(true), Decider: "person"}
		}})
	resp, by = c.Decide(ctx, "t", "h", "", shell(1))
	if !bytes.Equal(resp, wire.ApprovalResponse(true)) || by != "person" || rule != "ask-me" {
		t.Fatalf("got %s by %s (rule shown %q), want an allow by person, rule ask-me", resp, by, rule)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(asked) != "[no-person person]" {
		t.Errorf("the policy approver was told %v", asked)
	}
}

// An approver's chain goes on across a server restart: the stream keeps it whole.
func TestAuditChainSurvivesRestart(t *testing.T) {
	srv := natstest.Start(t)
	nc := connect(t, srv)
	js, _ := jetstream.New(nc)
	ctx := testkit.Context(t, 60*time.Second)
	ch, err := OpenChain(ctx, js, "AUDIT", AuditSubject("p", "a"))
	if err != nil {
		t.Fatal(err)
	}
	rec := func(n int) func(*string) []byte {
		return recordOf(Event{What: Won, Type: wire.TypeApproval, Prompt: strconv.Itoa(n), Response: wire.ApprovalResponse(true)}, shell(n))
	}
	for n := 0; n < 3; n++ {
		if err := ch.Append(ctx, rec(n)); err != nil {
			t.Fatal(err)
		}
	}
	before := nc.Stats().Reconnects
	srv.Restart()
	// Connected is not enough: the client may not have noticed the restart yet.
	testkit.WaitUntil(t, 20*time.Second, "reconnected after the restart", func() bool {
		return nc.IsConnected() && nc.Stats().Reconnects > before
	})
	for n := 3; n < 6; n++ {
		if err := ch.Append(ctx, rec(n)); err != nil {
			t.Fatal(err)
		}
	}
	// a second writer on the same chain, as a restarted approver with the same id
	ch2, err := OpenChain(ctx, js, "AUDIT", AuditSubject("p", "a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ch2.Append(ctx, rec(6)); err != nil {
		t.Fatal(err)
	}
	// the first writer, now behind, is refused rather than fork the chain
	if err := ch.Append(ctx, rec(7)); err == nil {
		// it may have resynced and appended after the second: the chain must still verify
		t.Log("the first writer went on after reading the chain again")
	}
	logs, err := audit.ReadStream(ctx, js, "AUDIT")
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 || logs[0].Lines < 7 {
		t.Fatalf("stream holds %d chains (%+v), want one of at least 7 lines", len(logs), logs)
	}
	verifyLines(t, logs[0].Data)
}

// A prompt the worker denies itself (a fleet at a limit) is recorded, decided limit.
func TestRefuseRecorded(t *testing.T) {
	srv := natstest.Start(t)
	nc := connect(t, srv)
	js, _ := jetstream.New(nc)
	ctx := testkit.Context(t, 30*time.Second)
	chain, err := OpenChain(ctx, js, DefaultAuditStream, AuditSubject("p", "w"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := NewClient(nc, "p", WithAudit(chain))
	if got := c.Refuse(ctx, "t", "h", "", shell(2), ByLimit, "--max-turns 5"); !bytes.Equal(got, wire.ApprovalResponse(false)) {
		t.Fatalf("got %s", got)
	}
	logs, err := audit.ReadStream(ctx, js, DefaultAuditStream)
	if err != nil || len(logs) != 1 {
		t.Fatalf("%v %v", logs, err)
	}
	r := verifyLines(t, logs[0].Data)[0]
	if r.Decider != ByLimit || r.Decision != "deny" || r.Outcome != Refused || r.Summary != "shell: echo 2" || r.Reason != "--max-turns 5" {
		t.Errorf("recorded %+v", r)
	}
}

// Lines appended from many goroutines at once, in batches, make one chain that verifies,
// with every line once.
func TestChainManyAtOnce(t *testing.T) {
	srv := natstest.Start(t)
	nc := connect(t, srv)
	js, _ := jetstream.New(nc)
	ctx := testkit.Context(t, 60*time.Second)
	ch, err := OpenChain(ctx, js, "AUDIT", AuditSubject("p", "a"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 1500
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := ch.Append(ctx, recordOf(Event{What: Won, Type: wire.TypeApproval, Prompt: strconv.Itoa(i), Response: wire.ApprovalResponse(true)}, nil)); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	logs, err := audit.ReadStream(ctx, js, "AUDIT")
	if err != nil || len(logs) != 1 {
		t.Fatalf("%d chains, %v", len(logs), err)
	}
	seen := map[string]bool{}
	for _, r := range verifyLines(t, logs[0].Data) {
		if seen[r.Prompt] {
			t.Fatalf("prompt %s recorded twice", r.Prompt)
		}
		seen[r.Prompt] = true
	}
	if len(seen) != n {
		t.Errorf("%d lines, want %d", len(seen), n)
	}
}
