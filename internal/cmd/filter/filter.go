// Package filter implements fr-filter: jq (an embedded gojq) over live event streams.
package filter

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/cmdutil"
)

const prog = "fr-filter"

// jq's exit codes, which fr-filter keeps.
const (
	exitOK       = 0
	exitFalsy    = 1 // -e: the last value was false or null
	exitUsage    = 2 // a bad flag, an unreadable file
	exitCompile  = 3 // the filter does not compile (also: an unsupported protocolVersion)
	exitNoOutput = 4 // -e: no value at all
	exitRuntime  = 5 // a runtime error, or a non-JSON line under --strict
)

const description = `fr-filter runs a jq filter (an embedded gojq, compiled once) over each JSON line of a
fuseraft event stream, read from standard input or from the files named after the filter.
The filter may come anywhere among the flags, as with jq. Output is compact JSON, one value a
line; -r prints strings raw and -j adds no newline, so 'fr-filter -j --type token .text'
shows a reply as it streams. Output is written as soon as the input has nothing more ready:
a consumer in a pipe sees each event at once, and a recorded file runs at full speed.

Lines that are not JSON (banners, slash-command output) are skipped; a warning at the end
says how many. Lines dropped for their type (by --type, or by a select(.type == "X") at the
start of the filter) are only read as far as their type, so a malformed one is dropped without
being counted. --strict reads every line in full and makes the first that is not JSON an error. An error in the filter on one
line is reported with its line number and the stream goes on; the exit status is then 5.

A line whose bytes are not UTF-8 is not JSON (RFC 8259; strict readers reject it), on every
path, and is skipped as such, with the same warning. A prompt (approval_request or question)
that is not UTF-8 is the one exception, since it must get exactly one answer and fr-filter
does not answer prompts: where the filter passes it on as it is (--type, '.', select(...)),
it is passed on unchanged, with a warning, so that the command answering prompts after
fr-filter refuses it (fr-approve denies it; a question gets a null answer); anything else a
filter makes of it is dropped, with a warning; --strict passes it on and then stops (exit 5).
With -n, --slurp or --stream, or read by input, it cannot be passed on as it is: it is
skipped, with a warning.

--type T[,T...] keeps only events of those types. It is decided from the bytes of each line,
before anything is decoded, with exactly the result a full decode gives (the last "type" key
counts, escapes are read, non-objects are not events). With no filter, or with '.', lines
are passed on as they are: fuseraft's field order and escapes are kept (--tab and --indent
indent them, as jq does, in that order). A filter that passes its input on unchanged
(select(...), .) does the same. Objects a filter builds or changes ({name, id}, del(.x), ...)
have their keys sorted, as gojq sorts them: -S is implied for them, and only lines passed on
unchanged keep fuseraft's order. A filter that starts with select(.type == "X" ...) is only
run on lines of type X; the others are dropped unread. X may be a variable the command line
sets to a string (--arg t X, then .type == $t or $ARGS.named.t), and the test may be
.type == "A" or .type == "B", or .type | IN("A", "B").

jq's command line works as in jq: -R reads lines as strings; --stream reads [path, leaf]
events; -L DIR and ~/.jq serve import and include; -C and -M force colour on or off (on by
default on a terminal, in jq's colours: JQ_COLORS, NO_COLOR); -a escapes non-ASCII; a filter
may start with a dash (fr-filter -.). Input is read as jq reads it: several values on a line,
pretty-printed JSON over several lines, --seq records. Where fr-filter differs from jq on
purpose: a line that is not JSON is skipped, not an error (and when a line opens a value that
turns out not to be JSON, only that line is skipped and the lines after it are read again);
output is compact unless --indent, --tab or -C ask otherwise; --stream-errors is --stream
(lines that are not JSON are skipped, so there is no error to stream); messages name the line
of a runtime error.

The environment is not visible to filters ($ENV, env) unless --env is given.
--pretty renders the events for a person instead of printing JSON, as fr-stream does on a
terminal; values that are not events are printed as JSON lines. With --max-turns,
--max-tokens, --max-duration or --max-cost (and --prices FILE), it also shows the totals of
the stream read against them (every event counts, whatever the filter keeps; counted as
fr-stream counts them; the time is since the first line read) after each turn and at the
end, marking a limit passed: "· limits: turns 2 of 5 · tokens 4,256 of 4,000: past".

ENVIRONMENT
  JQ_COLORS        colours of JSON output, as in jq 1.7: null:false:true:numbers:strings:
                   arrays:objects:object keys (default 0;90:0;39:0;39:0;39:0;32:1;39:1;39:34;1)
  NO_COLOR, TERM   colour is off by default when NO_COLOR is set or TERM is dumb
  HOME             ~/.jq: a file is read before the filter; a directory holds modules
  COLUMNS          with --pretty, the width when standard output is not a terminal
  Other variables are visible to filters only with --env.

EXAMPLES
  Show a reply as it streams:
    fr-stream repl < prompts.txt | fr-filter -j --type token .text

  Failed tool calls of a recorded session, as id and name:
    fr-filter 'select(.type == "tool_result" and .ok == false) | {id, name}' session.jsonl

  Count events by type:
    fr-filter -n 'reduce inputs as $e ({}; .[$e.type] += 1)' < session.jsonl

  Pass a value in, and stop at the first approval prompt:
    fr-filter --arg kind shell_command 'select(.kind == $kind) | ., halt' < events.jsonl

  Fail a CI step when any turn was cancelled:
    fr-filter -e --type cancelled . < run.jsonl > /dev/null && exit 1`

// App returns fr-filter's command definition. Flags are parsed by fr-filter itself (jq style:
// anywhere on the line, -rc bundles, --arg NAME VALUE); this list describes them.
func App(s cmdutil.Streams) *cli.App { return app(s, config{}) }

// config is what a caller other than the command line may change.
type config struct {
	// jqLayout indents output by 2 unless -c, --tab or --indent is given, as jq does (for
	// running jq's and gojq's test suites).
	jqLayout bool
	// noSkip runs the filter on every line, without the type skip-ahead a select(.type ==
	// ...) filter gets (for tests that check the skip-ahead changes nothing).
	noSkip bool
	// piece is the size of the pieces a line longer than it is read in (0: 4 MiB), so that
	// tests reach the piecewise reader with lines of kilobytes, not megabytes.
	piece int
}

func app(s cmdutil.Streams, cfg config) *cli.App {
	app := cmdutil.NewApp(s, prog, "run a jq filter over a fuseraft event stream")
	app.UsageText = "fr-filter [FLAGS] [FILTER] [FILE...]\n" +
		"fr-filter [FLAGS] FILTER --args STRING...\n" +
		"fr-filter [FLAGS] FILTER --jsonargs JSON..."
	app.Description = description
	app.SkipFlagParsing = true
	app.HideHelp = true
	app.HideVersion = true
	app.Flags = flagDocs()
	app.Action = func(c *cli.Context) error {
		opts, err := parseArgs(c.Args().Slice())
		if err != nil {
			return err
		}
		if opts.help {
			return cli.ShowAppHelp(c)
		}
		opts.config = cfg
		return act(c.Context, s, opts)
	}
	return cmdutil.Finish(cmdutil.DeclareExitCodes(app, exitCodes))
}

// act does what a parsed command line other than --help asks.
func act(ctx context.Context, s cmdutil.Streams, opts *options) error {
	if opts.jqLayout && opts.indent < 0 && !opts.compact && !opts.tab {
		opts.indent = 2
	}
	if opts.version {
		fmt.Fprintf(s.Out, "%s version %s\n", prog, cmdutil.VersionString())
		return nil
	}
	if opts.completion != "" {
		script, err := cmdutil.CompletionScript(App(s), opts.completion)
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(s.Out, script)
		return err
	}
	return run(ctx, s, opts)
}

// Run runs fr-filter with args (args[0] is the program name) and returns its exit code.
//
// The command definition (App) is only built for --help: fr-filter parses its own command
// line, and setting up the definition's three dozen flags costs more than a small filter's
// whole run, which a script calling fr-filter once per file pays each time.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	cmdutil.QuietOnClosedStdout(s)
	opts, err := parseArgs(args[1:])
	if err == nil && opts.help {
		return cmdutil.RunApp(ctx, App(s), s, args)
	}
	if err == nil {
		err = act(ctx, s, opts)
	}
	return cmdutil.Report(prog, s.Err, err)
}

// flagDocs describes flagTable for the help, the man page and the completions.
func flagDocs() []cli.Flag {
	var out []cli.Flag
	for _, f := range flagTable {
		var aliases []string
		if f.short != "" {
			aliases = []string{f.short}
		}
		switch {
		case f.args == 0:
			out = append(out, &cli.BoolFlag{Name: f.name, Aliases: aliases, Usage: f.usage})
		case strings.Contains(f.usage, "{values}"):
			out = append(out, cmdutil.Enum(f.name, f.values, "", f.usage, aliases...))
		case f.values != nil:
			// values to complete, too many to name in the usage (--type's event types)
			out = append(out, &cmdutil.EnumFlag{StringFlag: cli.StringFlag{Name: f.name, Aliases: aliases, Usage: f.usage}, Values: f.values})
		default:
			out = append(out, &cli.StringFlag{Name: f.name, Aliases: aliases, Usage: f.usage})
		}
	}
	return out
}

// usageErr is a usage error with the usual hint.
func usageErr(format string, a ...any) error {
	return cmdutil.WithHint(cmdutil.Usagef(format, a...), "see 'fr-filter --help'")
}
