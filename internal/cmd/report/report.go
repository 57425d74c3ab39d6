// Package report implements fr-report: one report of what a session did, read from fr session
// streams (fr-attach or fr-stream output) and, optionally, fr-approve's audit log, as a Markdown
// job summary, GitHub Actions workflow commands, JUnit XML, a self-contained HTML page or JSON.
//
// Every format is a printer over one model (Report), built once from the events: what the json
// format prints is what the others render.
package report

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/prices"
	"github.com/fuseraft/fr/internal/redact"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

const prog = "fr-report"

const description = `fr-report reads fr session streams (the JSONL of fr-attach or fr-stream: files, directories
of them, or stdin) and writes one report of what the session did: each task or run with its
outcome, agents, turns, duration, tokens and cost; the files changed; every approval prompt with
its decision and the rule or person that decided it, refused ones first; the questions asked.
Lines that are not JSON and event types it does not know are counted, never fatal.

   --format markdown   a job summary: append it to $GITHUB_STEP_SUMMARY, or post it as a
                       merge-request comment; details folded (the default)
   --format github     GitHub Actions workflow commands: ::error for a failed task or run,
                       ::warning file=PATH for a refused file write, ::notice for other refused
                       prompts and a one-line summary; they show on the pull request
   --format junit      JUnit XML, one test case per task or run, failed with its errorMessage
   --format html       one self-contained page of the whole session for a person: the reply,
                       tool calls and results, diffs of file writes, prompts and decisions, a
                       section per session when there are several; no script, no network,
                       printable
   --format json       the model itself as one JSON object, what the other formats show

WHY EACH PROMPT WAS DECIDED
   A session stream holds the prompts but not their answers. --audit FILE reads fr-approve's
   hash-chained audit log (its chain is checked first: a log that does not verify is refused)
   and gives each prompt its decision, the rule or person that decided and the reason. Without
   it every decision is reported as unknown, never guessed. Give --audit once per log (one
   fr-approve per session); logs joined in one file (cat a.jsonl b.jsonl) are read as the
   chains they are, each starting at its first line (prev null) and verified on its own. A
   session keeps to the log its first prompt matched in. A fleet's audit stream is read as
   --audit nats://HOST:PORT/STREAM: each approver's chain on it is checked and read as a log of
   its own.

A CHAT'S OWN MESSAGES
   fuseraft's events do not carry what the person typed in a chat. fr-stream --record-input
   FILE writes each line it sent; --input-log FILE reads it, and each message (a user_input
   that is not a /command) is shown at its chat's next turn. Give one --input-log per chat, in
   the order the chats come in the input. A chat is named by its title when it has one.

COST
   --prices FILE is a YAML table of USD per million tokens:

      version: 1
      default: {input: 3, output: 15, cached: 0.3}   # any model not named below
      models:
        sim-small: {input: 0.5, output: 1.5, cached: 0.05}

   Cached input tokens are part of the input: they are charged at "cached", the rest at
   "input". A session is priced by the model its stream names (a chat's ready or status
   event); a run names none and takes the default.

LIMITS
   --max-turns, --max-tokens, --max-duration and --max-cost (with --prices) show the report's
   totals against the limits a session was run with (fr-stream's and fr-attach's flags of the
   same names; their stream does not carry them): "past" when a total went over. A session
   stopped by a limit ends early, so its totals may be just over it.

REDACTION
   On by default, in every format: the value of $FUSERAFT_SERVE_TOKEN (the daemon's token, which
   fr reads; a value under 6 bytes is left alone, with a warning), the values of the environment
   variables named with --redact-env (6 bytes at least), bearer tokens, GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), AWS
   access key ids, Google API keys, OpenAI and Anthropic keys (sk-...), Slack tokens (xox...),
   private key blocks, and matches of --redact-pattern are replaced by [REDACTED].
   --no-redact turns it off.

BOUNDS
   The report holds at most a few megabytes whatever the size of the session: long texts are cut
   (after redaction), and the transcript keeps its first 4,000 entries; what is left out is
   counted in the report.`

const environment = `ENVIRONMENT
   FUSERAFT_SERVE_TOKEN   its value is redacted (unless --no-redact)
   The variables named with --redact-env are read for their values, which are redacted.
   NO_COLOR and TERM are not used: no format has colour.`

const example = `EXAMPLES
   # GitHub Actions: a job summary, annotations, and a page to keep as an artifact
   fr-report --audit approvals.jsonl session.jsonl >> "$GITHUB_STEP_SUMMARY"
   fr-report --format github --audit approvals.jsonl session.jsonl
   fr-report --format html --audit approvals.jsonl -o session.html session.jsonl

   # several chats, each with its own fr-approve and fr-stream --record-input
   fr-report --format html -o chats.html --audit a-approvals.jsonl --audit b-approvals.jsonl \
     --input-log a-sent.jsonl --input-log b-sent.jsonl a.jsonl b.jsonl

   # GitLab or Jenkins: JUnit, and fail the job with the session
   fr-report --format junit --exit-status -o report.xml session.jsonl

   # cost, and a token of your own kept out of the report
   fr-report --prices prices.yaml --redact-env DEPLOY_TOKEN --format json session.jsonl | jq .costUSD`

type printer interface {
	Print(w io.Writer, r *Report) error
}

var printers = map[string]printer{
	"markdown": markdownPrinter{}, "md": markdownPrinter{},
	"github": githubPrinter{}, "junit": junitPrinter{}, "html": htmlPrinter{}, "json": jsonPrinter{},
}

// Run is fr-report's whole command line.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	cmdutil.QuietOnClosedStdout(s)
	app := App(s)
	return cmdutil.RunApp(ctx, app, s, args)
}

// App is fr-report's definition: its flags and help, for Run and the docs.
func App(s cmdutil.Streams) *cli.App {
	app := cmdutil.NewApp(s, prog, "report what a session did: job summary, annotations, JUnit, HTML, JSON")
	app.UsageText = "fr-report [--format markdown|github|junit|html|json] [--audit FILE]... [--input-log FILE]... [--prices FILE] [FILE|DIR...]"
	app.ArgsUsage = "[FILE|DIR...]"
	app.Description = description + "\n\n" + environment + "\n\n" + example
	app.Flags = []cli.Flag{
		cmdutil.Enum("format", formats, "markdown", "`FORMAT` of the report: {values}", "f"),
		&cli.StringSliceFlag{Name: "audit", Usage: "fr-approve's audit log `FILE` (or a fleet's audit stream, nats://HOST:PORT/STREAM): the decision of each prompt and who made it (repeatable; logs joined in one file are read too)"},
		&cli.StringSliceFlag{Name: "input-log", Usage: "fr-stream --record-input's `FILE`: a chat's own messages (repeatable, in the order of the chats)"},
		&cli.StringFlag{Name: "prices", Usage: "price table `FILE` (YAML, USD per million tokens per model; see COST)"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the report to `FILE` instead of stdout"},
		&cli.StringSliceFlag{Name: "redact-env", Usage: "redact the value of environment variable `NAME` (repeatable)"},
		&cli.StringSliceFlag{Name: "redact-pattern", Usage: "redact matches of `REGEX` (RE2 syntax; repeatable)"},
		&cli.BoolFlag{Name: "no-redact", Usage: "leave secrets in (the report is no longer safe to share)"},
		&cli.BoolFlag{Name: "exit-status", Usage: "exit 1 when a task or run failed or did not finish"},
		&cli.BoolFlag{Name: "any-version", Usage: "read a stream of an unsupported protocolVersion, with a warning"},
	}
	app.Flags = append(app.Flags, budget.ReportFlags()...)
	app.Action = func(c *cli.Context) error {
		o, err := optionsFrom(c, s)
		if err != nil {
			return err
		}
		return run(c.Context, s, o)
	}
	return cmdutil.Finish(cmdutil.DeclareExitCodes(app, exitCodes))
}

// formats are the values of --format, in the order the help lists them.
var formats = []string{"markdown", "github", "junit", "html", "json"}

// options are fr-report's.
type options struct {
	format     string
	printer    printer
	redactor   *redact.Redactor // nil: --no-redact
	prices     *prices.Table
	limits     budget.Limits
	files      []string // the session streams: files, "-" for stdin
	audits     []string
	inputLogs  []string
	output     string // "": stdout
	exitStatus bool
	anyVersion bool
}

// optionsFrom reads fr-report's command line: the redactor, price table and limits it names
// are made here, so that a bad one is a usage error before anything is read.
func optionsFrom(c *cli.Context, s cmdutil.Streams) (*options, error) {
	if err := cmdutil.CheckEnum("format", c.String("format"), formats); err != nil {
		return nil, err
	}
	o := &options{
		format:     c.String("format"),
		printer:    printers[c.String("format")],
		audits:     c.StringSlice("audit"),
		inputLogs:  c.StringSlice("input-log"),
		output:     c.String("output"),
		exitStatus: c.Bool("exit-status"),
		anyVersion: c.Bool("any-version"),
	}
	var err error
	if o.redactor, err = redactor(s, c.Bool("no-redact"), c.StringSlice("redact-env"), c.StringSlice("redact-pattern")); err != nil {
		return nil, err
	}
	if name := c.String("prices"); name != "" {
		if o.prices, err = prices.Load(name); err != nil {
			return nil, cmdutil.WithHint(cmdutil.Usagef("prices: %v", err), "see 'fr-report --help', section COST")
		}
	}
	if o.limits, err = budget.LimitsFrom(c); err != nil {
		return nil, err
	}
	if o.files, err = inputs(c.Args().Slice()); err != nil {
		return nil, err
	}
	return o, nil
}

// run reads the audit logs, input logs and session streams into one report and prints it.
func run(_ context.Context, s cmdutil.Streams, o *options) error {
	r, err := build(s, o)
	if err != nil {
		return err
	}
	if o.format != "json" {
		// Shown to people (a terminal, a CI log, a page): no control character or escape
		// sequence from outside reaches them.
		redactAll(r, termsafe.Text)
	}
	if err := printReport(s, o, r); err != nil {
		return err
	}
	if o.exitStatus && r.Failed() {
		return cmdutil.Exit(cmdutil.ExitFailed)
	}
	return nil
}

// build reads every input into the report's model.
func build(s cmdutil.Streams, o *options) (*Report, error) {
	b := newBuilder(o.redactor, o.prices)
	b.anyVersion = o.anyVersion
	b.warn = func(msg string) { cmdutil.Warnf(s.Err, prog, "%s", msg) }
	for _, name := range o.audits {
		if err := b.readAudit(name); err != nil {
			return nil, err
		}
	}
	for _, name := range o.inputLogs {
		if err := b.readInputLog(name); err != nil {
			return nil, err
		}
	}
	for _, f := range o.files {
		if err := readFile(b, f, s.In); err != nil {
			return nil, err
		}
		if b.versionErr != nil {
			return nil, b.versionErr
		}
	}
	r := b.finish()
	r.SetLimits(o.limits)
	return r, nil
}

// printReport prints r in its format to stdout or --output.
func printReport(s cmdutil.Streams, o *options, r *Report) error {
	out := s.Out
	var f *os.File
	if o.output != "" {
		var err error
		if f, err = os.Create(o.output); err != nil {
			return cmdutil.Usagef("%v", err)
		}
		defer f.Close()
		out = f
	}
	bw := bufio.NewWriterSize(out, 64<<10)
	if err := o.printer.Print(bw, r); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if f != nil {
		return f.Close()
	}
	return nil
}

// redactor makes the redactor of --redact-env and --redact-pattern (nil with --no-redact).
func redactor(s cmdutil.Streams, noRedact bool, envs, patterns []string) (*redact.Redactor, error) {
	if noRedact {
		if len(envs) > 0 || len(patterns) > 0 {
			return nil, cmdutil.Usagef("--no-redact with --redact-env or --redact-pattern: choose one")
		}
		return nil, nil
	}
	red, err := redact.Configure(envs, patterns, s.Env,
		func(format string, args ...any) { cmdutil.Warnf(s.Err, prog, format, args...) })
	if err != nil {
		return nil, cmdutil.Usagef("%v", err)
	}
	return red, nil
}

// checkVersion checks the protocolVersion of a ready or hello event.
func (b *builder) checkVersion(ev wire.Event) {
	var v struct {
		ProtocolVersion *int `json:"protocolVersion"`
	}
	if ev.Decode(&v) != nil || v.ProtocolVersion == nil {
		return
	}
	err := wire.CheckVersion(*v.ProtocolVersion, "the "+ev.Type+" event")
	if err == nil {
		return
	}
	if !b.anyVersion {
		if b.versionErr == nil {
			b.versionErr = cmdutil.WithHint(err, "pass --any-version to report on it anyway")
		}
		return
	}
	if !b.warnedVersion {
		b.warnedVersion = true
		b.warn(err.Error())
	}
}

type jsonPrinter struct{}

func (jsonPrinter) Print(w io.Writer, r *Report) error {
	var sb strings.Builder
	if err := encodeJSON(&sb, r); err != nil {
		return err
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
