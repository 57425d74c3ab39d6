// Package ls implements fr-ls: fuseraft's resource queries (protocol page, section "Resource
// queries") run with --json, their envelope checked and streamed, and the items printed as
// JSONL, a JSON array, TSV or a table fitted to the terminal.
package ls

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/proc"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

const prog = "fr-ls"

// Run runs fr-ls with args (args[0] is the program name) and returns its exit code. Whether
// stdout is a terminal, its width and the clock relative times are measured from are s's.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	ctx, stop := cmdutil.Interruptible(ctx)
	defer stop()
	app := App(s)
	return cmdutil.RunApp(ctx, app, s, args)
}

const description = `fr-ls runs one of fuseraft's resource queries with --json appended (the command line is
otherwise exactly the one shown for each resource), checks the envelope it prints and writes
the items. fuseraft's stderr is passed through. The envelope is streamed: items are printed as
they are decoded, so an envelope of any size is listed in bounded memory (except as a table,
which needs every row to fit the columns). RESOURCE - reads one
envelope from stdin instead: the --json output of any fuseraft command, init included.

Formats (--format): jsonl, one item a line exactly as fuseraft wrote it (the default when
stdout is not a terminal); json, one array; tsv, a header line then one row per item, tabs,
newlines and backslashes inside values escaped as \t \n \\, times in RFC 3339, nothing cut;
table, columns fitted to the terminal, long values cut with "…", times relative ("3 hours
ago"), colour unless NO_COLOR is set or TERM=dumb (the default on a terminal). A table too wide
for the terminal shows long ids by their shortest unique prefix (8 characters at least, as git
does), then drops its last columns (stderr says which) before cutting values. Table and tsv
show a few columns chosen for each resource; --fields picks and orders them, and picks and
orders the keys of jsonl and json items too. --jq runs a jq program on each item (gojq); its
outputs are printed instead of the item (objects with their keys sorted; in jsonl a string is
printed raw, without quotes, as gh --jq prints it, so 'while read id' reads the id).

session ID takes the whole id or any prefix of one that only one session's id starts with,
as git takes commits (the short ids of a narrow table work): fuseraft sessions --all --json is
run first to find it. A prefix that several ids start with is refused (exit 2), each matching
id listed; one that no id starts with is not found (exit 1).

An empty list prints nothing in jsonl, tsv and table, and [] in json; on a terminal stderr
says so ("no sessions"), and the exit status is 0.

ENVIRONMENT
   FUSERAFT_BIN     the fuseraft binary when --fuseraft is not given (else fuseraft on PATH)
   NO_COLOR, TERM   no colour when NO_COLOR is set or TERM is dumb
   COLUMNS          table width when stdout is not a terminal (default 80)

EXAMPLES
   fr-ls sessions --all
   fr-ls session 3a4b5c6d
   fr-ls sessions --format tsv | cut -f1,2
   fr-ls sessions --jq 'select(.turnCount > 10) | .sessionId' | xargs -n1 fuseraft sessions --show
   fr-ls repl-sessions --project . --fields sessionId,title --format json
   fuseraft config --list --json | fr-ls - --format table
   FUSERAFT_BIN=fr-sim fr-ls plugins --plugin github --jq '.functions[].name'`

// App is fr-ls's command line.
func App(s cmdutil.Streams) *cli.App {
	app := cmdutil.NewApp(s, prog, "list fuseraft's sessions, memories, schedules and more, for pipes and people")
	app.UsageText = "fr-ls [--format jsonl|json|tsv|table] [--fields A,B] [--jq EXPR] RESOURCE [ARGS]\n" +
		"fr-ls [options] - < envelope.json"
	app.Description = description
	app.Flags = []cli.Flag{
		cmdutil.Enum("format", []string{"jsonl", "json", "tsv", "table"}, "", "output `FORMAT`: {values} (default: table on a terminal, else jsonl)"),
		&cli.StringFlag{Name: "fields", Usage: "comma-separated `FIELDS` to show, in order (keys of jsonl and json items too)"},
		&cli.StringFlag{Name: "jq", Usage: "run the jq program `EXPR` on each item and print its outputs (strings raw in jsonl)"},
		&cli.StringFlag{Name: "fuseraft", Usage: "the fuseraft binary at `PATH` (else $FUSERAFT_BIN, else fuseraft on PATH)"},
		&cli.BoolFlag{Name: "any-version", Usage: "go on, with a warning, when fuseraft speaks an unsupported protocolVersion"},
		cmdutil.ColorFlag("colour in tables"),
	}
	app.Action = func(c *cli.Context) error {
		if c.Args().Len() == 0 {
			return cmdutil.WithHint(cmdutil.Usagef("no resource given"),
				"resources: "+strings.Join(resourceNames(), ", ")+", - (stdin)", "see 'fr-ls --help'")
		}
		msg := fmt.Sprintf("unknown resource %q", c.Args().First())
		if s := cmdutil.DidYouMean(c.Args().First(), resourceNames()); s != "" {
			msg += "; did you mean " + s + "?"
		}
		return cmdutil.WithHint(cmdutil.Usagef("%s", msg),
			"resources: "+strings.Join(resourceNames(), ", ")+", - (stdin)")
	}
	for _, r := range resources {
		app.Commands = append(app.Commands, resourceCommand(s, r))
	}
	app.Commands = append(app.Commands, &cli.Command{
		Name:      "-",
		Usage:     "one envelope from stdin (the --json output of any fuseraft command, init included)",
		UsageText: "fuseraft COMMAND --json | fr-ls [options] -",
		Action: func(c *cli.Context) error {
			if c.Args().Len() > 0 {
				return cmdutil.Usagef("- takes no arguments (got %q)", c.Args().First())
			}
			o, err := optionsFrom(c, nil)
			if err != nil {
				return err
			}
			return run(c.Context, s, o)
		},
	})
	return cmdutil.Finish(cmdutil.DeclareExitCodes(app, exitCodes))
}

func resourceNames() []string {
	n := make([]string, len(resources))
	for i, r := range resources {
		n[i] = r.name
	}
	return n
}

// resourceCommand is the subcommand of one resource, with the flags fuseraft takes for it.
func resourceCommand(s cmdutil.Streams, r *resource) *cli.Command {
	var flags []cli.Flag
	nargs := 0
	resolve := false // the argument is a session id, or a unique prefix of one
	var fuseraftArgs func(c *cli.Context) []string
	switch r.name {
	case "sessions":
		flags = []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "completed sessions too"},
			&cli.StringFlag{Name: "project", Usage: "only sessions that ran in directory `P`"},
		}
		fuseraftArgs = func(c *cli.Context) []string { return withFlags(c, []string{"sessions"}, "all", "project") }
	case "session":
		nargs = 1
		fuseraftArgs = func(c *cli.Context) []string { return []string{"sessions", "--show", c.Args().First()} }
		resolve = true
	case "repl-sessions":
		flags = []cli.Flag{&cli.StringFlag{Name: "project", Usage: "only chats in directory `P`"}}
		fuseraftArgs = func(c *cli.Context) []string { return withFlags(c, []string{"sessions", "--repl"}, "project") }
	case "memory":
		flags = []cli.Flag{&cli.StringFlag{Name: "agent", Usage: "the memories of agent `A`"}}
		fuseraftArgs = func(c *cli.Context) []string { return withFlags(c, []string{"memory", "list"}, "agent") }
	case "memory-agents":
		fuseraftArgs = func(*cli.Context) []string { return []string{"memory", "agents"} }
	case "context":
		flags = []cli.Flag{&cli.StringFlag{Name: "dir", Usage: "the project in directory `D`"}}
		fuseraftArgs = func(c *cli.Context) []string { return withFlags(c, []string{"context", "list"}, "dir") }
	case "schedules":
		fuseraftArgs = func(*cli.Context) []string { return []string{"schedule", "list"} }
	case "plugins":
		flags = []cli.Flag{&cli.StringFlag{Name: "plugin", Usage: "only the plugin `NAME` (none matching: an error)"}}
		fuseraftArgs = func(c *cli.Context) []string { return withFlags(c, []string{"plugins"}, "plugin") }
	case "models":
		fuseraftArgs = func(*cli.Context) []string { return []string{"models"} }
	case "configs":
		flags = []cli.Flag{&cli.StringFlag{Name: "dir", Usage: "configs in directory `D` (default .fuseraft/config)"}}
		fuseraftArgs = func(c *cli.Context) []string { return withFlags(c, []string{"config", "--list"}, "dir") }
	case "validate":
		nargs = 1
		fuseraftArgs = func(c *cli.Context) []string { return []string{"validate", c.Args().First()} }
	case "templates":
		fuseraftArgs = func(*cli.Context) []string { return []string{"init", "--list-templates"} }
	}
	usageText := "fr-ls [options] " + r.name
	if r.args != "" {
		usageText += " " + r.args
	}
	return &cli.Command{
		Name:        r.name,
		Usage:       r.usage,
		UsageText:   usageText,
		Description: fmt.Sprintf("Runs: fuseraft %s --json\nItems: %s (%s)", strings.Join(describeArgs(r), " "), r.item, strings.Join(r.fields, ", ")),
		Flags:       flags,
		Action: func(c *cli.Context) error {
			if c.Args().Len() != nargs {
				if nargs == 0 {
					return cmdutil.WithHint(cmdutil.Usagef("%s takes no arguments (got %q)", r.name, c.Args().First()), "see 'fr-ls "+r.name+" --help'")
				}
				return cmdutil.WithHint(cmdutil.Usagef("%s needs exactly one %s", r.name, r.args), "see 'fr-ls "+r.name+" --help'")
			}
			o, err := optionsFrom(c, r)
			if err != nil {
				return err
			}
			o.fuseraftArgs = append(fuseraftArgs(c), "--json")
			o.resolve, o.sessionArg = resolve, c.Args().First()
			return run(c.Context, s, o)
		},
	}
}

// describeArgs is the fuseraft command line of r, for its help.
func describeArgs(r *resource) []string {
	switch r.name {
	case "sessions":
		return []string{"sessions [--all] [--project P]"}
	case "session":
		return []string{"sessions --show ID"}
	case "repl-sessions":
		return []string{"sessions --repl [--project P]"}
	case "memory":
		return []string{"memory list [--agent A]"}
	case "memory-agents":
		return []string{"memory agents"}
	case "context":
		return []string{"context list [--dir D]"}
	case "schedules":
		return []string{"schedule list"}
	case "plugins":
		return []string{"plugins [--plugin NAME]"}
	case "configs":
		return []string{"config --list [--dir D]"}
	case "validate":
		return []string{"validate PATH"}
	case "templates":
		return []string{"init --list-templates"}
	}
	return []string{r.name}
}

// withFlags appends the named flags the user set, as fuseraft spells them.
func withFlags(c *cli.Context, base []string, names ...string) []string {
	for _, n := range names {
		if !c.IsSet(n) {
			continue
		}
		if v, ok := c.Value(n).(bool); ok {
			if v {
				base = append(base, "--"+n)
			}
			continue
		}
		base = append(base, "--"+n, c.String(n))
	}
	return base
}

// options are fr-ls's command line.
type options struct {
	res          *resource // nil: one envelope from stdin
	fuseraftArgs []string  // the fuseraft command line of res
	resolve      bool      // session names a session by id, or a prefix of one: found with fuseraft sessions first
	sessionArg   string    // that id or prefix
	format       string    // "" for the default: table on a terminal, else jsonl
	fields       []string  // nil for the default columns
	jq           *jq
	color        string
	fuseraft     string
	anyVersion   bool
}

// optionsFrom reads the command line of the resource r (nil for -) into options.
func optionsFrom(c *cli.Context, r *resource) (*options, error) {
	o := &options{res: r, format: c.String("format"), color: c.String("color"),
		fuseraft: c.String("fuseraft"), anyVersion: c.Bool("any-version")}
	if c.IsSet("fields") {
		fields, err := parseFields(c.String("fields"))
		if err != nil {
			return nil, err
		}
		o.fields = fields
	}
	if c.IsSet("jq") {
		j, err := compileJQ(c.String("jq"))
		if err != nil {
			return nil, err
		}
		o.jq = j
	}
	return o, nil
}

// parseFields reads --fields: names separated by commas, each once.
func parseFields(list string) ([]string, error) {
	var fields []string
	seen := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if seen[f] {
			return nil, cmdutil.Usagef("field %q given twice in --fields", f)
		}
		seen[f] = true
		fields = append(fields, f)
	}
	if len(fields) == 0 {
		return nil, cmdutil.Usagef("--fields is empty")
	}
	return fields, nil
}

// run lists what o asks for: the envelope on stdin, or the one fuseraft prints.
func run(ctx context.Context, s cmdutil.Streams, o *options) error {
	l := newListing(ctx, s, o)
	if o.res == nil {
		return l.fromStdin()
	}
	args := o.fuseraftArgs
	if o.resolve {
		bin, err := cmdutil.FindFuseraft(o.fuseraft, s.Env)
		if err != nil {
			return err
		}
		id, err := ResolveSessionID(ctx, bin, s.Err, o.sessionArg)
		if err != nil {
			return err
		}
		args = []string{"sessions", "--show", id, "--json"}
	}
	return l.fromFuseraft(args)
}

// lsRun is one listing.
type lsRun struct {
	ctx        context.Context
	s          cmdutil.Streams
	fuseraft   string
	anyVersion bool
	res        *resource
	jq         *jq
	p          *printer
	out        *wire.Writer
	jqFailed   int
}

func newListing(ctx context.Context, s cmdutil.Streams, o *options) *lsRun {
	l := &lsRun{ctx: ctx, s: s, fuseraft: o.fuseraft, anyVersion: o.anyVersion, res: o.res, jq: o.jq}
	terminal := s.OutTerminal
	format := o.format
	if format == "" {
		format = "jsonl"
		if terminal {
			format = "table"
		}
	}
	l.out = wire.NewWriter(s.Out)
	l.p = &printer{format: format, fields: o.fields, res: o.res, jq: l.jq != nil, w: l.out,
		color: cmdutil.UseColor(o.color, s.Env, terminal), width: s.Columns(), now: s.Time()}
	if terminal {
		l.p.errw = s.Err
	}
	return l
}

// onItem prints one item of the envelope (or the outputs --jq makes of it).
func (o *lsRun) onItem(raw []byte) error {
	if o.jq == nil {
		return o.p.add(&record{raw: raw})
	}
	err := o.jq.run(raw, func(b []byte) error { return o.p.add(&record{raw: b}) })
	var ce *cmdutil.Error
	if err != nil && !errors.As(err, &ce) && !wire.IsBrokenPipe(err) && o.out.Err() == nil {
		o.jqFailed++
		cmdutil.Sayf(o.s.Err, prog, "error: --jq: %v", err)
		return nil
	}
	return err
}

// flushingReader flushes the output before each read of fuseraft's stdout, so items reach a
// pipe as soon as they are decoded whenever fuseraft is slower than we are.
type flushingReader struct {
	r io.Reader
	w *wire.Writer
}

func (f flushingReader) Read(b []byte) (int, error) {
	_ = f.w.Flush()
	return f.r.Read(b)
}

// read streams the envelope from r and prints its items.
func (o *lsRun) read(r io.Reader) (wire.EnvelopeHead, error) {
	head, err := wire.ReadEnvelope(flushingReader{r: r, w: o.out}, o.anyVersion, o.onItem)
	if err == nil && o.anyVersion {
		if verr := wire.CheckVersion(head.ProtocolVersion, "the envelope"); verr != nil {
			cmdutil.Warnf(o.s.Err, prog, "%v; going on (--any-version)", verr)
		}
	}
	return head, err
}

// done ends the output and turns the envelope into an exit status.
func (o *lsRun) done(head wire.EnvelopeHead) error {
	if !o.p.started && o.p.fields != nil && o.res != nil && o.jq == nil && head.Shape != "error" {
		// No item to check --fields against: the resource's known fields decide.
		known := map[string]bool{}
		for _, f := range o.res.fields {
			known[f] = true
		}
		for _, f := range o.p.fields {
			if !known[f] {
				return fieldsError(f, o.res.fields)
			}
		}
	}
	if err := o.p.finish(); err != nil {
		return err
	}
	if err := o.out.Flush(); err != nil {
		return err
	}
	if head.Shape == "error" {
		return cmdutil.Errorf(cmdutil.ExitFailed, "%s", strings.TrimSpace(*head.Error))
	}
	if o.jqFailed > 0 {
		return cmdutil.Exit(cmdutil.ExitFailed)
	}
	return nil
}

func (o *lsRun) fromStdin() error {
	head, err := o.read(o.s.In)
	if err != nil {
		_ = o.out.Flush()
		return o.explain(err)
	}
	return o.done(head)
}

// explain adds what a user can do about a broken envelope.
func (o *lsRun) explain(err error) error {
	var pe *wire.ProtocolError
	var ve *wire.VersionError
	switch {
	case errors.As(err, &ve):
		return cmdutil.WithHint(err, "pass --any-version to go on anyway")
	case errors.As(err, &pe):
		return err
	}
	return err
}

func (o *lsRun) fromFuseraft(args []string) error {
	bin, err := cmdutil.FindFuseraft(o.fuseraft, o.s.Env)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	// fuseraft's stderr is passed through termsafe: it may quote what it read.
	childErr := termsafe.NewWriter(o.s.Err)
	defer childErr.Flush()
	cmd.Stderr = childErr
	cmd.WaitDelay = time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return cmdutil.StartFailed(bin, err)
	}
	child, err := proc.Start(cmd)
	if err != nil {
		return cmdutil.StartFailed(bin, err)
	}
	// Stop fuseraft when we are interrupted; it is in our process group and usually gets the
	// terminal's SIGINT too.
	stopWatch := child.StopOnCancel(o.ctx, os.Interrupt)
	head, rerr := o.read(stdout)
	var werr error
	if rerr != nil {
		// We stopped reading early (a broken envelope, our own output gone, --fields said
		// no). Let fuseraft finish by itself for a moment, reading what else it writes, so
		// that a crash of its own is told apart from our stopping it.
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		werr = child.WaitOrKill(proc.StopGrace)
	} else {
		werr = child.Wait()
	}
	stopWatch()
	weKilled := child.Killed()
	if o.ctx.Err() != nil {
		_ = o.out.Flush()
		return cmdutil.Exit(cmdutil.ExitInterrupted)
	}
	if rerr != nil && wire.IsBrokenPipe(rerr) {
		return nil
	}
	exit := proc.ExitOf(werr)
	if exit.Err != nil {
		return werr
	}
	status := exit.Code
	if exit.Signaled && !weKilled && (rerr == nil || isEnvelopeError(rerr)) {
		_ = o.out.Flush()
		err := cmdutil.Errorf(cmdutil.ExitFailed, "fuseraft was killed by signal %d (%v)", exit.Signal, exit.Signal)
		if rerr != nil {
			return cmdutil.WithHint(err, "its output ended early: "+rerr.Error())
		}
		return err
	}
	if rerr != nil {
		_ = o.out.Flush()
		if !isEnvelopeError(rerr) {
			return rerr // our own output failed, or --fields or --jq said no
		}
		if status != 0 && status != 1 && !weKilled {
			return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "fuseraft exited with status %d without an envelope", status),
				"on stdout: "+rerr.Error())
		}
		return o.explain(rerr)
	}
	if err := o.done(head); err != nil {
		return err
	}
	switch {
	case o.res != nil && o.res.name == "validate" && status == 1 && head.Shape == "item":
		return cmdutil.Errorf(cmdutil.ExitFailed, "the config has errors")
	case status != 0:
		return cmdutil.Errorf(cmdutil.ExitFailed, "fuseraft exited with status %d", status)
	}
	return nil
}

// isEnvelopeError tells fuseraft's broken output from our own failures.
func isEnvelopeError(err error) bool {
	var pe *wire.ProtocolError
	var ve *wire.VersionError
	return errors.As(err, &pe) || errors.As(err, &ve)
}
