// Package sim implements fr-sim, a scripted stand-in for fuseraft: it answers fuseraft's
// command lines (the --json queries, repl --vscode, run --bridge, serve) by playing a
// scenario (package scenario), so fr's tests and demos need no model, network or fuseraft.
//
// Global options reach every mode through the environment the mode sees (FRSIM_SCENARIO,
// FRSIM_RECORD, FRSIM_FAULTS, FRSIM_PACE): the dispatcher folds the flags into it, so the
// serve and query packages only call scenario.FromEnv.
package sim

import (
	"context"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/cmd/sim/query"
	"github.com/fuseraft/fr/internal/cmd/sim/scenario"
	"github.com/fuseraft/fr/internal/cmd/sim/serve"
	"github.com/fuseraft/fr/internal/cmdutil"
)

const prog = "fr-sim"

// Run runs fr-sim with args (args[0] is the program name) and returns its exit code.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	app := App(s)
	return cmdutil.RunApp(ctx, app, s, args)
}

// env folds the global flags into the environment a mode sees.
func env(c *cli.Context, s cmdutil.Streams) (cmdutil.Streams, error) {
	set := map[string]string{}
	if c.IsSet("scenario") {
		set[scenario.EnvScenario] = c.String("scenario")
	}
	if c.IsSet("record") {
		set[scenario.EnvRecord] = c.String("record")
	}
	if c.IsSet("pace") {
		set[scenario.EnvPace] = strconv.FormatFloat(c.Float64("pace"), 'g', -1, 64)
	}
	faults := []string{}
	if f := s.Env(scenario.EnvFaults); f != "" {
		faults = append(faults, f)
	}
	if c.IsSet("faults") {
		faults = append(faults, c.String("faults"))
	}
	for _, b := range []string{"dotnet", "crlf", "noise"} {
		if c.Bool(b) {
			faults = append(faults, b)
		}
	}
	for flag, fault := range map[string]string{"split": "split", "version-override": "version",
		"unknown-kind": "unknown-kind", "big": "big", "crash-after": "crash", "flood": "flood"} {
		if c.IsSet(flag) {
			faults = append(faults, fault+"="+c.String(flag))
		}
	}
	spec := strings.Join(faults, ",")
	if _, err := scenario.ParseFaults(spec); err != nil {
		return s, cmdutil.Usagef("%v", err)
	}
	set[scenario.EnvFaults] = spec
	orig := s.Env
	s.Getenv = func(k string) string {
		if v, ok := set[k]; ok {
			return v
		}
		return orig(k)
	}
	return s, nil
}

// App is fr-sim's command line.
func App(s cmdutil.Streams) *cli.App {
	app := cmdutil.NewApp(s, prog, "a scripted stand-in for fuseraft, for tests and demos")
	app.UsageText = "fr-sim [global options] COMMAND [fuseraft's arguments]\n" +
		"FUSERAFT_BIN=fr-sim fr-stream repl"
	app.Description = description
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "scenario", Usage: "play the scenario in `FILE` (YAML or JSON) instead of the embedded default ($FRSIM_SCENARIO)"},
		&cli.StringFlag{Name: "record", Usage: "append every input line clients send (and each SIGINT) to `FILE`, as JSONL ($FRSIM_RECORD)"},
		&cli.Float64Flag{Name: "pace", Usage: "multiply the scenario's delays by `F`; 0 plays without delays ($FRSIM_PACE)"},
		&cli.StringFlag{Name: "faults", Usage: "comma-separated fault `LIST`, as in $FRSIM_FAULTS (added to it)"},
		&cli.BoolFlag{Name: "dotnet", Usage: "write JSON as .NET does: ASCII only, \\u0022, \\u002B, uppercase hex"},
		&cli.BoolFlag{Name: "crlf", Usage: "end lines with \\r\\n"},
		&cli.BoolFlag{Name: "noise", Usage: "write plain-text lines among the events"},
		&cli.StringFlag{Name: "split", Usage: "write each line in pieces of `BYTES[/PAUSE]` (e.g. 7/5ms)"},
		&cli.IntFlag{Name: "version-override", Usage: "announce protocolVersion `N`"},
		&cli.StringFlag{Name: "unknown-kind", Usage: "give every approval_request the kind `NAME`"},
		&cli.IntFlag{Name: "big", Usage: "grow tool_result outputs and file_write contents to `BYTES`"},
		&cli.IntFlag{Name: "crash-after", Usage: "die after `N` events, leaving half a line (exit 134)"},
		&cli.IntFlag{Name: "flood", Usage: "send `N` token events at the start of every turn, run or task"},
	}
	var streams cmdutil.Streams
	app.Before = func(c *cli.Context) error {
		var err error
		streams, err = env(c, s)
		return err
	}
	passthrough := func(name, usage string, runner func(context.Context, cmdutil.Streams, []string) int, withName bool) *cli.Command {
		return &cli.Command{
			Name:            name,
			Usage:           usage,
			UsageText:       "fr-sim " + name + " [fuseraft's arguments]",
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				args := c.Args().Slice()
				if withName {
					args = append([]string{name}, args...)
				}
				if code := runner(c.Context, streams, args); code != 0 {
					return cmdutil.Exit(code)
				}
				return nil
			},
		}
	}
	app.Commands = []*cli.Command{
		replCommand(&streams),
		runCommand(&streams),
		serveCommand(passthrough("serve", "the daemon: Unix socket and WebSocket (see 'fr-sim serve --help')", serve.Run, false)),
		scenarioCommand(s),
		datasetCommand(s),
	}
	for _, q := range []struct{ name, usage string }{
		{"sessions", "orchestration sessions (--json, --all, --project, --show ID, --repl)"},
		{"memory", "memories (list --json [--agent A], agents --json)"},
		{"context", "imported context (list --json [--dir D])"},
		{"schedule", "scheduled jobs (list --json)"},
		{"plugins", "plugins (--json [--plugin NAME])"},
		{"models", "models (--json)"},
		{"config", "configs (--list --json [--dir D])"},
		{"validate", "validate a config (validate PATH --json)"},
		{"init", "templates and new configs (init --list-templates --json, init [PATH] --json)"},
	} {
		app.Commands = append(app.Commands, passthrough(q.name, "resource query: "+q.usage, query.Run, true))
	}
	return cmdutil.Finish(cmdutil.DeclareExitCodes(app, exitCodes))
}

// serveCommand gives the serve passthrough the definition of fr-sim serve (its usage, text and
// flags) for the man page and completions. serve parses its own arguments (and answers its own
// --help), so these flags are never parsed here.
func serveCommand(c *cli.Command) *cli.Command {
	def := serve.App(cmdutil.Streams{})
	c.UsageText = def.UsageText
	c.Description = def.Description
	c.Flags = def.Flags
	return c
}

func replCommand(streams *cmdutil.Streams) *cli.Command {
	return &cli.Command{
		Name:      "repl",
		Usage:     "a chat over the JSON bridge, as fuseraft repl --vscode",
		UsageText: "fr-sim repl --vscode --no-banner [--model ID] [--resume ID]",
		Description: "Prints ready, then plays one scripted turn per message read on stdin (a user_input\n" +
			"line, or any other line taken as the message). The line after an approval_request\n" +
			"answers it: anything but {\"type\":\"approval_response\",\"approved\":true} is a denial.\n" +
			"An interrupt line or SIGINT cancels the turn. End of input (or {\"text\":null}) gives\n" +
			"session_end after the scenario's endDelay. Questions are asked only with\n" +
			"FUSERAFT_VSCODE_QUESTIONS=1.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "vscode", Usage: "speak JSON lines on stdin and stdout (required)"},
			&cli.BoolFlag{Name: "no-banner", Usage: "accepted, as fuseraft takes it; fr-sim prints no banner"},
			&cli.StringFlag{Name: "model", Usage: "report model `ID` in ready"},
			&cli.StringFlag{Name: "resume", Usage: "resume session `ID`: replay follows ready; an unknown id exits 1"},
		},
		Action: func(c *cli.Context) error {
			o, err := replOptionsFrom(c)
			if err != nil {
				return err
			}
			return repl(c.Context, *streams, o)
		},
	}
}

// replOptionsFrom reads repl's command line.
func replOptionsFrom(c *cli.Context) (*replOptions, error) {
	if c.Args().Len() > 0 {
		return nil, cmdutil.Usagef("repl takes no arguments (got %q)", c.Args().First())
	}
	return &replOptions{vscode: c.Bool("vscode"), noBanner: c.Bool("no-banner"),
		model: c.String("model"), resume: c.String("resume")}, nil
}

func runCommand(streams *cmdutil.Streams) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "an orchestration run, as fuseraft run --bridge",
		UsageText: "fr-sim run --bridge -c CONFIG TASK\nfr-sim run --bridge --resume ID\nfr-sim run --json [--ci] -c CONFIG TASK",
		Description: "With --bridge: ready, the scenario's run steps, then result; the exit status is the\n" +
			"result's exitCode. The line after an approval_request answers it; user_input is not\n" +
			"read. An interrupt line or SIGINT ends the run with succeeded false. A run that fails\n" +
			"before it starts (not configured, no -c, unknown --resume id, or the scenario's\n" +
			"failBeforeStart) sends only result, with a null sessionId. CONFIG is reported, not read.\n" +
			"Without --bridge every prompt is denied and one summary is printed (snake_case JSON\n" +
			"with --json); with --ci, a failed success criterion (the scenario's run.ci) exits 2.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "bridge", Usage: "speak JSON lines on stdin and stdout"},
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "orchestration config `PATH`"},
			&cli.StringFlag{Name: "resume", Usage: "continue session `ID`"},
			&cli.BoolFlag{Name: "json", Usage: "without --bridge: print one snake_case JSON summary"},
			&cli.BoolFlag{Name: "hitl", Usage: "refused with --bridge, as fuseraft does"},
			&cli.BoolFlag{Name: "ci", Usage: "without --bridge: check the config's success criteria; exit 2 when one failed (the scenario's run.ci)"},
		},
		Action: func(c *cli.Context) error {
			return run(c.Context, *streams, runOptionsFrom(c))
		},
	}
}

// runOptionsFrom reads run's command line.
func runOptionsFrom(c *cli.Context) *runOptions {
	return &runOptions{bridge: c.Bool("bridge"), config: c.String("config"),
		resume: c.String("resume"), json: c.Bool("json"), hitl: c.Bool("hitl"), ci: c.Bool("ci"),
		task: strings.Join(c.Args().Slice(), " ")}
}

func datasetCommand(s cmdutil.Streams) *cli.Command {
	c := embeddedCommand(s, "dataset", "the embedded dataset the resource queries answer from",
		"load each FILE as $FRSIM_STATE would and report the first error in it",
		query.DefaultState, func(p string) error { _, err := query.LoadStateFile(p); return err })
	c.Description = "The queries (sessions, memory, context, schedule, plugins, models, config, init) answer\n" +
		"from this JSON document; edit a copy and point $FRSIM_STATE at it. With the embedded\n" +
		"scenario, repl --resume and run --resume also accept the sessions it lists."
	c.UsageText = "fr-sim dataset > state.json\nfr-sim dataset check FILE..."
	return c
}

func scenarioCommand(s cmdutil.Streams) *cli.Command {
	c := embeddedCommand(s, "scenario", "the embedded default scenario",
		"load each FILE and report the first error in it, as FILE:LINE: message",
		scenario.DefaultYAML, func(p string) error { _, err := scenario.Load(p); return err })
	c.UsageText = "fr-sim scenario > my.yaml\nfr-sim scenario check FILE..."
	return c
}

// embeddedCommand prints an embedded document (what), and with check, loads files of that kind
// and reports the first error in each. A file that fails to load is a configuration error, as
// everywhere in fr-sim (exit 2).
func embeddedCommand(s cmdutil.Streams, name, what, checkUsage string, doc func() []byte, load func(string) error) *cli.Command {
	return &cli.Command{
		Name:  name,
		Usage: "print " + what + ", or check " + name + " files",
		Action: func(c *cli.Context) error {
			if c.Args().Len() > 0 {
				return cmdutil.Usagef("unknown argument %q", c.Args().First())
			}
			_, err := s.Out.Write(doc())
			return writeErr(err)
		},
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     checkUsage,
			UsageText: "fr-sim " + name + " check FILE...",
			Action: func(c *cli.Context) error {
				if c.Args().Len() == 0 {
					return cmdutil.Usagef("%s check needs at least one FILE", name)
				}
				failed := false
				for _, p := range c.Args().Slice() {
					if err := load(p); err != nil {
						cmdutil.Sayf(s.Err, prog, "error: %v", err)
						failed = true
					}
				}
				if failed {
					return cmdutil.Exit(cmdutil.ExitUsage)
				}
				return nil
			},
		}},
	}
}
