// Package attach implements fr-attach: a client of a running fuseraft serve daemon, over its Unix
// socket or its WebSocket, for scripts, cron and CI. Events go to stdout as JSONL (the hello
// included), inputs come from stdin or a FIFO and are gated so that nothing but an answer ever
// reaches the daemon while a prompt is pending, and no new task while ours is queued or running.
// On a terminal it is interactive (interactive.go): events rendered above an input line where a
// person types tasks and answers prompts.
package attach

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/arrival"
	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

const prog = "fr-attach"

// description ends the help text and the man page.
const description = `fr-attach connects to a running 'fuseraft serve' (or fr-sim serve), writes every event it sends to
stdout as JSONL, exactly as received (the hello first), and sends tasks and answers.

With neither --socket nor --url it connects to the Unix socket 'fuseraft attach' uses for the
working directory (its real path, symlinks resolved, as fuseraft sees it):
FUSERAFT_HOME/run/HASH.sock (FUSERAFT_HOME defaults to ~/.fuseraft). A daemon that accepts
the connection but sends no hello within 30s is given up on (exit 10).

INPUT
   Tasks come from --task (repeatable, sent in order) and from input lines: stdin, or --input
   PATH, a file or a named FIFO whose writers may come and go (one leaving does not end input).
   A line that is a JSON object is sent as it is; any other line is sent as a user_input task.
   Inputs are gated: while an approval_request or question is pending only its answer goes
   out, one answer per prompt, in order; a new task waits while this client's task is queued
   or running (the daemon would read it as an approval answer); an answer with no prompt
   pending is dropped with a warning. The end of stdin (or of an --input file) does not end
   fr-attach, but from then on nothing can answer a prompt: one pending or still to come is
   denied (a question skipped) with a warning on stderr, as the daemon does with nobody to
   ask, and the task goes on to its result. An --input FIFO never ends, so its prompts wait.
   Input is bounded: while 1024 inputs wait (tasks behind ours), no more is read, so the
   writer is held back by the pipe; an input line over 256 MiB is an error (exit 2).

SLOW OUTPUT
   Events wait for stdout in a buffer of 8 MiB, so a slow reader holds up neither the
   connection nor its pings, and answers read meanwhile still go out. While the buffer is
   full the connection is not read (the daemon holds what it sends, and fr-attach's pings do
   not take that for a dead daemon); nothing is ever dropped. When the buffer has been full
   and stdout has taken nothing of it for --output-timeout (30s), fr-attach says so on stderr
   and exits 1: it closes the connection without answering, so a prompt still pending is the
   daemon's to settle, as with any client that goes away (it asks it again when a client
   with the same --client-id reconnects). The same wait applies to the last events on the
   way out.

ON A TERMINAL
   With stdin and stdout both terminals and neither --task nor --input, fr-attach is
   interactive (unless --format jsonl): events are rendered for a person above an input line,
   and a line typed there is a task for the daemon. A task typed while ours is queued or
   running is held until its result, and a note says how many wait. An approval_request is
   shown (a file write as a diff) and the input line asks 'allow? [y/N]': y or yes allows,
   n, no or an empty line denies, and anything else is asked again (it is not sent as a
   task). A question lists its options by number:
   answer with a number, an option's text, your own text where the question allows it, or an
   empty line to skip. While a prompt waits, the next line typed is its answer, never a task; a
   line half typed when the prompt came is set aside and comes back after the answer, and a
   lone y, yes, n or no typed with no prompt waiting is not sent as a task. With a read-only
   token typed tasks are not sent (a note says so) rather than ending with exit 4. The line is
   edited in place (arrows, Home, End, Ctrl-A, -E, -U, -K, -W; Up and Down recall earlier
   tasks). A file write's diff is cut after 200 lines: d (or diff) at its prompt shows it
   whole in $PAGER (else less, else printed), with the terminal in its usual line mode
   meanwhile, and the prompt asks again. While the daemon is unreachable one status line above
   the input line says why and when it is tried again; what you were typing stays. Ctrl-D
   detaches (exit 0), Ctrl-C too (exit 130); the daemon keeps running the task either way,
   and fr-attach says so on the way out.

EXIT ON RESULT
   With --exit-on-result fr-attach exits once every task of this client has its result (tasks
   it sent, the task named in hello.inFlight, those in hello.pendingResults): 0 if all
   succeeded, else 1. It also waits until every --task has been sent, and, without --task,
   for the end of stdin (so every task line is read); an --input FIFO never ends, so there it
   exits once the tasks sent so far have their results. A closed stdout (| head -1) does not
   change that: fr-attach stops writing events, says so on stderr, and still exits with the
   tasks' outcome. Without --exit-on-result it streams until interrupted, until stdout is
   closed (noticed at once when it is a pipe), or until the daemon is gone for good.

RECONNECTING
   A dropped connection is retried with exponential backoff and full jitter, from 100ms up to
   --max-backoff, at most --max-reconnects times in a row (unlimited by default), one line on
   stderr each. When stdin or stdout is not a terminal (a script, cron, CI) fr-attach gives up
   once 5 minutes have passed without a connection (--give-up-after DUR; 0 never gives up,
   the default when both are terminals): exit 10, saying how long it tried. Over the WebSocket it reconnects with the same client id (a random one is made
   when --client-id is not given), so the daemon hands back the task in flight, asks again an
   approval that was pending, and delivers results that finished meanwhile. The Unix socket
   cannot carry a client id: a reconnect there resumes the event stream only, and a task of
   ours whose outcome can no longer be learned ends --exit-on-result with exit 1 and a message.
   Two identical authentication failures in a row stop it (exit 4); a newer connection with
   our client id replacing this one stops it too (exit 1), instead of fighting over the id.
   The WebSocket is pinged every 10s, so a daemon that vanished is noticed within 20s.

SECURITY
   The bearer token comes only from --token-file or FUSERAFT_SERVE_TOKEN, never from argv,
   and is never printed. No Origin header is ever sent.

LIMITS
   --max-turns N, --max-tokens N (input + output), --max-duration D and --max-cost USD (with
   --prices FILE), and --budget-file FILE (or --budget-kv BUCKET) with --per day|week, are
   fr-stream's (see 'fr-stream --help'). Over the daemon a turn is an agent_starting while a
   task of this client is in flight (progress events are broadcast: while our task waits behind another's,
   that one's turns count too), and no task is sent once a limit is reached. Protocol v1's
   daemon events carry no token counts, so --max-tokens and --max-cost count only what an
   event reports (an agent_message's, a result's inputTokens and outputTokens). Past a limit
   fr-attach names it and the figures on stderr and sends our running task an interrupt; the
   daemon need not cancel the task (an interrupt cancels its turn at most), so fr-attach
   stays: it denies every later prompt of this client's tasks itself (an answer written
   afterwards goes as a denial, a question's as a skip), sends no held task, and exits 6 once
   the task has its result, or after --grace (60s), when the task may still run on the
   daemon (watch it with fr-attach, its prompts then follow the daemon's unattended policy).
   A run that finds a budget file's totals already at a limit sends nothing and exits 6.

ENVIRONMENT
   FUSERAFT_HOME          fuseraft's home, for the default socket path
   FUSERAFT_SERVE_TOKEN   the bearer token for the WebSocket (--token-file wins)
   NO_COLOR               no colour in --format pretty
   COLUMNS                the width for --format pretty when stdout is not a terminal
   PAGER                  shows a file write's whole diff on a terminal (default: less)

EXAMPLES
   # at a terminal: type tasks, answer their prompts, Ctrl-D to leave
   fr-attach

   # dispatch a task, answer its approvals by policy, exit with its outcome
   mkfifo answers
   fr-attach --task 'run the tests' --exit-on-result --input answers \
     | fr-approve --policy ci.yaml > answers

   # watch a daemon's progress from another project directory
   fr-attach --socket ~/.fuseraft/run/0123456789abcdef.sock | fr-filter --type tool_calling

   # nightly from cron: at most 30 minutes, and 2 M tokens a day across every run
   fr-attach --task 'triage new issues' --exit-on-result < /dev/null --max-duration 30m \
     --budget-file ~/.fr-budget.json --max-tokens 2000000 --per day

   # over the WebSocket with a token, keeping tasks across reconnects
   FUSERAFT_SERVE_TOKEN=$(cat ~/.serve-token) fr-attach --url ws://127.0.0.1:8787/attach \
     --client-id ci-nightly --task 'update deps' --exit-on-result`

// App returns fr-attach's command line.
func App(s cmdutil.Streams) *cli.App {
	app := cmdutil.NewApp(s, prog, "attach to a fuseraft serve daemon: stream its events, send tasks and answers")
	app.UsageText = "fr-attach [--socket PATH | --url ws://HOST:PORT/attach] [--task TEXT]... [--exit-on-result] [options]"
	app.Description = description
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "socket", Usage: "connect to the daemon's Unix socket at `PATH` (default: derived from the working directory)"},
		&cli.StringFlag{Name: "url", Usage: "connect to the daemon's WebSocket at `URL` (ws://HOST:PORT/attach or wss://...)"},
		&cli.StringFlag{Name: "token-file", Usage: "read the bearer token from `FILE` (else FUSERAFT_SERVE_TOKEN)"},
		&cli.StringFlag{Name: "client-id", Usage: "send `ID` as Fuseraft-Client-Id (1-64 of A-Z a-z 0-9 - _) to keep tasks across reconnects"},
		&cli.StringFlag{Name: "ca-cert", Usage: "trust the PEM certificates in `FILE` for wss:// instead of the system roots"},
		&cli.StringFlag{Name: "input", Usage: "read input lines from `PATH` (a file or a named FIFO) instead of stdin"},
		&cli.StringSliceFlag{Name: "task", Usage: "dispatch `TEXT` as a task (repeatable; one at a time, in order)"},
		&cli.BoolFlag{Name: "exit-on-result", Usage: "exit once every task of this client has its result: 0 if all succeeded, else 1"},
		&cli.DurationFlag{Name: "max-backoff", Value: 10 * time.Second, Usage: "wait at most `DUR` between reconnect attempts"},
		&cli.DurationFlag{Name: "give-up-after", Usage: "exit 10 once `DUR` has passed without a connection (0: never; default 5m unless stdin and stdout are both terminals)"},
		&cli.IntFlag{Name: "max-reconnects", Value: -1, Usage: "give up after `N` failed reconnect attempts in a row (-1: never)"},
		cmdutil.Enum("format", []string{"jsonl", "pretty"}, "", "output `FORMAT`: {values} (default: pretty on a terminal, else jsonl)"),
		cmdutil.ColorFlag("colour in pretty output"),
		&cli.BoolFlag{Name: "timestamps", Usage: "in pretty output, start lines with the time their event arrived"},
		arrival.Flag(),
		&cli.BoolFlag{Name: "any-version", Usage: "go on (with a warning) when hello has a protocolVersion this build does not support"},
		&cli.DurationFlag{Name: "ping-interval", Value: 10 * time.Second, Hidden: true},
		&cli.IntFlag{Name: "max-input-line", Hidden: true},
		&cli.DurationFlag{Name: "output-timeout", Value: defaultOutTimeout, Usage: "exit 1 once events fill the output buffer and stdout takes none of them for `DUR`"},
		&cli.IntFlag{Name: "output-buffer", Value: defaultOutBuffer, Hidden: true},
	}
	app.Flags = append(app.Flags, limitFlags()...)
	app.Flags = append(app.Flags, fleetFlags()...)
	app.Description += "\n\n" + fleetHelp
	app.Action = func(c *cli.Context) error {
		if cn, ok, err := fleetAsked(c, s); err != nil {
			return err
		} else if ok {
			f, err := fleetOptionsFrom(c, cn)
			if err != nil {
				return err
			}
			return followFleet(c.Context, s, f)
		}
		o, err := optionsFrom(c, s)
		if err != nil {
			return err
		}
		return run(c.Context, s, o)
	}
	return cmdutil.Finish(cmdutil.DeclareExitCodes(app, exitCodes))
}

// Run runs fr-attach with args (args[0] is the program name) and returns its exit code.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	ctx, stop := cmdutil.Interruptible(ctx)
	defer stop()
	return cmdutil.RunApp(ctx, App(s), s, args)
}

type options struct {
	target        target
	input         string
	tasks         []string
	exitOnResult  bool
	maxBackoff    time.Duration
	maxReconnects int
	giveUp        time.Duration // 0: never
	maxLine       int           // the longest input line; 0: wire.DefaultMaxLine
	outBuffer     int           // bytes of events that may wait for stdout
	outTimeout    time.Duration // how long a full output buffer may wait for stdout
	pretty        bool
	timestamps    bool
	arrival       *arrival.Stamper // --arrival-time
	color         bool
	anyVersion    bool
	randomID      bool
	limits        limits // --max-* and --budget-file
}

// optionsFrom turns fr-attach's command line into options, checking every flag. It is the
// only place that reads the command line.
func optionsFrom(c *cli.Context, s cmdutil.Streams) (*options, error) {
	if c.NArg() > 0 {
		return nil, cmdutil.Usagef("unexpected argument %q (a task is given with --task)", c.Args().First())
	}
	o := &options{
		input:         c.String("input"),
		tasks:         c.StringSlice("task"),
		exitOnResult:  c.Bool("exit-on-result"),
		maxBackoff:    c.Duration("max-backoff"),
		maxReconnects: c.Int("max-reconnects"),
		anyVersion:    c.Bool("any-version"),
		maxLine:       c.Int("max-input-line"),
		outBuffer:     max(c.Int("output-buffer"), 1),
		outTimeout:    c.Duration("output-timeout"),
		timestamps:    c.Bool("timestamps"),
		color:         cmdutil.UseColor(c.String("color"), s.Env, s.OutTerminal),
		pretty:        s.Pretty(c.String("format")),
	}
	if o.outTimeout <= 0 {
		return nil, cmdutil.Usagef("--output-timeout must be positive")
	}
	for _, t := range o.tasks {
		if err := cmdutil.CheckTask("--task", t); err != nil {
			return nil, err
		}
	}
	if c.Duration("give-up-after") < 0 {
		return nil, cmdutil.Usagef("--give-up-after must not be negative (0: never give up)")
	}
	o.giveUp = giveUpAfter(c.IsSet("give-up-after"), c.Duration("give-up-after"), s.InTerminal, s.OutTerminal)
	if o.maxBackoff < 100*time.Millisecond {
		o.maxBackoff = 100 * time.Millisecond
	}
	tf := targetFlags{socket: c.String("socket"), url: c.String("url"), tokenFile: c.String("token-file"),
		caCert: c.String("ca-cert"), clientID: c.String("client-id"), clientIDSet: c.IsSet("client-id"),
		ping: c.Duration("ping-interval")}
	if err := tf.target(s, o); err != nil {
		return nil, err
	}
	o.arrival = arrival.FromFlag(c, s.Time)
	b, err := budget.FromFlags(c, s.Time)
	if err != nil {
		return nil, err
	}
	if o.limits, err = newLimits(b, c.Duration("grace"), s); err != nil {
		return nil, err
	}
	return o, defaultSocket(s, &o.target)
}

// targetFlags are the flags that say where the daemon is and how to authenticate.
type targetFlags struct {
	socket, url, tokenFile, caCert, clientID string
	clientIDSet                              bool
	ping                                     time.Duration
}

// target checks where the daemon is and how to authenticate, and sets o.target: --socket or
// --url (else the socket derived from the working directory, by defaultSocket), the token,
// the client id and the CA.
func (f targetFlags) target(s cmdutil.Streams, o *options) error {
	t := &o.target
	t.ping = f.ping
	d, err := cmdutil.DaemonFrom(f.socket, f.url, f.caCert)
	if err != nil {
		return err
	}
	t.socket, t.url, t.tls = d.Socket, d.URL, d.TLS
	if t.token, err = cmdutil.BearerToken(f.tokenFile, s.Env); err != nil {
		return err
	}
	if id := f.clientID; f.clientIDSet {
		if !wire.ValidClientID(id) {
			return cmdutil.Usagef("--client-id %q is not valid: it must be 1-64 of A-Z a-z 0-9 - _", id)
		}
		if t.url == "" {
			cmdutil.Warnf(s.Err, prog, "the Unix socket cannot carry a client id: --client-id is ignored there")
		} else {
			t.clientID = id
		}
	} else if t.url != "" {
		var b [8]byte
		rand.Read(b[:])
		t.clientID = "fr-attach-" + hex.EncodeToString(b[:])
		o.randomID = true
	}
	return nil
}

// defaultSocket derives the socket from the working directory when neither --socket nor --url
// is given. It comes after every check of the command line, so that a usage error is reported
// as one (exit 2) whether or not a socket path can be derived.
func defaultSocket(s cmdutil.Streams, t *target) error {
	if t.url != "" || t.socket != "" {
		return nil
	}
	var err error
	if t.socket, err = wire.DefaultSocketPath(s.Env); err != nil {
		return cmdutil.WithHint(err, "pass --socket PATH, or set FUSERAFT_HOME (to a shorter directory when the path is too long)")
	}
	return nil
}

// defaultGiveUp is how long fr-attach goes without a connection before it gives up, unless
// stdin and stdout are both terminals (a person can see it retry and press Ctrl-C).
const defaultGiveUp = 5 * time.Minute

// giveUpAfter is --give-up-after: the flag when set, else defaultGiveUp when stdin or stdout is
// not a terminal (a script, cron, CI), else 0 (never).
func giveUpAfter(set bool, flag time.Duration, inTTY, outTTY bool) time.Duration {
	switch {
	case set:
		return flag
	case inTTY && outTTY:
		return 0
	}
	return defaultGiveUp
}

func run(ctx context.Context, s cmdutil.Streams, o *options) error {
	a := newAttacher(s, *o)
	var in io.Reader = s.In
	if o.input == "" && len(o.tasks) == 0 && s.InTerminal && s.OutTerminal {
		return interactive(ctx, a, in)
	}
	a.queueOutput()
	err := a.run(ctx, in)
	if cmdutil.CodeOf(err) == cmdutil.ExitInterrupted && (o.exitOnResult || len(o.tasks) > 0) {
		if msg := a.interruptedMessage(); msg != "" {
			cmdutil.Sayf(s.Err, prog, "%s", msg)
		}
	}
	return err
}
