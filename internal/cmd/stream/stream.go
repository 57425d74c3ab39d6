// Package stream implements fr-stream: a live fuseraft session (repl --vscode or run --bridge)
// as a plain JSONL stream, events out on stdout and input in from stdin or a named pipe.
package stream

import (
	"context"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/arrival"
	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/cmdutil"
)

const prog = "fr-stream"

// Run runs fr-stream with args (args[0] is the program name) and returns its exit code.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	args, extra := splitArgs(newApp(s, nil), args)
	app := newApp(s, extra)
	return cmdutil.RunApp(ctx, app, s, args)
}

// App returns fr-stream's complete command definition (for help and man pages).
func App(s cmdutil.Streams) *cli.App { return newApp(s, nil) }

const description = `fr-stream starts fuseraft as a JSON bridge and makes the session a well-behaved Unix
stream. Every event fuseraft sends is written to stdout the moment it is read, byte for byte
(field order and escapes kept, line ends normalised to \n), and nothing else: fuseraft's
stderr, and any stdout line of its that is not JSON (or not UTF-8), go to stderr; a prompt
that is not UTF-8 is denied by fr-stream itself (a question gets a null answer).

Input lines come from stdin, or from --input PATH. A line that is a JSON object is sent as it
is; any other non-blank line is sent as a user_input message. Input is gated by the session's
state: while an approval_request or question is pending, only its approval_response or
question_response goes through, and every other line waits, in order, until the prompt is
answered. Nothing is sent before ready. In a REPL, messages go one turn at a time: a message
(or typeless object) sent starts a turn, and the next one waits, in order, until that turn
ends (message_end, cancelled or error) or a !shell escape ends, because fuseraft would take a
message read during a turn for the answer to the turn's next prompt. A slash command listed in
ready's midTurnCommands goes at once, unless a prompt is pending; other slash commands start
no turn. A response with no prompt pending is dropped with a warning, so nothing is ever taken
by fuseraft as an answer by accident. When input ends, held messages are still sent once the
turn ends. In a run, fuseraft reads only approval_response and interrupt lines: messages are
dropped with a warning.

ON A TERMINAL
With stdin and stdout both terminals, pretty output (the default there; --format jsonl keeps
the plain stream) and no --input, the session is a chat: events are rendered above an input
line, and a line typed there is a message (in a run, which reads no messages, it is not sent).
A reply shows as it is streamed; a stdout line of fuseraft's that is not an event shows there
too, dimmed, in order below the chat's header (not on stderr). The agent may ask questions
there without --questions (--no-questions stops it). While an approval waits the input line
asks 'allow? [y/N]': y or yes allows, n, no or an empty line denies, anything else is asked
again; a file write's diff is cut after 200 lines, and d shows it whole in $PAGER (else
less). A question lists its options by number: answer with a number, an option's text, your
own text where the question allows it, or an empty line to skip. A line half typed when a
prompt comes is set aside for after the answer. Ctrl-C interrupts the turn (as below), Ctrl-D
ends input.

A {"type":"interrupt"} line interrupts the running turn (as SIGINT to fuseraft where signals
exist, so it takes effect even while a prompt is pending). Ctrl-C (SIGINT) does the same; a
second one within 2 seconds ends the session (exit 130). SIGTERM and SIGHUP end input.

END OF INPUT
When input ends, fr-stream closes fuseraft's stdin and waits for it to finish: a REPL makes
one more model call before session_end. After --grace it stops fuseraft. Once fuseraft has
exited, what it wrote is read to the end, however long that takes; when something it started
still holds its output open, fr-stream stops reading once that has stayed empty for --drain.
Nothing can answer
a prompt then: fuseraft denies the one pending and every later one (skips a question), and
fr-stream says so on stderr, one line each ("input has ended and nobody can answer ..."), as
fr-attach does. Input ends at end of file of stdin or of a regular --input file; at a
{"type":"user_input","text":null} line (fuseraft's own end-of-input line); or on SIGTERM. A
named pipe given to --input is held open, so writers may come and go (one writing approvals,
another messages) without ending the session; with --input-eof the first end of file ends
input instead.

A CLOSED STDOUT
A reader of stdout that goes away (| head -1, or a consumer that crashed) is noticed at once
when stdout is a pipe or a socket, even while fr-stream has nothing to write (it waits for the
answer to a prompt); elsewhere at the next write. Nobody can answer a prompt any more, so
fr-stream denies the pending one and every later one itself, interrupts what runs, ends input,
and gives fuseraft --grace to end the session. It exits 0 when no prompt was pending, 1 when
one had to be denied.

ONE SESSION
One fuseraft process is one session, with one ready. A second ready would leave answers
written for the prompts before it to be read for those after it: fr-stream stops fuseraft and
exits 3 instead.

BOUNDED INPUT
At most 1024 input lines are held (waiting for a turn to end or for a prompt's answer): past
that fr-stream reads no more input until one is sent, so a writer is held back by the pipe and
memory stays bounded however much input comes. An answer written after that many held lines is
therefore not read until they go (a warning says so). An input line longer than 256 MiB is an
error: the lines before it are sent, input ends there, and fr-stream exits 2 once fuseraft is
done.

LIMITS
--max-turns N, --max-tokens N (input + output), --max-duration D and --max-cost USD (with
--prices FILE, fr-report's price table) hold the session to what fuseraft reports: a turn is
a turn_start (repl) or an agent_starting (run); tokens are those of message_end, agent_message
and result (the larger of a run's total and its turns' sum, never both); token_budget_warning
is only fuseraft's warning. No turn starts once a limit is reached: a REPL message that would
start one is not sent. Past a limit fr-stream says which, with the figures, on stderr;
interrupts the running turn or run (SIGINT, or an interrupt line where signals do not exist);
denies every later prompt itself (an answer written afterwards goes as a denial, if at all);
ends a REPL's input once the turn is over; and exits 6. Its stdout stays fuseraft's events.
With --budget-file FILE the limits hold for the totals of every run that shares FILE, per
--per day (the default) or week, in local time: a run that finds them reached does not start.
FILE is JSON, updated under a lock (FILE.lock) by writing a temporary file and renaming it, so
concurrent runs lose nothing; each run goes past a limit by at most the turn it was running.
Without a --max-* flag it only keeps the totals. --budget-kv BUCKET keeps the same totals in a
NATS JetStream key-value bucket instead (nats://HOST:PORT/BUCKET, or BUCKET on $FR_NATS_URL;
made if missing), for runs on many hosts: every update is a compare-and-set, so none is lost,
and a turn in flight is believed for 10 minutes after its run last said so.

ENVIRONMENT
  FUSERAFT_BIN   the fuseraft binary, when --fuseraft is not given (else fuseraft on PATH)
  NO_COLOR       no colour in --format pretty
  COLUMNS        the width for --format pretty when stdout is not a terminal
  PAGER          shows a file write's whole diff in the chat on a terminal (default: less)

EXAMPLES
  Ask one question and keep only the reply text:
    echo 'Why does TestParse fail?' | fr-stream repl | fr-filter -j --type token .text

  Run an orchestration with approvals answered by policy, through a named pipe:
    mkfifo answers
    fr-stream run --input answers -c .fuseraft/config/dev.yaml "fix the build" \
      | tee session.jsonl | fr-approve --policy policy.yaml > answers

  A nightly run that stops at 200,000 tokens, and at 2 M tokens a day across runs:
    fr-stream run -c team.yaml "triage new issues" --max-tokens 200000 < /dev/null
    fr-stream run -c team.yaml "triage" --budget-file ~/.fr-budget.json --max-tokens 2000000 < /dev/null

  Pass extra arguments to fuseraft after --:
    fr-stream repl --model sim-small -- --some-fuseraft-flag`

func commonFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "input", Aliases: []string{"i"}, Usage: "read input lines from `PATH` (a file, or a named pipe whose writers may come and go) instead of stdin"},
		&cli.BoolFlag{Name: "input-eof", Usage: "end input at the first end of file of the --input named pipe instead of waiting for its next writer"},
		cmdutil.Enum("format", []string{"jsonl", "pretty"}, "", "output `FORMAT`: {values} for a person (default: pretty on a terminal, else jsonl)", "f"),
		cmdutil.ColorFlag("colour in pretty output"),
		&cli.BoolFlag{Name: "timestamps", Usage: "in pretty output, start lines with the time their event arrived"},
		arrival.Flag(),
		&cli.DurationFlag{Name: "grace", Value: 60 * time.Second, Usage: "how long (a `DURATION`, e.g. 90s) to wait for fuseraft to finish after input ends or SIGTERM, before stopping it"},
		&cli.DurationFlag{Name: "drain", Value: 10 * time.Second, Usage: "once fuseraft has exited, its output is read to the end; when something it started holds that open, stop reading after it has stayed empty for `DURATION`"},
		&cli.BoolFlag{Name: "any-version", Usage: "go on, with a warning, when fuseraft speaks an unsupported protocolVersion"},
		&cli.StringFlag{Name: "fuseraft", Usage: "the fuseraft binary `PATH` (default: $FUSERAFT_BIN, else fuseraft on PATH)"},
		&cli.StringFlag{Name: "record-input", Usage: "write each line sent to fuseraft to `FILE` (for fr-report --input-log: a chat's own messages)"},
		&cli.IntFlag{Name: "max-input-line", Hidden: true},
	}
	return append(flags, budget.SessionFlags()...)
}

func newApp(s cmdutil.Streams, extra []string) *cli.App {
	app := cmdutil.NewApp(s, prog, "a live fuseraft session as plain JSONL, fed from a pipe or a named pipe")
	app.UsageText = "fr-stream repl [--model ID] [--resume ID] [--questions] [OPTIONS] [-- FUSERAFT-ARGS...]\n" +
		"fr-stream run -c CONFIG [OPTIONS] TASK [-- FUSERAFT-ARGS...]\n" +
		"fr-stream run --resume ID [OPTIONS] [-- FUSERAFT-ARGS...]"
	app.Description = description
	app.Action = func(c *cli.Context) error {
		if c.Args().Len() > 0 {
			err := cmdutil.UnknownCommand(prog, c.Args().First(), c.App.Commands)
			err.Hints = []string{"the commands are 'repl' and 'run'; see 'fr-stream --help'"}
			return err
		}
		return cmdutil.WithHint(cmdutil.Usagef("a command is needed: repl or run"), "see 'fr-stream --help'")
	}
	app.Commands = []*cli.Command{
		{
			Name:      "repl",
			Usage:     "chat with fuseraft repl --vscode",
			UsageText: "fr-stream repl [--model ID] [--resume ID] [--questions] [OPTIONS] [-- FUSERAFT-ARGS...]",
			Description: "Spawns 'fuseraft repl --vscode --no-banner' and streams the chat. Plain-text input lines\n" +
				"are messages (or slash commands). The exit status is 0 once fuseraft sends session_end.\n\n" +
				"EXAMPLE\n  printf '%s\\n' 'Summarise parser.go' | fr-stream repl > chat.jsonl",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "the model `ID` (see 'fr-ls models')"},
				&cli.StringFlag{Name: "resume", Aliases: []string{"r"}, Usage: "continue the chat with session `ID` (see 'fr-ls repl-sessions')"},
				&cli.BoolFlag{Name: "questions", Usage: "let the agent ask questions (sets FUSERAFT_VSCODE_QUESTIONS=1), as it may by default in a chat on a terminal; answer them with question_response lines"},
				&cli.BoolFlag{Name: "no-questions", Usage: "do not let the agent ask questions, not even in a chat on a terminal"},
			}, commonFlags()...),
			Action: func(c *cli.Context) error {
				o, err := optionsFrom(c, s, "repl", extra)
				if err != nil {
					return err
				}
				return run(c.Context, s, o)
			},
		},
		{
			Name:      "run",
			Usage:     "stream an orchestration run of fuseraft run --bridge",
			UsageText: "fr-stream run -c CONFIG [OPTIONS] TASK [-- FUSERAFT-ARGS...]\nfr-stream run --resume ID [OPTIONS] [-- FUSERAFT-ARGS...]",
			Description: "Spawns 'fuseraft run --bridge' and streams the run until its result event. fuseraft reads\n" +
				"only approval_response and interrupt lines in a run; when input has ended (< /dev/null) it takes\n" +
				"every approval as denied. The exit status is the result's exitCode.\n\n" +
				"EXAMPLE\n  fr-stream run -c team.yaml \"add a CHANGELOG\" < /dev/null | fr-filter --type result .succeeded",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "the orchestration config `FILE`"},
				&cli.StringFlag{Name: "resume", Aliases: []string{"r"}, Usage: "continue the run with session `ID` (see 'fr-ls sessions')"},
			}, commonFlags()...),
			Action: func(c *cli.Context) error {
				o, err := optionsFrom(c, s, "run", extra)
				if err != nil {
					return err
				}
				return run(c.Context, s, o)
			},
		},
	}
	return cmdutil.Finish(cmdutil.DeclareExitCodes(app, exitCodes))
}

// optionsFrom turns the command line of fr-stream repl or run (mode) into options, checking
// every flag and argument; extra are the arguments after -- (splitArgs). It is the only place
// that reads the command line.
func optionsFrom(c *cli.Context, s cmdutil.Streams, mode string, extra []string) (*options, error) {
	if mode == "repl" {
		if c.Args().Len() > 0 {
			return nil, cmdutil.WithHint(cmdutil.Usagef("unexpected argument %q", c.Args().First()), "send messages on stdin or --input; pass fuseraft arguments after --")
		}
		if c.Bool("questions") && c.Bool("no-questions") {
			return nil, cmdutil.WithHint(cmdutil.Usagef("--questions and --no-questions cannot be combined"), "see 'fr-stream repl --help'")
		}
	}
	o := &options{
		mode:         mode,
		input:        c.String("input"),
		inputOnce:    c.Bool("input-eof"),
		grace:        c.Duration("grace"),
		drain:        c.Duration("drain"),
		anyVersion:   c.Bool("any-version"),
		maxLine:      c.Int("max-input-line"),
		timestamps:   c.Bool("timestamps"),
		color:        cmdutil.UseColor(c.String("color"), s.Env, s.OutTerminal),
		fuseraftFlag: c.String("fuseraft"),
		recordPath:   c.String("record-input"),
		pretty:       s.Pretty(c.String("format")),
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	o.arrival = arrival.FromFlag(c, s.Time)
	lim, err := budget.FromFlags(c, s.Time)
	if err != nil {
		return nil, err
	}
	o.budget = lim
	if mode == "repl" {
		o.fuseraftArgs = replArgs(c.String("model"), c.String("resume"), extra)
		// In a chat the person at the terminal can always answer.
		if c.Bool("questions") || (!c.Bool("no-questions") && interactive(s, o)) {
			o.env = append(o.env, "FUSERAFT_VSCODE_QUESTIONS=1")
		}
		return o, nil
	}
	o.fuseraftArgs, err = runArgs(c.String("config"), c.String("resume"), c.Args().Slice(), extra)
	return o, err
}

// check checks the options every command shares.
func (o *options) check() error {
	if o.grace < 0 {
		return cmdutil.Usagef("--grace must not be negative")
	}
	if o.drain < 0 {
		return cmdutil.Usagef("--drain must not be negative")
	}
	if o.inputOnce && (o.input == "" || o.input == "-") {
		return cmdutil.WithHint(cmdutil.Usagef("--input-eof needs --input PATH"), "stdin always ends input at end of file")
	}
	if o.input != "" && o.input != "-" {
		if _, err := os.Stat(o.input); err != nil {
			return cmdutil.WithHint(cmdutil.Usagef("--input: %v", err), "create a named pipe with: mkfifo "+o.input)
		}
	}
	return nil
}

// replArgs are fuseraft's arguments for a chat.
func replArgs(model, resume string, extra []string) []string {
	args := []string{"repl", "--vscode", "--no-banner"}
	if model != "" {
		args = append(args, "--model", model)
	}
	if resume != "" {
		args = append(args, "--resume", resume)
	}
	return append(args, extra...)
}

// runArgs are fuseraft's arguments for an orchestration run of the config cfg with the one
// task in tasks, or for resuming the session resume (with no task).
func runArgs(cfg, resume string, tasks, extra []string) ([]string, error) {
	args := []string{"run", "--bridge"}
	switch {
	case resume != "":
		if len(tasks) > 0 {
			return nil, cmdutil.WithHint(cmdutil.Usagef("a task cannot be given with --resume"), "the resumed session goes on with its own task")
		}
		args = append(args, "--resume", resume)
		if cfg != "" {
			args = append(args, "-c", cfg)
		}
	case cfg == "":
		return nil, cmdutil.WithHint(cmdutil.Usagef("run needs -c CONFIG and a TASK, or --resume ID"), "see 'fr-stream run --help'")
	case len(tasks) == 0:
		return nil, cmdutil.WithHint(cmdutil.Usagef("run needs a TASK"), "fr-stream run -c CONFIG \"the task\"")
	case len(tasks) > 1:
		return nil, cmdutil.WithHint(cmdutil.Usagef("run takes one TASK, got %d arguments", len(tasks)), "quote the task: fr-stream run -c CONFIG \"fix the build\"")
	default:
		if err := cmdutil.CheckTask("the task", tasks[0]); err != nil {
			return nil, err
		}
		args = append(args, "-c", cfg, tasks[0])
	}
	return append(args, extra...), nil
}

// run looks for fuseraft and runs the session, then closes --record-input's file: a failed
// write to it fails the command once the session is over. fuseraft is looked for after every
// check of the command line (optionsFrom), so that a usage error is reported as one (exit 2)
// whether or not fuseraft is found.
func run(ctx context.Context, s cmdutil.Streams, o *options) error {
	bin, err := cmdutil.FindFuseraft(o.fuseraftFlag, s.Env)
	if err != nil {
		return err
	}
	o.bin = bin
	if o.recordPath != "" {
		if o.record, err = openInputRecord(o.recordPath); err != nil {
			return err
		}
	}
	err = runSession(ctx, s, o)
	if rerr := o.record.close(); err == nil {
		err = rerr
	}
	return err
}

// splitArgs takes the arguments after the first "--" of a repl or run command line, which go
// to fuseraft unchanged; flags may come anywhere in the rest, before the command too, as app
// reads them (cmdutil.Intersperse).
func splitArgs(app *cli.App, args []string) (rest, extra []string) {
	for i, a := range args {
		if a != "--" {
			continue
		}
		head := cmdutil.Intersperse(app, args[:i])
		if len(head) < 2 || (head[1] != "repl" && head[1] != "run") {
			return args, nil
		}
		return args[:i], append([]string{}, args[i+1:]...)
	}
	return args, nil
}
