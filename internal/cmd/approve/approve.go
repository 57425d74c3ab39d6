// Package approve implements fr-approve: it answers fuseraft's approval prompts and questions
// from a policy file, asks a person on the terminal when the policy says so, and keeps a
// hash-chained audit log of every decision.
package approve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/audit"
	"github.com/fuseraft/fr/internal/cmd/approve/policy"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

const prog = "fr-approve"

// Run runs fr-approve with args (args[0] is the program name) and returns its exit code.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	ctx, stop := cmdutil.Interruptible(ctx)
	defer stop()
	if os.Getenv("GOGC") == "" {
		// fr-approve keeps little alive between prompts (the policy, one line): with four
		// times Go's default heap goal it collects a quarter as often, for a few MiB more.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	app := App(s)
	return cmdutil.RunApp(ctx, app, s, args)
}

func policyFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "policy", Aliases: []string{"p"}, Usage: "the policy `FILE` (YAML, version 1)"}
}

func rootFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "root", Usage: "file_write paths are normalised against `DIR`; paths outside it are never allowed (default: the working directory)"}
}

func anyVersionFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "any-version", Usage: "go on (with a warning) when fuseraft speaks a protocolVersion this build does not support"}
}

// App is fr-approve's complete command line.
func App(s cmdutil.Streams) *cli.App {
	app := cmdutil.NewApp(s, prog, "answer fuseraft's approval prompts and questions by policy, or by asking a person")
	app.UsageText = "fr-approve --policy FILE [--audit FILE [--audit-fsync]] [--ask-timeout DUR] [--decision-timeout DUR] [--input PATH] [--output PATH] [--root DIR]\n" +
		"fr-approve check --policy FILE [--format jsonl|table] [EVENTS...]\n" +
		"fr-approve test --policy FILE [POLICY...]\n" +
		"fr-approve lint --policy FILE [POLICY...]\n" +
		"fr-approve verify-audit FILE\n" +
		"fr-approve repair-audit FILE\n" + fleetUsage
	app.Description = withFleet(description)
	app.Flags = []cli.Flag{
		policyFlag(),
		&cli.StringFlag{Name: "audit", Usage: "append one hash-chained JSON line per decision to `FILE` (limits are rebuilt from it on start)"},
		&cli.BoolFlag{Name: "audit-fsync", Usage: "flush each audit line to the disk (fsync) before its answer is sent: no answer is lost with the machine, at a disk wait per prompt"},
		&cli.DurationFlag{Name: "ask-timeout", Value: 5 * time.Minute, Usage: "deny a prompt nobody answered on the terminal within `DUR`"},
		&cli.DurationFlag{Name: "decision-timeout", Value: policy.DefaultTimeout, Usage: "deny a prompt the policy takes longer than `DUR` to decide (a backstop: deciding takes microseconds)"},
		&cli.StringFlag{Name: "input", Aliases: []string{"i"}, Usage: "read events from `PATH` (a file or named FIFO) instead of stdin"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write responses to `PATH` instead of stdout; a named FIFO may get its reader before or after fr-approve starts"},
		rootFlag(),
		&cli.StringFlag{Name: "tty", Value: "/dev/tty", Usage: "ask people on the terminal `DEVICE`"},
		cmdutil.Enum("color", cmdutil.ColorValues, "auto", "colour on the terminal: `WHEN` is {values} (NO_COLOR is honoured)"),
		&cli.BoolFlag{Name: "fail-on-deny", Usage: "exit 1 at the end when any prompt was denied"},
		&cli.BoolFlag{Name: "verbose", Usage: "report each decision on stderr"},
		anyVersionFlag(),
	}
	app.Flags = append(app.Flags, fleetFlags()...)
	app.Action = func(c *cli.Context) error {
		o, err := optionsFrom(c)
		if err != nil {
			return err
		}
		return run(c.Context, s, o)
	}
	app.Commands = []*cli.Command{checkCommand(s), testCommand(s), lintCommand(s), verifyCommand(s), repairCommand(s)}
	// The daemon's flags are its own: check, test and lint take --policy and --any-version
	// before their name (`fr-approve --policy p.yaml check`) or define them.
	return cmdutil.Finish(cmdutil.OwnFlags(cmdutil.DeclareExitCodes(app, exitCodes)))
}

// loadPolicy loads the policy named by --policy; any problem is exit 2.
func loadPolicy(name string) (*policy.Policy, error) {
	if name == "" {
		return nil, cmdutil.WithHint(cmdutil.Usagef("no policy given"), "pass --policy FILE (see 'fr-approve --help' for the format)")
	}
	p, err := policy.LoadFile(name)
	if err != nil {
		var es policy.Errors
		if errors.As(err, &es) {
			msg := es.Error()
			if len(es) > 1 {
				msg = fmt.Sprintf("invalid policy (%d problems):\n%s", len(es), msg)
			} else {
				msg = "invalid policy: " + msg
			}
			return nil, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage, "%s", msg), "check it with 'fr-approve lint --policy "+name+"'")
		}
		return nil, cmdutil.Errorf(cmdutil.ExitUsage, "policy: %v", err)
	}
	return p, nil
}

// newDecider loads the policy file name and makes its Decider for root (--root; "": the
// working directory).
func newDecider(s cmdutil.Streams, name, root string) (*policy.Policy, *policy.Decider, error) {
	p, err := loadPolicy(name)
	if err != nil {
		return nil, nil, err
	}
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, cmdutil.Errorf(cmdutil.ExitUsage, "working directory: %v", err)
		}
		root = wd
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, nil, cmdutil.Usagef("--root %s is not a directory", root)
	}
	d, err := policy.NewDecider(p, root)
	if err != nil {
		return nil, nil, cmdutil.Usagef("--root: %v", err)
	}
	d.Warn = func(format string, args ...any) { cmdutil.Warnf(s.Err, prog, format, args...) }
	d.Timeout = policy.DefaultTimeout
	if deciderHook != nil {
		deciderHook(d)
	}
	return p, d, nil
}

// deciderHook, when set, is given each Decider made: tests make decisions panic or run long.
var deciderHook func(*policy.Decider)

// versionCheck checks the protocolVersion of ready and hello events.
type versionCheck struct {
	any    bool
	warned bool
	warn   func(format string, args ...any)
}

func (v *versionCheck) check(l wire.Line) error {
	ev, _ := l.Event()
	err := wire.CheckHandshake(ev)
	if err == nil {
		return nil
	}
	if v.any {
		if !v.warned {
			v.warned = true
			v.warn("%v; going on (--any-version)", err)
		}
		return nil
	}
	return cmdutil.WithHint(err, "pass --any-version to go on anyway")
}

// sessionOf returns the session a stream event says prompts now belong to.
func sessionOf(l wire.Line) (string, bool) {
	switch l.Type {
	case wire.TypeReady, wire.TypeQueued, wire.TypeTaskResumed, wire.TypeTitle, wire.TypeAutoDispatched:
		return wire.TopLevelString(l.Raw, "sessionId")
	case wire.TypeHello:
		var h struct {
			InFlight *struct {
				SessionID string `json:"sessionId"`
			} `json:"inFlight"`
		}
		if json.Unmarshal(l.Raw, &h) == nil && h.InFlight != nil {
			return h.InFlight.SessionID, true
		}
	}
	return "", false
}

// server answers the prompts of one stream.
type server struct {
	s       cmdutil.Streams
	dec     *policy.Decider
	p       *policy.Policy
	audit   *audit.Log
	asker   Asker
	out     *wire.Writer
	vc      *versionCheck
	verbose bool
	denied  bool
	session *string
	// flushErr is the first failed flush of responses (a closed stdout).
	flushErr error
	watch    *watchdog // answers a decision that does not come back (watchdog.go)
}

// options are fr-approve's, answering the prompts of a stream.
type options struct {
	policy          string
	root            string
	audit           string
	auditFsync      bool
	askTimeout      time.Duration
	decisionTimeout time.Duration
	input, output   string
	tty             string
	color           string
	failOnDeny      bool
	verbose         bool
	anyVersion      bool
	fleet           fleetOptions // with fleet.nats set, prompts come from a fleet's pool (fleet.go)
}

// optionsFrom reads fr-approve's command line.
func optionsFrom(c *cli.Context) (*options, error) {
	fo, err := fleetOptionsFrom(c)
	if err != nil {
		return nil, err
	}
	if c.NArg() > 0 {
		if cmdutil.DidYouMean(c.Args().First(), cmdutil.CommandNames(c.App.Commands)) != "" {
			return nil, cmdutil.UnknownCommand(prog, c.Args().First(), c.App.Commands)
		}
		return nil, cmdutil.WithHint(cmdutil.Usagef("unexpected argument %q", c.Args().First()),
			"events are read from stdin or --input; subcommands are check, test, lint, verify-audit and repair-audit")
	}
	o := &options{
		policy:          c.String("policy"),
		root:            c.String("root"),
		audit:           c.String("audit"),
		auditFsync:      c.Bool("audit-fsync"),
		askTimeout:      c.Duration("ask-timeout"),
		decisionTimeout: c.Duration("decision-timeout"),
		input:           c.String("input"),
		output:          c.String("output"),
		tty:             c.String("tty"),
		color:           c.String("color"),
		failOnDeny:      c.Bool("fail-on-deny"),
		verbose:         c.Bool("verbose"),
		anyVersion:      c.Bool("any-version"),
		fleet:           fo,
	}
	if o.decisionTimeout <= 0 {
		return nil, cmdutil.Usagef("--decision-timeout %s is not a positive duration", o.decisionTimeout)
	}
	return o, nil
}

// run answers the prompts of the stream on stdin (or --input) until it ends.
func run(ctx context.Context, s cmdutil.Streams, o *options) error {
	if o.fleet.conn.URL != "" {
		return runFleet(ctx, s, o)
	}
	p, dec, err := newDecider(s, o.policy, o.root)
	if err != nil {
		return err
	}
	dec.Timeout = o.decisionTimeout
	warn := func(format string, args ...any) { cmdutil.Warnf(s.Err, prog, format, args...) }
	asker := &ttyAsker{path: o.tty, timeout: o.askTimeout, color: o.color, getenv: s.Env, warn: warn}
	srv := &server{s: s, dec: dec, p: p, verbose: o.verbose,
		vc: &versionCheck{any: o.anyVersion, warn: warn}, asker: asker}
	if o.auditFsync && o.audit == "" {
		return cmdutil.WithHint(cmdutil.Usagef("--audit-fsync without --audit"), "pass --audit FILE too")
	}
	if o.audit != "" {
		a, err := openAudit(dec, o.audit, o.auditFsync)
		if err != nil {
			return err
		}
		defer a.Close()
		srv.audit = a
	}
	var out io.Writer = s.Out
	if name := o.output; name != "" && name != "-" {
		w, err := openOutput(name)
		if err != nil {
			return err
		}
		defer w.Close()
		out = w
	}
	srv.out = wire.NewWriter(out)
	srv.startWatchdog(dec)
	defer close(srv.watch.stop)
	done := make(chan error, 1)
	go func() { done <- srv.runInput(ctx, o.input) }()
	select {
	case err = <-done:
		asker.close()
	case <-ctx.Done():
		// the reading goroutine may still be blocked on input or the terminal: leave it
		return cmdutil.Exit(cmdutil.ExitInterrupted)
	}
	if err != nil {
		return err
	}
	if srv.denied && o.failOnDeny {
		return cmdutil.Exit(cmdutil.ExitFailed)
	}
	return nil
}

// openAudit opens the audit log name and counts the allows it holds against the limits of
// dec (none when nil: an interactive approver of a fleet). A fleet's records count per task.
func openAudit(dec *policy.Decider, name string, sync bool) (*audit.Log, error) {
	a, recs, err := audit.Open(name, audit.Options{Sync: sync, Wrap: wrapAuditFile})
	if err != nil || dec == nil {
		return a, err
	}
	for _, r := range recs {
		if r.Decision == "allow" && len(r.Charged) > 0 {
			if t, ok := r.When(); ok {
				sess := r.Task
				if r.Session != nil {
					sess = *r.Session
				}
				dec.Record(sess, r.Charged, t)
			}
		}
	}
	return a, nil
}

// runInput answers the prompts read from name (a file or FIFO; "" or -: stdin).
func (srv *server) runInput(ctx context.Context, name string) error {
	in := srv.s.In
	if name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return cmdutil.Errorf(cmdutil.ExitUsage, "--input: %v", err)
		}
		defer f.Close()
		in = f
	}
	return srv.run(ctx, in)
}

// openOutput opens --output: a regular file now (truncated); a named FIFO in the background
// from the start, so that a reader which opens it first (sh's `fuseraft ... < fifo`) and one
// which opens it later both work, while events are read and decided meanwhile. The first
// response waits for the FIFO to have a reader.
func openOutput(name string) (io.WriteCloser, error) {
	if fi, err := os.Stat(name); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
		l := &fifoWriter{name: name, opened: make(chan struct{})}
		go func() {
			l.f, l.err = os.OpenFile(name, os.O_WRONLY, 0)
			close(l.opened)
		}()
		return l, nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, cmdutil.Errorf(cmdutil.ExitUsage, "--output: %v", err)
	}
	return f, nil
}

// fifoWriter writes to a named FIFO whose opening may still be waiting for a reader.
type fifoWriter struct {
	name   string
	opened chan struct{}
	f      *os.File
	err    error
}

func (l *fifoWriter) Write(b []byte) (int, error) {
	<-l.opened
	if l.err != nil {
		return 0, fmt.Errorf("--output: %w", l.err)
	}
	return l.f.Write(b)
}

func (l *fifoWriter) Close() error {
	select {
	case <-l.opened:
	default:
		// Nobody ever opened the FIFO to read: open it ourselves so the pending open returns.
		if r, err := os.OpenFile(l.name, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			<-l.opened
			r.Close()
		}
	}
	<-l.opened
	if l.f != nil {
		return l.f.Close()
	}
	return nil
}

func (srv *server) run(ctx context.Context, in io.Reader) error {
	// Responses go out whenever the input has no whole line left to decide: at once on a live
	// stream, where the next prompt cannot come before this answer, and in blocks on a
	// recorded one. They also go out before a person is asked anything.
	rd := wire.NewReader(in, wire.ReaderOptions{BeforeRead: func() { srv.flush() }})
	for {
		l, err := rd.Next()
		if srv.flushErr != nil {
			return srv.flushErr
		}
		if err == io.EOF {
			return srv.flush()
		}
		if err != nil {
			srv.flush()
			if wire.IsLineTooLong(err) {
				return cmdutil.Errorf(cmdutil.ExitFailed, "input: %v", err)
			}
			return cmdutil.Errorf(cmdutil.ExitFailed, "reading events: %v", err)
		}
		typ, ok := promptType(l)
		if !ok {
			continue
		}
		var start time.Time
		if srv.audit != nil || srv.verbose {
			start = time.Now() // for the latency of the record
		}
		if sess, ok := sessionOf(l); ok {
			srv.session = &sess
			srv.dec.Session = sess
		}
		switch typ {
		case wire.TypeReady, wire.TypeHello:
			if err := srv.vc.check(l); err != nil {
				return err
			}
		case wire.TypeApproval:
			if err := srv.approval(ctx, l, start); err != nil {
				return err
			}
		case wire.TypeQuestion:
			if err := srv.question(ctx, l.Raw, start); err != nil {
				return err
			}
		}
	}
}

// respond queues one response; flush sends it.
func (srv *server) respond(b []byte) error {
	return srv.out.WriteLine(b)
}

// flush sends the responses decided so far and returns the first flush error there was.
func (srv *server) flush() error {
	if err := srv.out.Flush(); err != nil && srv.flushErr == nil {
		srv.flushErr = err
	}
	return srv.flushErr
}

func (srv *server) approval(ctx context.Context, l wire.Line, start time.Time) error {
	srv.watch.begin(l.Raw, false, srv.session)
	d := srv.dec.DecideLine(l) // what the reader learned of the line is handed down with it
	if !srv.watch.end() {
		return srv.watch.err // answered by the watchdog meanwhile
	}
	allow := d.Verdict == policy.Allow
	decider := d.Decider
	var typed []string
	if d.Verdict == policy.Ask {
		if err := srv.flush(); err != nil {
			return err
		}
		ok, by, t, err := srv.asker.Approve(ctx, d.Request, d)
		if err != nil {
			return err
		}
		allow, decider, typed = ok, by, t
	}
	charge := allow && decider == policy.ByRule && len(d.Charge) > 0
	if !allow {
		srv.denied = true
	}
	if srv.audit == nil && !srv.verbose && !charge {
		return srv.respond(wire.ApprovalResponse(allow)) // nobody reads the record, nor the time
	}
	now := time.Now()
	if charge {
		srv.dec.Record(srv.dec.Session, d.Charge, now)
	}
	if srv.audit == nil && !srv.verbose {
		return srv.respond(wire.ApprovalResponse(allow)) // nobody reads the record
	}
	rec := audit.Record{Time: now.UTC().Format(time.RFC3339Nano), Session: srv.session, Type: wire.TypeApproval, Kind: d.Kind,
		Summary: d.Summary, Decision: "deny", Decider: decider, Typed: typed, Rule: d.Rule, Part: d.Part, Reason: d.Reason,
		Policy: "sha256:" + srv.p.SHA256, Latency: latencyMs(start, now)}
	if d.Decider == policy.ByMalformed {
		rec.Summary = "malformed approval_request"
	}
	if allow {
		rec.Decision = "allow"
		if decider == policy.ByRule && len(d.Charge) > 0 {
			rec.Charged = d.Charge
		}
	}
	// the line first, then the answer: an answer the log does not hold is only ever a denial
	if err := srv.logged(rec, wire.ApprovalResponse(allow), wire.ApprovalResponse(false)); err != nil {
		return err
	}
	if srv.verbose {
		by := decider
		if d.Rule != "" {
			by += " " + d.Rule
		}
		fmt.Fprintf(srv.s.Err, "%s: %s %s (%s)\n", prog, rec.Decision, termsafe.Line(rec.Summary), termsafe.Line(by))
	}
	return nil
}

func (srv *server) question(ctx context.Context, raw []byte, start time.Time) error {
	srv.watch.begin(raw, true, srv.session)
	qd := srv.dec.AnswerQuestion(raw)
	if !srv.watch.end() {
		return srv.watch.err // answered by the watchdog meanwhile
	}
	answer, decider := qd.Answer, qd.Decider
	var typed []string
	if qd.Action == "ask" && qd.Q != nil {
		if err := srv.flush(); err != nil {
			return err
		}
		a, by, t, err := srv.asker.Question(ctx, qd.Q)
		if err != nil {
			return err
		}
		answer, decider, typed = a, by, t
	} else if qd.Action != "answer" {
		answer = nil
	}
	now := time.Now()
	summary := "question"
	if qd.Q != nil {
		summary = "question: " + qd.Q.Question
	}
	rec := audit.Record{Time: now.UTC().Format(time.RFC3339Nano), Session: srv.session, Type: wire.TypeQuestion, Summary: summary,
		Decision: "skip", Answer: answer, Decider: decider, Typed: typed, Rule: qd.Rule, Reason: qd.Reason,
		Policy: "sha256:" + srv.p.SHA256, Latency: latencyMs(start, now)}
	if answer != nil {
		rec.Decision = "answer"
	}
	if err := srv.logged(rec, wire.QuestionResponse(answer), wire.QuestionResponse(nil)); err != nil {
		return err
	}
	if srv.verbose {
		a := "(skip)"
		if answer != nil {
			a = *answer
		}
		by := decider
		if qd.Rule != "" {
			by += " " + qd.Rule
		}
		fmt.Fprintf(srv.s.Err, "%s: %s %s: %s (%s)\n", prog, rec.Decision, termsafe.Line(summary), termsafe.Line(a), termsafe.Line(by))
	}
	return nil
}

func latencyMs(start, end time.Time) float64 {
	return float64(end.Sub(start).Microseconds()) / 1000
}
