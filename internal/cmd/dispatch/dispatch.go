// Package dispatch implements fr-dispatch: fire-and-forget tasks over the MCP tools of a
// running fuseraft serve daemon (dispatch_task, get_status, get_result), for CI jobs where no
// step can hold a connection open for the length of a task: one step dispatches, a later one
// (or another job) collects.
package dispatch

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/cmdutil"
)

const prog = "fr-dispatch"

// defaultRequestTimeout is how long one request waits for the daemon's answer.
const defaultRequestTimeout = 30 * time.Second

const description = `fr-dispatch talks to a running 'fuseraft serve' (or fr-sim serve) through its MCP tools over
HTTP: dispatch_task queues a task, get_status and get_result report on it. Nothing needs to stay
connected while a task runs, so a CI job can dispatch in one step and collect in a later one.

Every command prints one JSON line per task on stdout, as the daemon answered, with its
sessionId first: pipe it to jq, fr-filter or a file, and pass the ids to a later step.

   task TEXT...       dispatch each TEXT (none: one task per line of stdin); prints
                      {"sessionId","status":"queued","position"} per task
   status ID...       get_status: {"sessionId","status","position","turnCount","lastAgent","lastMessage"}
   result ID...       get_result: {"sessionId","status","succeeded","errorMessage","messages"}
                      (only "status" while the task is queued or running)
   wait ID...         poll each task (with backoff) until it finishes, print its result, in the
                      order they finish
   run TEXT...        task, then wait: --parallel N tasks at a time, from the arguments or one per
                      line of stdin; one result line per task in the order they finish, and on a
                      terminal a row per task instead, then a summary

An unknown id is answered {"status":"unknown","error":...} and counts as a failed task.

WHERE THE DAEMON IS
   --url http://HOST:PORT/mcp, or $FUSERAFT_MCP_URL. The port is fuseraft serve's MCP port,
   the one it prints at start-up and serves the WebSocket's /attach on: fr-attach's
   ws://HOST:PORT/attach URL is accepted too and means the same server's /mcp. fuseraft
   does not say how it picks that port, so fr-dispatch cannot derive it and asks for it.
   The bearer token comes only from $FUSERAFT_SERVE_TOKEN or --token-file, never from a flag's
   value (which other users can read in the process list).
   Redirects are followed within the daemon's origin only; a password in the URL is never
   printed. --ca-cert FILE trusts a private CA for https://.

EVERY REQUEST IS BOUNDED
   Each request to the daemon gives up after --request-timeout (30s), and each answer is read
   up to 64 MiB: fr-dispatch never waits for ever, nor holds an answer without bound.

TASKS NOBODY ATTENDS
   A dispatched task has no client: its approvals are decided by the daemon's unattended policy
   (--unattended-policy deny|allow of fuseraft serve; deny by default). Its progress events
   are broadcast to clients attached with fr-attach, as every task's are.`

const environment = `ENVIRONMENT
   FUSERAFT_MCP_URL       the daemon's MCP endpoint, when --url is not given
   FUSERAFT_SERVE_TOKEN   the bearer token (--token-file wins)`

const example = `EXAMPLES
   # CI: dispatch in one step, collect in a later one
   fr-dispatch task 'update the dependencies' | jq -r .sessionId > task-id
   fr-dispatch wait --timeout 30m $(cat task-id) > result.json

   # many at once
   printf '%s\n' 'fix lint in ./a' 'fix lint in ./b' | fr-dispatch run --parallel 8`

// options are a subcommand's command line.
type options struct {
	name           string  // the subcommand
	sub            command // its work
	args           []string
	url            string // as given, for requests; redacted in messages
	token          string
	tls            *tls.Config
	requestTimeout time.Duration
	timeout        time.Duration
	parallel       int
	objective      string
	poll           time.Duration
	maxPoll        time.Duration
	terminal       bool
	fleet          *fleetOptions // with --nats: the fleet instead of one daemon
}

// Run is fr-dispatch's whole command line.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	ctx, stop := cmdutil.Interruptible(ctx)
	defer stop()
	app := App(s)
	return cmdutil.RunApp(ctx, app, s, args)
}

// App is fr-dispatch's definition: its flags, subcommands and help, for Run and the docs.
func App(s cmdutil.Streams) *cli.App {
	app := cmdutil.NewApp(s, prog, "fire-and-forget tasks over a fuseraft serve daemon's MCP tools")
	app.UsageText = "fr-dispatch [--url URL] [--token-file FILE] task|status|result|wait|run [FLAGS] [ARGS...]"
	app.Description = description + "\n\n" + fleetHelp + "\n\n" + environment + "\n\n" + example
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "url", Usage: "the daemon's MCP endpoint `URL` (http://HOST:PORT/mcp; $FUSERAFT_MCP_URL)"},
		&cli.StringFlag{Name: "token-file", Usage: "read the bearer token from `FILE` (else $FUSERAFT_SERVE_TOKEN)"},
		&cli.StringFlag{Name: "ca-cert", Usage: "trust the PEM certificates in `FILE` for https:// instead of the system roots"},
		&cli.DurationFlag{Name: "request-timeout", Value: defaultRequestTimeout, Usage: "give up on a request the daemon does not answer within `DUR` (exit 10)"},
	}
	app.Flags = append(app.Flags, fleetFlags()...)
	timeout := &cli.DurationFlag{Name: "timeout", Usage: "give up waiting after `DUR` (0: never)"}
	poll := &cli.DurationFlag{Name: "poll", Value: 250 * time.Millisecond, Usage: "poll a task first after `DUR`, then ever less often"}
	maxPoll := &cli.DurationFlag{Name: "max-poll", Value: 5 * time.Second, Usage: "poll a task at least every `DUR`"}
	objective := &cli.StringFlag{Name: "objective", Usage: "dispatch the tasks for objective `ID` (dispatch_task's objectiveId)"}
	app.Commands = []*cli.Command{
		{Name: "task", Usage: "dispatch tasks; print one {sessionId,status,position} line each", ArgsUsage: "[TEXT...]",
			Flags: []cli.Flag{objective, idFlag}, Action: action(s, cmdTask)},
		{Name: "status", Usage: "print get_status of each task", ArgsUsage: "ID...", Action: action(s, cmdLookup(toolStatus))},
		{Name: "result", Usage: "print get_result of each task", ArgsUsage: "ID...", Action: action(s, cmdLookup(toolResult))},
		{Name: "wait", Usage: "wait for each task to finish and print its result", ArgsUsage: "ID...",
			Flags: []cli.Flag{timeout, poll, maxPoll}, Action: action(s, cmdWait)},
		{Name: "run", Usage: "dispatch tasks and wait for them, --parallel N at a time", ArgsUsage: "[TEXT...]",
			Flags: []cli.Flag{timeout, poll, maxPoll, objective, idFlag,
				&cli.IntFlag{Name: "parallel", Aliases: []string{"j"}, Value: 1, Usage: "run `N` tasks at a time"}},
			Action: action(s, cmdRun)},
	}
	return cmdutil.Finish(cmdutil.DeclareExitCodes(app, exitCodes))
}

// command is the work of a subcommand, once its client is connected; args are its
// arguments (the task texts of task and run, read from stdin when there are none).
type command func(ctx context.Context, s cmdutil.Streams, o *options, cl *client, args []string) error

// action runs a subcommand: its command line read into options, then run.
func action(s cmdutil.Streams, sub command) cli.ActionFunc {
	return func(c *cli.Context) error {
		o, err := optionsFrom(c, s, sub)
		if err != nil {
			return err
		}
		if o.fleet != nil {
			return runFleet(c.Context, s, o)
		}
		return run(c.Context, s, o)
	}
}

// optionsFrom reads a subcommand's command line (and what its flags name: the CA's
// certificates, the token) into options.
func optionsFrom(c *cli.Context, s cmdutil.Streams, sub command) (*options, error) {
	o := &options{
		name:           c.Command.Name,
		sub:            sub,
		args:           c.Args().Slice(),
		requestTimeout: c.Duration("request-timeout"),
		timeout:        c.Duration("timeout"),
		parallel:       c.Int("parallel"),
		objective:      c.String("objective"),
		poll:           c.Duration("poll"),
		maxPoll:        c.Duration("max-poll"),
		terminal:       s.OutTerminal,
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if cn, ok, err := natsAsked(c, s); err != nil {
		return nil, err
	} else if ok {
		o.fleet, err = fleetOptionsFrom(c, cn)
		return o, err
	}
	raw := c.String("url")
	if raw == "" {
		raw = s.Env("FUSERAFT_MCP_URL")
	}
	if raw == "" {
		return nil, cmdutil.WithHint(cmdutil.Usagef("no daemon to talk to: pass --url or set FUSERAFT_MCP_URL"),
			"the URL is http://HOST:PORT/mcp on the port fuseraft serve prints at start-up")
	}
	u, err := endpoint(raw)
	if err != nil {
		return nil, err
	}
	o.url = u
	if o.requestTimeout <= 0 {
		return nil, cmdutil.Usagef("--request-timeout must be positive, not %s", o.requestTimeout)
	}
	if f := c.String("ca-cert"); f != "" {
		if !strings.HasPrefix(u, "https:") {
			return nil, cmdutil.Usagef("--ca-cert is for https:// (or wss://) URLs")
		}
		if o.tls, err = cmdutil.LoadCA(f); err != nil {
			return nil, err
		}
	}
	if o.token, err = cmdutil.BearerToken(c.String("token-file"), s.Env); err != nil {
		return nil, err
	}
	if len(o.args) == 0 && (o.name == "status" || o.name == "result" || o.name == "wait") {
		return nil, cmdutil.WithHint(cmdutil.Usagef("%s needs at least one session id", o.name),
			"see 'fr-dispatch "+o.name+" --help'")
	}
	return o, nil
}

// check refuses polling and parallelism that cannot work.
func (o *options) check() error {
	waits := o.name == "wait" || o.name == "run"
	if waits && (o.poll <= 0 || o.maxPoll < o.poll) {
		return cmdutil.Usagef("--poll must be positive and at most --max-poll")
	}
	if o.name == "run" && o.parallel < 1 {
		return cmdutil.Usagef("--parallel must be at least 1, not %d", o.parallel)
	}
	return nil
}

// run runs the subcommand o names: its tasks read, the daemon connected.
func run(ctx context.Context, s cmdutil.Streams, o *options) error {
	args := o.args
	if o.name == "task" || o.name == "run" {
		var err error
		if args, err = tasks(s.In, args); err != nil {
			return err
		}
	}
	cl, err := connect(ctx, o)
	if err != nil {
		return err
	}
	defer cl.close()
	return o.sub(ctx, s, o, cl, args)
}

// tasks returns the task texts: the arguments, else one per non-blank line of in. An empty
// task (an unset $TASK) is a usage error, not a task.
func tasks(in io.Reader, args []string) ([]string, error) {
	if len(args) == 0 {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if t := strings.TrimSpace(sc.Text()); t != "" {
				args = append(args, strings.TrimRight(sc.Text(), "\r"))
			}
		}
		if err := sc.Err(); err != nil {
			return nil, cmdutil.Usagef("reading tasks from stdin: %v", err)
		}
		if len(args) == 0 {
			return nil, cmdutil.WithHint(cmdutil.Usagef("no task: give TEXT arguments or one task per line of stdin"),
				"see 'fr-dispatch task --help'")
		}
		return args, nil
	}
	for i, a := range args {
		if strings.TrimSpace(a) == "" {
			return nil, cmdutil.WithHint(cmdutil.Usagef("task %d is empty", i+1), "is the variable that holds it set?")
		}
	}
	return args, nil
}

func cmdTask(ctx context.Context, s cmdutil.Streams, o *options, cl *client, texts []string) error {
	for _, t := range texts {
		line, err := cl.dispatch(ctx, t, o.objective)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(s.Out, "%s\n", line); err != nil {
			return err
		}
	}
	return nil
}

func (cl *client) dispatch(ctx context.Context, text, objective string) ([]byte, error) {
	args := map[string]any{"task": text}
	if objective != "" {
		args["objectiveId"] = objective
	}
	return cl.call(ctx, toolDispatch, args)
}

// cmdLookup prints get_status or get_result of each id; an unknown id is printed too and
// makes the exit status 1.
func cmdLookup(tool string) command {
	return func(ctx context.Context, s cmdutil.Streams, o *options, cl *client, ids []string) error {
		var failed []string
		for _, id := range ids {
			obj, err := cl.call(ctx, tool, map[string]any{"sessionId": id})
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(s.Out, "%s\n", withSessionID(obj, id)); err != nil {
				return err
			}
			st, err := decodeState(obj)
			if err != nil {
				return err
			}
			if st.Status == "unknown" || (tool == toolResult && st.Status == "failed") {
				failed = append(failed, id+": "+st.why())
			}
		}
		return failures(s, failed, len(ids))
	}
}

// failures ends a command whose tasks did not all succeed: every failure but the last as an
// error line, the last as the command's error (exit 1).
func failures(s cmdutil.Streams, failed []string, of int) error {
	if len(failed) == 0 {
		return nil
	}
	for _, f := range failed[:len(failed)-1] {
		fmt.Fprintf(s.Err, "%s: error: %s\n", prog, f)
	}
	if len(failed) > 1 || of > 1 {
		return cmdutil.Errorf(cmdutil.ExitFailed, "%s (%d of %d tasks did not succeed)", failed[len(failed)-1], len(failed), of)
	}
	return cmdutil.Errorf(cmdutil.ExitFailed, "%s", failed[0])
}
