package approve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/audit"
	"github.com/fuseraft/fr/internal/cmd/approve/policy"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

// CheckRow is one line of `fr-approve check`'s JSONL output.
type CheckRow struct {
	File     string  `json:"file,omitempty"`
	Line     int64   `json:"line"`
	Type     string  `json:"type"`
	Kind     string  `json:"kind,omitempty"`
	Summary  string  `json:"summary"`
	Decision string  `json:"decision"` // allow, ask, deny; for questions answer, skip or ask
	Answer   *string `json:"answer,omitempty"`
	Decider  string  `json:"decider"`
	Rule     string  `json:"rule,omitempty"`
	Part     string  `json:"part,omitempty"`
	Reason   string  `json:"reason,omitempty"`
}

func checkCommand(s cmdutil.Streams) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "print the decision for each prompt of a recorded stream, answering nothing",
		UsageText: "fr-approve check --policy FILE [--format jsonl|table] [--root DIR] [--fail-on-deny] [--fail-on-ask] [EVENTS...]",
		Description: "Reads events from the files given (or stdin, or -) and prints one row per approval_request and\n" +
			"question: the decision, who decided (a rule, the default, or malformed), and for shell commands\n" +
			"the simple command that decided. Limits are counted along the stream as if every allow was\n" +
			"given. Nobody is asked: an ask decision is printed as ask.\n\n" +
			"EXAMPLES\n  # record a run answered by a person, then ask what the CI policy would have done\n" +
			"  fr-stream run --input answers -c ci.yaml 'fix the build' | tee run.jsonl \\\n" +
			"    | fr-approve --policy examples/cautious.yaml --output answers\n" +
			"  fr-approve check --policy examples/ci-go.yaml run.jsonl --format table\n" +
			"  fr-approve check --policy examples/ci-go.yaml run.jsonl | fr-filter 'select(.decision != \"allow\")'",
		Flags: []cli.Flag{
			policyFlag(),
			cmdutil.Enum("format", []string{"jsonl", "table"}, "", "`FORMAT`: {values} (default: table on a terminal, else jsonl)"),
			rootFlag(),
			&cli.BoolFlag{Name: "fail-on-deny", Usage: "exit 1 when any prompt would be denied"},
			&cli.BoolFlag{Name: "fail-on-ask", Usage: "exit 1 when any prompt would be asked about"},
			anyVersionFlag(),
		},
		Action: func(c *cli.Context) error {
			o, err := checkOptionsFrom(c)
			if err != nil {
				return err
			}
			return runCheck(c.Context, s, o)
		},
	}
}

// checkOptions are fr-approve check's.
type checkOptions struct {
	policy     string
	root       string
	format     string // jsonl, table; "": table on a terminal, else jsonl
	files      []string
	failOnDeny bool
	failOnAsk  bool
	anyVersion bool
}

func checkOptionsFrom(c *cli.Context) (*checkOptions, error) {
	o := &checkOptions{
		policy:     c.String("policy"),
		root:       c.String("root"),
		format:     c.String("format"),
		files:      c.Args().Slice(),
		failOnDeny: c.Bool("fail-on-deny"),
		failOnAsk:  c.Bool("fail-on-ask"),
		anyVersion: c.Bool("any-version"),
	}
	if len(o.files) == 0 {
		o.files = []string{"-"}
	}
	return o, nil
}

// runCheck prints the decision for each prompt of the files, answering nothing.
func runCheck(_ context.Context, s cmdutil.Streams, o *checkOptions) error {
	_, dec, err := newDecider(s, o.policy, o.root)
	if err != nil {
		return err
	}
	format := o.format
	if format == "" {
		format = "jsonl"
		if s.OutTerminal {
			format = "table"
		}
	}
	pr := newCheckPrinter(s.Out, format == "table", len(o.files) > 1)
	vc := &versionCheck{any: o.anyVersion, warn: func(f string, a ...any) { cmdutil.Warnf(s.Err, prog, f, a...) }}
	for _, name := range o.files {
		if err := checkFile(s, dec, vc, pr, name); err != nil {
			return err
		}
	}
	if err := pr.flush(); err != nil {
		return err
	}
	if (pr.denied && o.failOnDeny) || (pr.asked && o.failOnAsk) {
		return cmdutil.Exit(cmdutil.ExitFailed)
	}
	return nil
}

// checkFile prints a row for each prompt of the events in name (-: stdin), deciding them
// afresh: limits count from zero in each file.
func checkFile(s cmdutil.Streams, dec *policy.Decider, vc *versionCheck, pr *checkPrinter, name string) error {
	var in io.Reader = s.In
	shown := ""
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
		}
		defer f.Close()
		in, shown = f, name
	}
	dec.Reset()
	dec.Session = ""
	rd := wire.NewReader(in, wire.ReaderOptions{BeforeRead: pr.flushLive})
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return cmdutil.Errorf(cmdutil.ExitFailed, "%s: %v", displayName(name), err)
		}
		typ, ok := promptType(l)
		if !ok {
			continue
		}
		if sess, ok := sessionOf(l); ok {
			dec.Session = sess
		}
		if typ == wire.TypeReady || typ == wire.TypeHello {
			if err := vc.check(l); err != nil {
				return err
			}
			continue
		}
		row, ok := checkRow(dec, l, typ)
		if !ok {
			continue
		}
		row.File, row.Line = shown, rd.LineNumber()
		if err := pr.print(row); err != nil {
			return err
		}
	}
}

// checkRow decides one prompt of type typ as fr-approve would, counting an allow against the
// limits; ok is false for a line that is not a prompt.
func checkRow(dec *policy.Decider, l wire.Line, typ string) (row CheckRow, ok bool) {
	row.Type = typ
	switch typ {
	case wire.TypeApproval:
		d := dec.DecideLine(l)
		row.Kind, row.Summary, row.Decision, row.Decider = d.Kind, d.Summary, d.Verdict.String(), d.Decider
		row.Rule, row.Part, row.Reason = d.Rule, d.Part, d.Reason
		if d.Decider == policy.ByMalformed {
			row.Summary = "malformed approval_request"
		}
		if d.Verdict == policy.Allow && len(d.Charge) > 0 {
			dec.Record(dec.Session, d.Charge, dec.NowTime())
		}
	case wire.TypeQuestion:
		q := dec.AnswerQuestion(l.Raw)
		row.Summary, row.Decision, row.Decider, row.Rule, row.Reason = "question", q.Action, q.Decider, q.Rule, q.Reason
		if q.Q != nil {
			row.Summary = "question: " + q.Q.Question
		}
		row.Answer = q.Answer
	default:
		return row, false
	}
	return row, true
}

// checkPrinter prints check's rows, as JSON lines or as a table, and notes what they decided.
type checkPrinter struct {
	w      *wire.Writer
	tw     *tabwriter.Writer // nil: JSON lines
	files  bool              // name the file of each row in the table
	denied bool
	asked  bool
}

func newCheckPrinter(out io.Writer, table, files bool) *checkPrinter {
	pr := &checkPrinter{w: wire.NewWriter(out), files: files}
	if table {
		pr.tw = tabwriter.NewWriter(pr.w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(pr.tw, "LINE\tDECISION\tBY\tPROMPT")
	}
	return pr
}

func (pr *checkPrinter) print(row CheckRow) error {
	switch row.Decision {
	case "deny":
		pr.denied = true
	case "ask":
		pr.asked = true
	}
	if pr.tw == nil {
		return pr.w.WriteLine(marshal(row))
	}
	by := row.Decider
	if row.Rule != "" {
		by = row.Rule
	}
	what := row.Summary
	// the part that decided, unless it is the whole command
	if row.Part != "" && strings.TrimPrefix(row.Summary, "shell: ") != row.Part {
		what += "  [" + row.Part + "]"
	}
	if row.Reason != "" && row.Decider != policy.ByRule {
		what += "  (" + row.Reason + ")"
	}
	if row.Answer != nil {
		what += " -> " + *row.Answer
	}
	loc := fmt.Sprint(row.Line)
	if pr.files {
		loc = row.File + ":" + loc
	}
	_, err := fmt.Fprintf(pr.tw, "%s\t%s\t%s\t%s\n", loc, row.Decision, termsafe.Line(by), termsafe.Line(what))
	return err
}

// flushLive sends the JSON lines printed so far, before the input is read again: rows come
// out as their prompts go in. A table waits for its last row, to align its columns.
func (pr *checkPrinter) flushLive() {
	if pr.tw == nil {
		pr.w.Flush()
	}
}

func (pr *checkPrinter) flush() error {
	if pr.tw != nil {
		if err := pr.tw.Flush(); err != nil {
			return err
		}
	}
	return pr.w.Flush()
}

func displayName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}

// policyFiles are the policies named by --policy and the arguments.
func policyFiles(policy string, args []string) ([]string, error) {
	var files []string
	if policy != "" {
		files = append(files, policy)
	}
	files = append(files, args...)
	if len(files) == 0 {
		return nil, cmdutil.WithHint(cmdutil.Usagef("no policy given"), "pass --policy FILE or name policy files as arguments")
	}
	return files, nil
}

func testCommand(s cmdutil.Streams) *cli.Command {
	return &cli.Command{
		Name:      "test",
		Usage:     "run the tests: of a policy (an event and the expected decision each)",
		UsageText: "fr-approve test --policy FILE [--root DIR] [-v] [POLICY...]",
		Description: "Each test of the policy's tests: list is decided afresh (limits start from zero) and compared\n" +
			"with its expect: (allow, ask or deny; for a question answer or skip, with answer:) and, when\n" +
			"given, the deciding rule: (a rule name, default or malformed). Failures are printed as\n" +
			"FILE:LINE: lines on stdout, then one summary line per policy.\n\n" +
			"EXAMPLES\n  fr-approve test --policy examples/ci-go.yaml\n  fr-approve test examples/*.yaml",
		Flags: []cli.Flag{
			policyFlag(),
			rootFlag(),
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print passing tests too"},
		},
		Action: func(c *cli.Context) error {
			o, err := testOptionsFrom(c)
			if err != nil {
				return err
			}
			return runTests(c.Context, s, o)
		},
	}
}

// testOptions are fr-approve test's.
type testOptions struct {
	files   []string // the policies
	root    string
	verbose bool
}

func testOptionsFrom(c *cli.Context) (*testOptions, error) {
	files, err := policyFiles(c.String("policy"), c.Args().Slice())
	if err != nil {
		return nil, err
	}
	return &testOptions{files: files, root: c.String("root"), verbose: c.Bool("verbose")}, nil
}

// runTests runs the tests of each policy, printing failures (and with verbose passes) and a
// summary line per policy.
func runTests(_ context.Context, s cmdutil.Streams, o *testOptions) error {
	failed := false
	w := wire.NewWriter(s.Out)
	defer w.Flush()
	for _, f := range o.files {
		p, dec, err := newDecider(s, f, o.root)
		if err != nil {
			return err
		}
		n, bad := 0, 0
		for _, t := range p.Tests {
			n++
			got := testOne(dec, t)
			if got != "" {
				bad++
				fmt.Fprintf(w, "%s:%d: FAIL %s: %s\n", termsafe.Line(f), t.Line, termsafe.Line(t.Name), termsafe.Text(got))
			} else if o.verbose {
				fmt.Fprintf(w, "%s:%d: ok %s\n", termsafe.Line(f), t.Line, termsafe.Line(t.Name))
			}
		}
		switch {
		case n == 0:
			fmt.Fprintf(w, "?    %s: no tests\n", termsafe.Line(f))
		case bad > 0:
			failed = true
			fmt.Fprintf(w, "FAIL %s: %d of %d tests failed\n", termsafe.Line(f), bad, n)
		default:
			fmt.Fprintf(w, "ok   %s: %d tests\n", termsafe.Line(f), n)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed {
		return cmdutil.Exit(cmdutil.ExitFailed)
	}
	return nil
}

// testOne returns "" when the test passes, else what went wrong.
func testOne(dec *policy.Decider, t *policy.Test) string {
	dec.Reset()
	dec.Session = ""
	typ, _ := wire.TopLevelString(t.Event, "type")
	if typ == wire.TypeQuestion {
		q := dec.AnswerQuestion(t.Event)
		got := q.Action
		by := q.Decider
		if q.Rule != "" {
			by = q.Rule
		}
		if got != t.Expect {
			return fmt.Sprintf("got %s by %s, want %s", got, by, t.Expect)
		}
		if t.Answer != nil && (q.Answer == nil || *q.Answer != *t.Answer) {
			a := "null"
			if q.Answer != nil {
				a = fmt.Sprintf("%q", *q.Answer)
			}
			return fmt.Sprintf("answered %s by %s, want %q", a, by, *t.Answer)
		}
		if t.Rule != "" && by != t.Rule {
			return fmt.Sprintf("decided by %s, want %s", by, t.Rule)
		}
		return ""
	}
	d := dec.Decide(t.Event)
	by, decider := d.Decider, d.Decider
	if d.Rule != "" {
		by, decider = "rule "+strconv.Quote(d.Rule), d.Rule
	}
	detail := ""
	if d.Part != "" {
		detail = fmt.Sprintf(" (for %q)", d.Part)
	}
	if d.Reason != "" && d.Decider != policy.ByRule {
		detail += ": " + d.Reason
	}
	if d.Verdict.String() != t.Expect {
		return fmt.Sprintf("got %s by %s%s, want %s", d.Verdict, by, detail, t.Expect)
	}
	if t.Rule != "" && decider != t.Rule {
		return fmt.Sprintf("got %s by %s%s, want rule %q", d.Verdict, by, detail, t.Rule)
	}
	return ""
}

func lintCommand(s cmdutil.Streams) *cli.Command {
	return &cli.Command{
		Name:      "lint",
		Usage:     "find rules that can never decide and allow rules broader than they look",
		UsageText: "fr-approve lint --policy FILE [POLICY...]",
		Description: "Loads each policy (every unknown key, bad glob, bad regex and bad jq is reported, with its\n" +
			"line) and prints FILE:LINE: findings on stdout: rules a stricter (or an earlier, equal) rule\n" +
			"always overrides, allow patterns that accept any command or argument, bare commands that\n" +
			"run anything with the right arguments (git, go, make, python, ...), allowed commands whose\n" +
			"options run another program or write anywhere (go test -toolexec, git diff --output, sort -o,\n" +
			"find -fprint, ...: each is tried against the policy), allow paths matching the whole tree,\n" +
			"unanchored regular expressions, when conditions that fail on ordinary prompts (a field left\n" +
			"out or null, a one-word command: a failed condition counts as a match for deny and ask rules\n" +
			"and as no match for allow rules), and policies without tests. A policy without findings\n" +
			"gets a line of its own: ok   FILE: no findings.\n\n" +
			"EXAMPLES\n  fr-approve lint --policy examples/ci-go.yaml\n  fr-approve lint examples/*.yaml || echo 'review the policy'",
		Flags: []cli.Flag{policyFlag()},
		Action: func(c *cli.Context) error {
			o, err := lintOptionsFrom(c)
			if err != nil {
				return err
			}
			return runLint(c.Context, s, o)
		},
	}
}

// lintOptions are fr-approve lint's.
type lintOptions struct {
	files []string // the policies
}

func lintOptionsFrom(c *cli.Context) (*lintOptions, error) {
	files, err := policyFiles(c.String("policy"), c.Args().Slice())
	if err != nil {
		return nil, err
	}
	return &lintOptions{files: files}, nil
}

// runLint prints the findings of each policy, or that it has none.
func runLint(_ context.Context, s cmdutil.Streams, o *lintOptions) error {
	w := wire.NewWriter(s.Out)
	defer w.Flush()
	found := false
	for _, f := range o.files {
		p, err := loadPolicy(f)
		if err != nil {
			return err
		}
		xs := policy.Lint(p)
		if len(xs) == 0 {
			// as test says ok for a policy whose tests pass
			fmt.Fprintf(w, "ok   %s: no findings\n", termsafe.Line(f))
		}
		for _, x := range xs {
			found = true
			if x.Line > 0 {
				fmt.Fprintf(w, "%s:%d: %s\n", termsafe.Line(f), x.Line, termsafe.Text(x.Msg))
			} else {
				fmt.Fprintf(w, "%s: %s\n", termsafe.Line(f), termsafe.Text(x.Msg))
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if found {
		return cmdutil.Exit(cmdutil.ExitFailed)
	}
	return nil
}

func verifyCommand(s cmdutil.Streams) *cli.Command {
	return &cli.Command{
		Name:      "verify-audit",
		Usage:     "check the hash chain of an audit log",
		UsageText: "fr-approve verify-audit [--head HASH] FILE\nfr-approve verify-audit [--head HASH] [--nats-creds FILE] nats://HOST:PORT/STREAM",
		Description: "Each line of an audit log ends with hash, the sha256 of the line without that field, and\n" +
			"carries prev, the hash of the line before it (null on the first). verify-audit recomputes\n" +
			"them and names the first line that breaks the chain: a line changed, removed, inserted or\n" +
			"cut. On success it prints {\"file\",\"lines\",\"ok\":true,\"last\"}. Anyone can recompute a\n" +
			"chain, so keep last somewhere the log's writer cannot change (a CI artifact, a signed\n" +
			"commit) and pass it later as --head: the log must still hold that line, which notices lines\n" +
			"rewritten or removed from the end; \"since\" counts the lines written after it.\n\n" +
			"A fleet's audit stream (nats://HOST:PORT/STREAM, what fr-approve --nats writes to) holds a\n" +
			"chain per writer, each on its own subject: every one is checked, and one line is printed\n" +
			"per chain, with its subject; --head must be the last line of one of them, then or since.\n\n" +
			"EXAMPLES\n  fr-approve verify-audit approvals.log && fr-filter 'select(.decider==\"person\")' approvals.log\n" +
			"  head=$(fr-approve verify-audit approvals.log | fr-filter -r .last)   # keep it elsewhere\n" +
			"  fr-approve verify-audit --head \"$head\" approvals.log",
		Flags: []cli.Flag{&cli.StringFlag{Name: "head", Usage: "fail unless the log holds the line with this `HASH` (a last printed earlier)"},
			&cli.StringFlag{Name: "nats-creds", Usage: "for an audit stream, the NATS credentials `FILE`"},
			&cli.StringFlag{Name: "nats-ca", Usage: "for an audit stream on tls://, trust the CA certificate in `FILE`"}},
		Action: func(c *cli.Context) error {
			o, err := verifyOptionsFrom(c)
			if err != nil {
				return err
			}
			return runVerify(c.Context, s, o)
		},
	}
}

// verifyOptions are fr-approve verify-audit's.
type verifyOptions struct {
	file string
	head string // "": any
	// server and stream are set when file is a fleet's audit stream, nats://HOST:PORT/STREAM
	server, stream string
	natsCreds      string
	natsCA         string
}

func verifyOptionsFrom(c *cli.Context) (*verifyOptions, error) {
	if c.NArg() != 1 {
		return nil, cmdutil.WithHint(cmdutil.Usagef("verify-audit takes one audit log"), "fr-approve verify-audit [--head HASH] FILE")
	}
	o := &verifyOptions{file: c.Args().First(), head: c.String("head"),
		natsCreds: c.String("nats-creds"), natsCA: c.String("nats-ca")}
	if o.head != "" && (len(o.head) != audit.HashLen || !strings.HasPrefix(o.head, "sha256:")) {
		return nil, cmdutil.WithHint(cmdutil.Usagef("--head %q is not a hash verify-audit printed", o.head), "it looks like sha256: and 64 hex digits")
	}
	server, stream, ok, err := fleet.SplitURL(o.file)
	if err != nil {
		return nil, cmdutil.Usagef("%v", err)
	}
	if ok {
		o.server, o.stream = server, stream
	}
	return o, nil
}

// runVerify checks the chain of an audit log and prints how far it goes.
func runVerify(ctx context.Context, s cmdutil.Streams, o *verifyOptions) error {
	if o.stream != "" {
		return runVerifyStream(ctx, s, o)
	}
	f, err := os.Open(o.file)
	if err != nil {
		return cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
	}
	defer f.Close()
	res, err := audit.Verify(o.file, f, o.head)
	if err != nil {
		if ce, ok := err.(*audit.ChainError); ok {
			if ce.Torn {
				return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "audit chain broken at %v", err), audit.RepairHint(o.file))
			}
			return cmdutil.Errorf(cmdutil.ExitFailed, "audit chain broken at %v", err)
		}
		return cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
	}
	_, err = fmt.Fprintf(s.Out, "%s\n", marshal(res))
	return err
}

func repairCommand(s cmdutil.Streams) *cli.Command {
	return &cli.Command{
		Name:      "repair-audit",
		Usage:     "cut a torn last line (a write cut short) from an audit log, recording the cut",
		UsageText: "fr-approve repair-audit [--dry-run] [--force] FILE",
		Description: "A write cut short (a full disk, a crash) can leave an audit log ending in an incomplete\n" +
			"line, which verify-audit, fr-approve and fr-report refuse. repair-audit cuts what follows the\n" +
			"last line that verifies, once that is a torn last line: the bytes cut are first saved to\n" +
			"FILE.torn-TIME beside the log, then cut, then a record of the cut is appended to the chain\n" +
			"(type audit_repair, with cut: line, offset, bytes, their sha256, the file saved) and flushed\n" +
			"to the disk, so the cut is itself audited. It says what it cut on stderr and prints what\n" +
			"verify-audit prints, with cut, on stdout. A log that verifies is left as it is. A complete\n" +
			"line that breaks the chain was not left by a failed write (it was changed, removed or\n" +
			"inserted): repair-audit refuses it unless --force, which cuts from that line to the end,\n" +
			"saved and recorded the same way. The log must not be in use by an fr-approve.\n\n" +
			"EXAMPLES\n  fr-approve verify-audit approvals.log || fr-approve repair-audit approvals.log\n" +
			"  fr-approve repair-audit --dry-run approvals.log | fr-filter .cut",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print what would be cut, change nothing"},
			&cli.BoolFlag{Name: "force", Usage: "also cut from a complete line that breaks the chain to the end (saved beside the log, and recorded)"},
		},
		Action: func(c *cli.Context) error {
			o, err := repairOptionsFrom(c)
			if err != nil {
				return err
			}
			return runRepair(c.Context, s, o)
		},
	}
}

// repairOptions are fr-approve repair-audit's.
type repairOptions struct {
	file   string
	dryRun bool
	force  bool
}

func repairOptionsFrom(c *cli.Context) (*repairOptions, error) {
	if c.NArg() != 1 {
		return nil, cmdutil.WithHint(cmdutil.Usagef("repair-audit takes one audit log"), "fr-approve repair-audit [--dry-run] [--force] FILE")
	}
	return &repairOptions{file: c.Args().First(), dryRun: c.Bool("dry-run"), force: c.Bool("force")}, nil
}

// runRepair cuts a torn last line from an audit log, saying what it cut on stderr and
// printing the log's state after it on stdout.
func runRepair(_ context.Context, s cmdutil.Streams, o *repairOptions) error {
	name := o.file
	res, err := audit.Repair(name, audit.RepairOptions{Force: o.force, DryRun: o.dryRun, Now: s.Time(), Wrap: wrapAuditFile})
	if err != nil {
		return err
	}
	switch cut := res.Cut; {
	case cut == nil:
		cmdutil.Sayf(s.Err, prog, "%s: nothing to cut: its %d lines verify", name, res.Lines)
	case o.dryRun:
		cmdutil.Sayf(s.Err, prog, "%s: would cut %d bytes at offset %d (line %d: %s)", name, cut.Bytes, cut.Offset, cut.Line, cut.Reason)
	default:
		cmdutil.Sayf(s.Err, prog, "%s: cut %d bytes at offset %d (line %d: %s), saved in %s; the cut is recorded as line %d",
			name, cut.Bytes, cut.Offset, cut.Line, cut.Reason, cut.Saved, res.Lines)
	}
	_, err = fmt.Fprintf(s.Out, "%s\n", marshal(res))
	return err
}

// marshal encodes v as one JSON line body, without escaping <, > and & (people read these).
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}
