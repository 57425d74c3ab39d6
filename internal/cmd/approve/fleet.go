package approve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/audit"
	"github.com/fuseraft/fr/internal/cmd/approve/policy"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/internal/fleetapproval"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

// fleetUsage is the line of fr-approve's usage for a fleet.
const fleetUsage = "fr-approve --nats URL [--pool NAME] (--policy FILE | --interactive) [--approver-id ID] [--audit FILE] [--audit-stream NAME]"

// fleetDescription is the part of fr-approve's help about a fleet.
const fleetDescription = `A FLEET'S PROMPTS
  With --nats URL, fr-approve reads no stream: it answers the prompts the workers of a fleet
  send on the pool's NATS subject (fr.approve.POOL), as one member of the pool's queue group.
  Run as many as you like: each prompt goes to one of them, and a worker sends a prompt that
  gets no answer within its --approval-timeout again (to any member), and denies it itself at
  its --approval-deadline, recorded with decider timeout. The policy decides as on a pipe; a
  prompt it asks about goes to the pool's ask subject (fr.approve.POOL.ask), which
  'fr-approve --nats URL --pool NAME --interactive' on a terminal serves (asking as above,
  before the worker's deadline); with nobody serving it the prompt is denied, decider
  no-person. Each decision is written to --audit FILE, if given, and to the JetStream stream
  --audit-stream (FR_AUDIT, made if missing), on the subject fr.audit.POOL.ID of this
  approver's own hash chain (--approver-id; a restart with the same id goes on with its
  chain). An answer is sent only once its records are written; when one cannot be, the prompt
  is denied and fr-approve stops (exit 1). 'fr-approve verify-audit nats://HOST:PORT/FR_AUDIT'
  checks every chain of the stream, and fr-report --audit reads the same form. Credentials
  come from files, as for every fleet command (--nats-creds, --nats-nkey, --nats-user with
  --nats-password-file), a private CA from --nats-ca FILE; a password in --nats is refused.
  Limits (limit:) count the decisions of this approver only, per task for per: session.
  SIGINT or SIGTERM stops it; prompts it held are sent again by their workers.

`

// withFleet puts the part about a fleet into fr-approve's help, before its exit status
// (written before ENVIRONMENT), and the fleet's variable among the others.
func withFleet(d string) string {
	i := strings.Index(d, "ENVIRONMENT\n")
	if i < 0 {
		return d + "\n\n" + strings.TrimSuffix(fleetDescription, "\n")
	}
	d = d[:i] + fleetDescription + d[i:]
	const term = "  TERM       TERM=dumb turns colour off too\n"
	return strings.Replace(d, term, term+"  FR_NATS_CREDS  with --nats, the NATS credentials file when --nats-creds is not given\n", 1)
}

// fleetFlags are fr-approve's flags for a fleet: the connection flags every fleet command
// takes (internal/fleet), and its own.
func fleetFlags() []cli.Flag {
	return append(fleet.Flags(),
		&cli.StringFlag{Name: "pool", Value: fleetapproval.DefaultPool, Usage: "with --nats, the `NAME` of the pool whose prompts to answer"},
		&cli.BoolFlag{Name: "interactive", Usage: "with --nats, answer the prompts a policy asks about, on the terminal (no --policy)"},
		&cli.StringFlag{Name: "approver-id", Usage: "with --nats, this approver's `ID` in answers and in the audit stream (default: the host name and a random suffix)"},
		&cli.StringFlag{Name: "audit-stream", Value: fleetapproval.DefaultAuditStream, Usage: "with --nats, the JetStream `STREAM` every decision is also written to"},
	)
}

// fleetOptions are fr-approve's for a fleet (--nats).
type fleetOptions struct {
	conn        fleet.Conn // conn.URL "": not a fleet
	pool        string
	interactive bool
	approverID  string
	auditStream string
}

// fleetOptionsFrom reads the flags of a fleet: without --nats none may be given.
func fleetOptionsFrom(c *cli.Context) (fleetOptions, error) {
	fo := fleetOptions{pool: c.String("pool"), interactive: c.Bool("interactive"),
		approverID: c.String("approver-id"), auditStream: c.String("audit-stream")}
	if !c.IsSet("nats") {
		// $FR_NATS_URL does not turn fr-approve into a fleet's approver: only --nats does.
		for _, f := range []string{"pool", "interactive", "approver-id", "audit-stream", "nats-creds", "nats-nkey", "nats-user", "nats-password-file", "nats-ca"} {
			if c.IsSet(f) {
				return fo, cmdutil.WithHint(cmdutil.Usagef("--%s needs --nats URL", f), "a fleet's prompts come from a NATS server: fr-approve --nats URL --pool NAME --policy FILE")
			}
		}
		return fleetOptions{}, nil
	}
	if c.String("nats") == "" {
		return fo, cmdutil.Usagef("--nats needs the server's URL (nats://HOST:PORT)")
	}
	var err error
	if fo.conn, err = fleet.ConnFrom(c, nil); err != nil {
		return fo, err
	}
	if err := fleetapproval.ValidToken("--pool", fo.pool); err != nil {
		return fo, cmdutil.Usagef("%v", err)
	}
	if fo.approverID == "" {
		host, _ := os.Hostname()
		var r [3]byte
		rand.Read(r[:])
		fo.approverID = fleetapproval.Token(host) + "-" + hex.EncodeToString(r[:])
	}
	if err := fleetapproval.ValidToken("--approver-id", fo.approverID); err != nil {
		return fo, cmdutil.Usagef("%v", err)
	}
	if c.NArg() > 0 {
		return fo, cmdutil.Usagef("unexpected argument %q: with --nats, prompts come from the pool", c.Args().First())
	}
	for _, f := range []string{"input", "output"} {
		if c.IsSet(f) {
			return fo, cmdutil.Usagef("--%s and --nats: with --nats, prompts come from and answers go to the pool", f)
		}
	}
	if fo.interactive && c.IsSet("policy") {
		return fo, cmdutil.Usagef("--interactive and --policy: an interactive approver asks about every prompt it is sent")
	}
	return fo, nil
}

// fleetServer answers a pool's prompts.
type fleetServer struct {
	s       cmdutil.Streams
	srv     *server // the policy, the asker, --verbose, the --audit file
	chain   *fleetapproval.Chain
	id      string
	pool    string
	policy  string
	mu      sync.Mutex // the audit file and the chain, written from the goroutines of asked prompts too
	failed  chan error
	failOne sync.Once
}

// runFleet answers the prompts of a fleet's pool until ctx ends.
func runFleet(ctx context.Context, s cmdutil.Streams, o *options) error {
	fo := o.fleet
	warn := func(format string, args ...any) { cmdutil.Warnf(s.Err, prog, format, args...) }
	srv := &server{s: s, verbose: o.verbose}
	f := &fleetServer{s: s, srv: srv, id: fo.approverID, pool: fo.pool, failed: make(chan error, 1)}
	if !fo.interactive {
		p, dec, err := newDecider(s, o.policy, o.root)
		if err != nil {
			return err
		}
		dec.Timeout = o.decisionTimeout
		srv.p, srv.dec, f.policy = p, dec, "sha256:"+p.SHA256
	}
	asker := &ttyAsker{path: o.tty, timeout: o.askTimeout, color: o.color, getenv: s.Env, warn: warn}
	defer asker.close()
	srv.asker = asker
	if o.auditFsync && o.audit == "" {
		return cmdutil.WithHint(cmdutil.Usagef("--audit-fsync without --audit"), "pass --audit FILE too")
	}
	if o.audit != "" {
		a, err := openAudit(srv.dec, o.audit, o.auditFsync)
		if err != nil {
			return err
		}
		defer a.Close()
		srv.audit = a
	}
	cn := fo.conn
	cn.Name = prog + " " + fo.approverID
	cl, err := fleet.Dial(ctx, cn)
	if err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "--nats %s: %v", cn, err)
	}
	defer cl.Close()
	nc := cl.NC
	js, err := jetstream.New(nc)
	if err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "--nats: %v", err)
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	f.chain, err = fleetapproval.OpenChain(octx, js, fo.auditStream, fleetapproval.AuditSubject(fo.pool, fo.approverID))
	cancel()
	if err != nil {
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUnavailable, "%v", err), "the server must run JetStream: every decision is written to the audit stream")
	}
	return f.serve(ctx, nc, fo.interactive, warn)
}

// serve answers as a member of the pool's queue group until ctx ends or a decision cannot be
// recorded.
func (f *fleetServer) serve(ctx context.Context, nc *nats.Conn, interactive bool, warn func(string, ...any)) error {
	a := &fleetapproval.Approver{NC: nc, Pool: f.pool, ID: f.id, Policy: f.policy, Ask: interactive, Warn: warn,
		Decide: f.decide, Asked: f.asked, Failed: func(p *fleetapproval.Prompt, err error) {
			kind, summary := fleetapproval.Summary(p.Raw)
			f.fail(err, audit.Record{Kind: kind, Summary: summary})
		}}
	if interactive {
		a.Decide = f.askPerson
	}
	if f.srv.verbose {
		a.Ready = func() {
			what := "prompts"
			if interactive {
				what = "prompts a policy asks about"
			}
			cmdutil.Sayf(f.s.Err, prog, "answering the %s of pool %s as %s", what, f.pool, f.id)
		}
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- a.Serve(sctx) }()
	select {
	case err := <-f.failed:
		stop()
		<-done
		return err
	case err := <-done:
		if err != nil {
			return cmdutil.Errorf(cmdutil.ExitUnavailable, "--nats: %v", err)
		}
		return nil
	case <-ctx.Done():
		stop()
		<-done
		return cmdutil.Exit(cmdutil.ExitInterrupted)
	}
}

// decider names who decided for the worker: "rule:NAME" for a rule, else the decider.
func deciderName(decider, rule string) string {
	if decider == policy.ByRule && rule != "" {
		return "rule:" + rule
	}
	return decider
}

// decide decides a prompt with the policy, as on a pipe.
func (f *fleetServer) decide(ctx context.Context, p *fleetapproval.Prompt) fleetapproval.Decision {
	srv := f.srv
	start := time.Now()
	srv.dec.Session = p.Task // per: session limits count per task
	if p.Type == wire.TypeQuestion {
		qd := srv.dec.AnswerQuestion(p.Raw)
		if qd.Action == "ask" && qd.Q != nil {
			return fleetapproval.Decision{Ask: true, Rule: qd.Rule, Reason: qd.Reason}
		}
		answer := qd.Answer
		if qd.Action != "answer" {
			answer = nil
		}
		rec := f.record(p, start, qd.Decider)
		rec.Type, rec.Summary, rec.Rule, rec.Reason = wire.TypeQuestion, "question", qd.Rule, qd.Reason
		if qd.Q != nil {
			rec.Summary = "question: " + qd.Q.Question
		}
		return f.logged(rec, answer, false, deciderName(qd.Decider, qd.Rule))
	}
	d := srv.dec.Decide(p.Raw)
	if d.Verdict == policy.Ask {
		return fleetapproval.Decision{Ask: true, Rule: d.Rule, Reason: d.Reason}
	}
	allow := d.Verdict == policy.Allow
	rec := f.record(p, start, d.Decider)
	rec.Kind, rec.Summary, rec.Rule, rec.Part, rec.Reason = d.Kind, d.Summary, d.Rule, d.Part, d.Reason
	if d.Decider == policy.ByMalformed {
		rec.Summary = "malformed approval_request"
	}
	if allow && len(d.Charge) > 0 {
		srv.dec.Record(p.Task, d.Charge, time.Now())
		rec.Charged = d.Charge
	}
	return f.logged(rec, nil, allow, deciderName(d.Decider, d.Rule))
}

// record starts the audit record of a decision about p.
func (f *fleetServer) record(p *fleetapproval.Prompt, start time.Time, decider string) audit.Record {
	now := time.Now()
	return audit.Record{Time: now.UTC().Format(time.RFC3339Nano), Type: wire.TypeApproval, Decider: decider,
		Pool: p.Pool, Host: p.Host, Task: p.Task, Prompt: p.ID, Approver: f.id, Policy: f.policy, Latency: latencyMs(start, now)}
}

// logged writes rec (with its decision) to the audit file and the stream, and returns the
// answer; when either cannot take it, the answer is a refusal and fr-approve stops.
func (f *fleetServer) logged(rec audit.Record, answer *string, allow bool, decider string) fleetapproval.Decision {
	var resp []byte
	if rec.Type == wire.TypeQuestion {
		resp, rec.Decision, rec.Answer = wire.QuestionResponse(answer), "skip", answer
		if answer != nil {
			rec.Decision = "answer"
		}
	} else {
		resp, rec.Decision = wire.ApprovalResponse(allow), "deny"
		if allow {
			rec.Decision = "allow"
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	wait, err := f.write(rec)
	if err != nil {
		f.fail(err, rec)
		refusal := wire.ApprovalResponse(false)
		if rec.Type == wire.TypeQuestion {
			refusal = wire.QuestionResponse(nil)
		}
		return fleetapproval.Decision{Response: refusal, Decider: fleetapproval.ByAudit}
	}
	if f.srv.verbose {
		by := decider
		if rec.Answer != nil {
			by = *rec.Answer + ", " + by
		}
		fmt.Fprintf(f.s.Err, "%s: %s %s (%s; task %s from %s)\n", prog, rec.Decision, termsafe.Line(rec.Summary),
			termsafe.Line(by), termsafe.Line(rec.Task), termsafe.Line(rec.Host))
	}
	return fleetapproval.Decision{Response: resp, Decider: decider, Wait: wait}
}

// write appends rec to the audit file, and queues it for the stream: the answer waits for
// the stream to store it, while the next prompts are decided. f.mu is held, so the file and
// the stream take the records in the same order.
func (f *fleetServer) write(rec audit.Record) (wait func(context.Context) error, err error) {
	if f.srv.audit != nil {
		if err := f.srv.audit.Append(rec); err != nil {
			return nil, err
		}
	}
	return f.chain.Enqueue(func(prev *string) []byte {
		r := rec
		r.Prev = prev
		return marshal(r)
	}), nil
}

func (f *fleetServer) fail(err error, rec audit.Record) {
	f.failOne.Do(func() {
		f.failed <- cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "%v: the prompt was refused, unrecorded (%s); fr-approve stops", err, rec.Summary),
			"its worker sends the prompts this approver held to the other members of the pool")
	})
}

// asked records what a person (or nobody) decided about a prompt the policy asked about.
func (f *fleetServer) asked(p *fleetapproval.Prompt, d fleetapproval.Decision) fleetapproval.Decision {
	rec := f.record(p, time.Now(), d.Decider)
	rec.Type, rec.Reason = p.Type, "the policy asks; sent to a person"
	kind, summary := fleetapproval.Summary(p.Raw)
	rec.Kind, rec.Summary = kind, summary
	var r struct {
		Approved bool    `json:"approved"`
		Answer   *string `json:"answer"`
	}
	json.Unmarshal(d.Response, &r)
	return f.logged(rec, r.Answer, r.Approved, d.Decider)
}

// askPerson asks the person at the terminal about a prompt a policy sent to the ask subject,
// until the worker's deadline.
func (f *fleetServer) askPerson(ctx context.Context, p *fleetapproval.Prompt) fleetapproval.Decision {
	ctx, cancel := context.WithDeadline(ctx, p.Deadline)
	defer cancel()
	start := time.Now()
	rec := f.record(p, start, "")
	rec.Type, rec.Rule, rec.Reason = p.Type, p.Rule, p.Reason
	if p.Type == wire.TypeQuestion {
		var q wire.Question
		rec.Summary = "question"
		if json.Unmarshal(p.Raw, &q) != nil {
			rec.Decider, rec.Reason = policy.ByMalformed, "malformed question"
			return f.logged(rec, nil, false, rec.Decider)
		}
		rec.Summary = "question: " + q.Question
		answer, by, typed, err := f.srv.asker.Question(ctx, &q)
		if err != nil || ctx.Err() != nil {
			answer, by = nil, ByTimeout
		}
		rec.Decider, rec.Typed = by, typed
		return f.logged(rec, answer, false, by)
	}
	req, err := wire.DecodeApprovalRequest(p.Raw)
	if err != nil {
		rec.Decider, rec.Summary, rec.Reason = policy.ByMalformed, "malformed approval_request", err.Error()
		return f.logged(rec, nil, false, rec.Decider)
	}
	rec.Kind, rec.Summary = req.Kind, req.Summary()
	d := policy.Decision{Verdict: policy.Ask, Decider: policy.ByDefault, Rule: p.Rule, Reason: p.Reason,
		Kind: req.Kind, Summary: req.Summary(), Request: req}
	if p.Rule != "" {
		d.Decider = policy.ByRule
	}
	if f.srv.verbose {
		cmdutil.Sayf(f.s.Err, prog, "asking about %s (task %s from %s)", termsafe.Line(rec.Summary), termsafe.Line(p.Task), termsafe.Line(p.Host))
	}
	allow, by, typed, err := f.srv.asker.Approve(ctx, req, d)
	if err != nil || (ctx.Err() != nil && by == ByPerson) {
		allow, by = false, ByTimeout
	}
	rec.Decider, rec.Typed = by, typed
	return f.logged(rec, nil, allow, by)
}

// runVerifyStream checks every chain of a fleet's audit stream: it prints one line per chain
// (its subject: one approver's or worker's), and fails at the first that breaks. With --head,
// some chain must hold that line.
func runVerifyStream(ctx context.Context, s cmdutil.Streams, o *verifyOptions) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	logs, err := audit.ReadServerStream(ctx, o.server, o.stream, prog+" verify-audit", o.natsCreds, o.natsCA)
	if err != nil {
		return cmdutil.Errorf(cmdutil.ExitUsage, "%s: %v", termsafe.Line(o.file), err)
	}
	results, verr := audit.VerifyStream(o.file, logs, o.head)
	w := wire.NewWriter(s.Out)
	for _, res := range results {
		if err := w.WriteLine(marshal(res)); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	var ce *audit.ChainError
	switch {
	case verr == nil:
		return nil
	case errors.As(verr, &ce):
		return cmdutil.Errorf(cmdutil.ExitFailed, "audit chain broken at %v", verr)
	case errors.Is(verr, audit.ErrHeadNotFound):
		return cmdutil.Errorf(cmdutil.ExitFailed, "%s", termsafe.Line(verr.Error()))
	default:
		return cmdutil.Errorf(cmdutil.ExitUsage, "%s", termsafe.Line(verr.Error()))
	}
}
