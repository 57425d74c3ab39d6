// Package serve is fr-sim's stand-in for fuseraft serve: the daemon behind the Unix socket and
// the WebSocket that fuseraft attach and fr-attach connect to.
//
// It emulates what a client of the real daemon sees (the protocol page, "serve socket" and
// "Daemon events"): hello with inFlight and pendingResults; bearer tokens, read-only tokens and
// client ids scoped per token; a newer connection with the same id closing the older; every
// input line from an idle client dispatched as a task (queued with its position); progress
// events broadcast; approval prompts and results only to the dispatching client, whose next
// line is the answer; --reconnect-grace; a restart that keeps unfinished tasks (task_resumed)
// and uncollected results. Fault knobs make it misbehave the way the real one can.
//
// Tasks play a built-in plan picked by their first word (see planFor).
package serve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/cmd/sim/scenario"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

type options struct {
	socket            string
	port              int
	wsEnabled         bool
	tokensFile        string
	grace             time.Duration
	stateDir          string
	readyFile         string
	dropAfterApproval int
	autoObjectives    []objective
	a2a               bool
	unattendedAllow   bool
	sendQueue         int
	trace             string
	writeTimeout      time.Duration
}

// Defaults of the per-connection bounds.
const (
	defaultSendQueue    = 64 << 20
	defaultWriteTimeout = 10 * time.Second
)

// objective is one --auto-objective: a task the daemon dispatches by itself.
type objective struct{ id, task string }

// parseObjectives reads --auto-objective values, each ID:TASK.
func parseObjectives(vals []string) ([]objective, error) {
	var out []objective
	for _, v := range vals {
		id, task, ok := strings.Cut(v, ":")
		id, task = strings.TrimSpace(id), strings.TrimSpace(task)
		if !ok || id == "" || task == "" {
			return nil, cmdutil.Usagef("--auto-objective %q: want ID:TASK", v)
		}
		out = append(out, objective{id, task})
	}
	return out, nil
}

const prog = "fr-sim"

// Flags are the flags of fr-sim serve.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "socket", Usage: "listen on the Unix socket `PATH` (default: the path fuseraft attach derives from FUSERAFT_HOME and the working directory)"},
		&cli.IntFlag{Name: "port", Usage: "also serve the WebSocket at ws://127.0.0.1:`PORT`/attach; 0 picks a free port"},
		&cli.StringFlag{Name: "tokens-file", Usage: "bearer tokens, one `FILE` line each: 'write TOKEN' or 'read TOKEN' ('#' starts a comment)"},
		&cli.DurationFlag{Name: "reconnect-grace", Value: 30 * time.Second, Usage: "how long (`DUR`) an approval waits for its client to reconnect before it is denied"},
		&cli.StringFlag{Name: "state-dir", Usage: "keep unfinished tasks, results and the pidfile in `DIR` (default: FUSERAFT_HOME/state/SLUG)"},
		&cli.StringFlag{Name: "ready-file", Usage: "write {\"pid\",\"socket\",\"url\"} to `FILE` once listening"},
		&cli.StringFlag{Name: "scenario", Usage: "play the serve tasks of scenario `FILE` (as fr-sim --scenario)"},
		&cli.StringFlag{Name: "record", Usage: "append every line clients send to `FILE` as JSONL (as fr-sim --record)"},
		&cli.StringFlag{Name: "trace", Usage: "append what the daemon does with each client to `FILE` as JSONL: connections, prompts asked and answered, results delivered (see TRACE)"},
		&cli.StringFlag{Name: "faults", Usage: "add the faults in `LIST` (as fr-sim --faults)"},
		&cli.IntFlag{Name: "drop-after-approval", Usage: "fault: drop the connection right after sending the `N`th approval_request"},
		&cli.StringSliceFlag{Name: "auto-objective", Usage: "dispatch the task of objective `ID:TASK` by itself (auto_dispatched) once the first client is attached; repeatable"},
		cmdutil.Enum("unattended-policy", []string{"deny", "allow"}, "deny", "decide the approvals of tasks nobody attends (dispatch_task, objectives, A2A calls): `POLICY` {values}"),
		&cli.IntFlag{Name: "send-queue", Value: defaultSendQueue, Usage: "disconnect a client that lets more than `BYTES` of events wait for it (default 64 MiB)", DefaultText: "67108864"},
		&cli.DurationFlag{Name: "write-timeout", Value: defaultWriteTimeout, Usage: "disconnect a client when a write to it makes no progress for `DUR`"},
		&cli.BoolFlag{Name: "a2a", Usage: "host A2A calls at POST /a2a/AGENT on the --port server, each announced with a2a_call and played as a task"},
	}
}

// Description is the help text of fr-sim serve.
const Description = `fr-sim serve listens where fuseraft serve would and plays scripted tasks, so fr-attach and
your own clients can be tested without a model.

It listens on the Unix socket fuseraft attach derives from the working directory
(FUSERAFT_HOME/run/HASH.sock) or on --socket, and with --port on a WebSocket at
ws://127.0.0.1:PORT/attach. Once listening it prints one line on stderr:

   fr-sim: serve: listening socket=PATH url=URL pid=PID

(url=- without --port) and writes the same as JSON to --ready-file.

Every client first gets hello. Each line an idle client sends is a new task (a user_input's
text, or the line verbatim): queued, then progress events to every client, then approval
prompts and the result only to the client that sent it. While its task runs, the client's
next line after an approval_request is the answer: only {"type":"approval_response",
"approved":true} approves; anything else denies and is consumed.

What a task does comes from the scenario's serve section (fr-sim --scenario FILE; the
embedded default otherwise): the first task whose match expression fits the text is played,
its steps broadcast as progress, its approvals asked of the dispatching client, then its
result. fr-sim's fault flags apply (--dotnet, --version-override, --flood, --crash-after, and
--crlf, --noise, --split on the socket), and --record FILE records every line clients send,
with their client id and connection. A crash leaves the state, the pidfile and the socket
file behind, as a dead daemon does.

Tasks nobody sent: --auto-objective ID:TASK (repeatable) dispatches TASK on the daemon's own
once the first client is attached, announced to every client with auto_dispatched
{sessionId, objectiveId, task}. With --a2a, POST /a2a/AGENT on the --port server (body: the
message, a user_input line or plain text) is an A2A call to AGENT: a2a_call {agent,
sessionId} goes to every client and the call is answered 202 with {"sessionId"}. Both are
queued and played like any task, their progress broadcast; with no client of their own,
their approvals follow --unattended-policy (deny by default, or allow) and their result goes
to nobody.

MCP tools: the --port server also serves fuseraft's MCP tools at /mcp (streamable HTTP, with
the same bearer tokens; a read token cannot dispatch): dispatch_task(task, objectiveId?) queues
a task nobody attends and answers {sessionId, status: "queued", position};
get_status(sessionId) answers {status, position, turnCount, lastAgent, lastMessage};
get_result(sessionId) answers {status} while the task is queued or running, then {status,
succeeded, errorMessage, messages: [{agent, role, content}]}; an unknown id gets {status:
"unknown", error}. Finished tasks are remembered (the last 10000) across restarts.

Tokens: FUSERAFT_SERVE_TOKEN is a write token; --tokens-file adds more, one per line as
'write TOKEN' or 'read TOKEN'. With any token configured the WebSocket needs
'Authorization: Bearer TOKEN' (401 otherwise); a read token gets readOnly:true and an error
event for every task it sends. A handshake with an Origin header is refused (403), an
invalid Fuseraft-Client-Id too (400). The Unix socket takes no headers: no token, no client id.

Client ids are scoped per token; a newer connection with the same id closes the older
(WebSocket close status 4001). When a client with an id drops mid-approval, the daemon waits
--reconnect-grace for it and asks again right after its next hello; nobody within the grace,
or a client without an id, is a denial.

Sending never blocks the daemon. What waits for a client is queued per connection and
written by that connection's own writer, each write with a deadline. A task's events go as
fast as its readers read, but a connection that makes no progress for a second holds no task
back. A client that lets more than --send-queue bytes (64 MiB) wait for it, or whose writes
make no progress for --write-timeout (10s), is disconnected: an error event saying why is
the last line queued for it (WebSocket close status 1008), and a line on stderr names the
connection. A single event longer than --send-queue is still sent when nothing else waits.
A result stays saved until it is written to its client's connection: one queued for a
connection that goes away is sent after the client's next hello.

SIGINT or SIGTERM stops the daemon cleanly and keeps its state (unfinished tasks, results
not yet collected) in the state directory with the pidfile serve.pid; the next start resumes
the tasks (task_resumed) and hands each client its results after its hello. Progress is
saved when a prompt is answered, before the answer goes to the record: a restarted daemon
(even after SIGKILL) never asks an answered approval or question again, and asks the one
pending when it died once more, right after its client's hello. A result stays saved until
it is written to its client: a daemon killed in the moment between the two sends it again
rather than lose it. A socket file or pidfile a killed daemon left behind does not stop the
next start: a socket nobody listens on is replaced.

TRACE
   --trace FILE appends one JSON object a line, in the order things happen, for tests that
   check who was asked what and who answered:
      {"t","event","run","conn","client","transport", ...}
   run tells the daemon's runs apart (conn numbers start again at 1 in each); conn, client
   and transport are null when no connection is involved. The events and their fields:
      connected     readOnly                    a connection attached (after its hello)
      read          line                        a line the connection sent (as --record)
      dispatched    sessionId, task             a line became a task
      asked         prompt, queued, line        a prompt (approval_request, question) queued
      answered      prompt, line                the line taken as its answer
      unanswered    prompt, line: null          nobody to ask: denied as unattended
      replayed      prompt, line                answered before a restart: not asked again
      delivered     sessionId, owner            a result written to the connection
      disconnected  reason (slow, dropped)      the daemon cut the connection
      closed                                    the connection ended
   prompt is SESSIONID/STEP/N (the task's top-level step, the Nth prompt in it), the same
   across restarts: each prompt id is answered (or replayed) once.

ENVIRONMENT
   FUSERAFT_HOME          fuseraft's home (default ~/.fuseraft): socket and state paths
   FUSERAFT_SERVE_TOKEN   a write token the WebSocket accepts
   FRSIM_SCENARIO, FRSIM_FAULTS, FRSIM_RECORD, FRSIM_PACE   as fr-sim's global flags

EXAMPLES
   # a daemon for the current directory, and a task through it
   fr-sim serve --ready-file /tmp/ready.json &
   fr-attach --task 'fix the parser' --exit-on-result --input answers.fifo \
     | fr-approve --policy ci.yaml > answers.fifo

   # an objective the daemon works on by itself, and a client watching it
   fr-sim serve --auto-objective 'OBJ-1:tidy the imports' &
   fr-attach --format jsonl | fr-filter --type auto_dispatched,agent_starting

   # a throughput test: a scenario task with a flood step, over the WebSocket
   fr-sim --scenario flood.yaml serve --port 8787 &
   fr-attach --url ws://127.0.0.1:8787/attach --task 'flood' --exit-on-result | wc -l`

// App returns the fr-sim serve command line.
func App(s cmdutil.Streams) *cli.App {
	app := cmdutil.NewApp(s, prog, "stand in for fuseraft serve: a daemon on a Unix socket and a WebSocket")
	app.HelpName = "fr-sim serve"
	app.UsageText = "fr-sim serve [--socket PATH] [--port PORT] [--tokens-file FILE] [--ready-file FILE] [options]"
	app.Description = Description
	app.Flags = Flags()
	app.DisableSliceFlagSeparator = true // a task may contain commas
	app.Action = func(c *cli.Context) error {
		o, s, err := optionsFrom(c, s)
		if err != nil {
			return err
		}
		return serve(c.Context, s, o)
	}
	return cmdutil.DeclareExitCodes(app, cmdutil.ExitCodes{"": ExitCodes})
}

// optionsFrom reads serve's command line into options, and folds the fr-sim flags given
// after "serve" into the environment the daemon sees (where they win over what it says).
func optionsFrom(c *cli.Context, s cmdutil.Streams) (*options, cmdutil.Streams, error) {
	if c.NArg() > 0 {
		return nil, s, cmdutil.Usagef("unexpected argument %q", c.Args().First())
	}
	o := &options{
		socket:            c.String("socket"),
		port:              c.Int("port"),
		wsEnabled:         c.IsSet("port"),
		tokensFile:        c.String("tokens-file"),
		grace:             c.Duration("reconnect-grace"),
		stateDir:          c.String("state-dir"),
		readyFile:         c.String("ready-file"),
		dropAfterApproval: c.Int("drop-after-approval"),
		a2a:               c.Bool("a2a"),
		unattendedAllow:   c.String("unattended-policy") == "allow",
		sendQueue:         c.Int("send-queue"),
		trace:             c.String("trace"),
		writeTimeout:      c.Duration("write-timeout"),
	}
	if o.sendQueue <= 0 {
		return nil, s, cmdutil.Usagef("--send-queue must be at least 1 byte")
	}
	if o.writeTimeout <= 0 {
		return nil, s, cmdutil.Usagef("--write-timeout must be more than 0")
	}
	var err error
	if o.autoObjectives, err = parseObjectives(c.StringSlice("auto-objective")); err != nil {
		return nil, s, err
	}
	if o.a2a && !o.wsEnabled {
		return nil, s, cmdutil.Usagef("--a2a needs --port: the A2A endpoint is on the HTTP server")
	}
	vars := map[string]string{}
	for flag, env := range map[string]string{"scenario": scenario.EnvScenario, "record": scenario.EnvRecord} {
		if c.IsSet(flag) {
			vars[env] = c.String(flag)
		}
	}
	if c.IsSet("faults") {
		vars[scenario.EnvFaults] = strings.Trim(s.Env(scenario.EnvFaults)+","+c.String("faults"), ",")
	}
	if len(vars) > 0 {
		get := s.Env
		s.Getenv = func(k string) string {
			if v, ok := vars[k]; ok {
				return v
			}
			return get(k)
		}
	}
	return o, s, nil
}

// Run runs the daemon; args are the arguments after "serve". It returns the exit status.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	return cmdutil.RunApp(ctx, App(s), s, append([]string{"fr-sim serve"}, args...))
}

// readTokens reads a tokens file: lines "write TOKEN" or "read TOKEN"; blank lines and lines
// starting with '#' are skipped.
func readTokens(path string, toks tokens) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return cmdutil.Usagef("cannot read the tokens file: %v", err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, tok, ok := strings.Cut(line, " ")
		tok = strings.TrimSpace(tok)
		if !ok || tok == "" || (kind != "read" && kind != "write") {
			return cmdutil.Usagef("%s line %d: expected 'write TOKEN' or 'read TOKEN'", path, i+1)
		}
		toks[tok] = kind == "read"
	}
	return nil
}

// locate decides where the daemon lives, as fuseraft serve does (the socket and the state
// directory of the working directory's project, unless --socket and --state-dir say), and
// makes the directories.
func locate(s cmdutil.Streams, o *options) error {
	home, err := wire.Home(s.Env)
	if err != nil {
		return err
	}
	cwd, err := wire.WorkingDir()
	if err != nil {
		return err
	}
	if o.socket == "" {
		o.socket, err = wire.SocketPath(home, cwd)
		if err != nil {
			return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "%v", err), "pass a shorter --socket PATH or set FUSERAFT_HOME to a shorter directory")
		}
	}
	if o.stateDir == "" {
		o.stateDir = filepath.Join(home, "state", wire.ProjectSlug(cwd))
	}
	for _, dir := range []string{filepath.Dir(o.socket), o.stateDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// openDaemon makes the daemon of the scenario the environment names, with its pace, its
// record file and its trace file; closeFiles closes those files.
func openDaemon(s cmdutil.Streams, o *options) (d *daemon, closeFiles func(), err error) {
	sc, err := scenario.FromEnv(s.Env)
	if err != nil {
		return nil, nil, cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
	}
	d = newDaemon(*o, sc, func(format string, args ...any) { cmdutil.Warnf(s.Err, prog, format, args...) })
	d.stateDir = o.stateDir
	if d.pace, d.noDelays, err = scenario.Pace(s.Env); err != nil {
		return nil, nil, cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
	}
	var files []*os.File
	closeFiles = func() {
		for _, f := range files {
			f.Close()
		}
	}
	if p := s.Env(scenario.EnvRecord); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, cmdutil.Usagef("cannot open the record file: %v", err)
		}
		files = append(files, f)
		d.rec = f
	}
	if o.trace != "" {
		f, err := os.OpenFile(o.trace, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			closeFiles()
			return nil, nil, cmdutil.Usagef("cannot open the trace file: %v", err)
		}
		files = append(files, f)
		d.trace = f
	}
	return d, closeFiles, nil
}

func serve(ctx context.Context, s cmdutil.Streams, o *options) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	toks := tokens{}
	if t := strings.TrimSpace(s.Env("FUSERAFT_SERVE_TOKEN")); t != "" {
		toks[t] = false
	}
	if o.tokensFile != "" {
		if err := readTokens(o.tokensFile, toks); err != nil {
			return err
		}
	}
	if err := locate(s, o); err != nil {
		return err
	}
	d, closeFiles, err := openDaemon(s, o)
	if err != nil {
		return err
	}
	defer closeFiles()
	ctx, die := context.WithCancel(ctx)
	defer die()
	d.die = die
	if err := d.restore(); err != nil {
		return err
	}

	ln, err := listenSocket(o.socket)
	if err != nil {
		return err
	}
	// The socket is ours, so no other daemon writes this state: a temporary file a killed
	// one left behind mid-save is dropped.
	if left, _ := filepath.Glob(filepath.Join(o.stateDir, "."+stateFile+".*")); len(left) > 0 {
		for _, f := range left {
			os.Remove(f)
		}
	}
	defer func() {
		if !d.crashing() {
			os.Remove(o.socket)
		}
	}()
	var srv *http.Server
	url := "-"
	if o.wsEnabled {
		wln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.port)))
		if err != nil {
			ln.Close()
			return fmt.Errorf("cannot listen on 127.0.0.1:%d: %v", o.port, err)
		}
		url = "ws://" + wln.Addr().String() + "/attach"
		srv = &http.Server{Handler: d.wsHandler(ctx, toks), ReadHeaderTimeout: 10 * time.Second, ConnContext: withRawConn}
		go srv.Serve(wln)
	}
	pidfile := filepath.Join(o.stateDir, "serve.pid")
	if err := writeFileAtomic(pidfile, []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
		return err
	}
	defer func() {
		if !d.crashing() {
			os.Remove(pidfile)
		}
	}()

	runnerDone := make(chan struct{})
	go func() {
		defer close(runnerDone)
		d.runner(ctx)
	}()
	go d.serveSocket(ctx, ln)

	fmt.Fprintf(s.Err, "%s: serve: listening socket=%s url=%s pid=%d\n", prog, o.socket, url, os.Getpid())
	if o.readyFile != "" {
		b := encodeObject(field{"pid", os.Getpid()}, field{"socket", o.socket}, field{"url", url})
		if err := writeFileAtomic(o.readyFile, append(b, '\n')); err != nil {
			return err
		}
	}

	<-ctx.Done()
	d.mu.Lock()
	crash := d.crash
	d.mu.Unlock()
	if crash != nil {
		// A crash: no goodbye to anyone, the state stays as last saved, and the pidfile and
		// the socket file are left behind as a dead process leaves them.
		if ul, ok := ln.(*net.UnixListener); ok {
			ul.SetUnlinkOnClose(false)
		}
		ln.Close()
		if srv != nil {
			srv.Close()
		}
		fmt.Fprintln(s.Err, crash.Message)
		return cmdutil.Exit(crash.ExitCode)
	}
	ln.Close()
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		srv.Shutdown(sctx) // hijacked WebSockets are closed by their handlers
		cancel()
	}
	<-runnerDone
	d.closeDoors()
	d.mu.Lock()
	d.persist()
	d.mu.Unlock()
	return nil
}
