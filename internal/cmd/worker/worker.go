// Package worker implements fr-worker: it runs beside one fuseraft serve daemon, takes tasks
// of a pool from the fleet's work queue on NATS JetStream, hands each to the daemon, publishes
// every event of the task and its one result, and acknowledges the task only once its result
// is stored. See docs/fleet.md.
package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/internal/fleet/embedded"
	"github.com/fuseraft/fr/pkg/wire"
)

const prog = "fr-worker"

const description = `fr-worker runs beside one 'fuseraft serve' (or fr-sim serve) and makes it part of a fleet: it
takes tasks of its pool (--pool, default "default") from the work queue on a NATS JetStream
server (--nats URL or $FR_NATS_URL), at most --capacity at a time, and hands each to its
daemon (--socket PATH or --url ws://HOST:PORT/attach). Every event of a task is published,
unchanged, to the task's subject, tagged with the host, the pool and the task id; its result
is stored as the task's one result, and only then is the task acknowledged. fr-dispatch
--nats publishes tasks and collects results; fr-attach --nats prints the events.

   fr-worker --embedded-nats --socket /tmp/d1.sock     # one machine: a server inside the worker
   fr-worker --nats nats://nats.internal:4222 --url ws://127.0.0.1:8787/attach --pool ci

THE WORK QUEUE
   A task is delivered to one worker at a time. While the daemon runs it the worker tells
   JetStream it is still working on it, so a task is taken from a worker only when the worker
   is gone (killed, its host down, its NATS connection lost): after --ack-wait (30s) without a
   word it is delivered to another worker. A task delivered --max-deliver (5) times without a
   result ends with a failed result that says so. Whoever publishes a result first wins; a
   task run twice (a worker that came back after its task was given away) keeps its first
   result, and the second is dropped with a line on stderr.

THE DAEMON
   Over the WebSocket each of the --capacity connections has a client id of its own, so a
   task survives a dropped connection: the daemon hands back the task in flight, asks again a
   prompt that was pending and delivers a result that came meanwhile. The Unix socket carries
   no client id: a connection dropped there loses track of the task, which is handed back to
   the queue (and may run again elsewhere). While the daemon cannot be reached the worker takes
   no task; one it holds is handed back after --hand-back-after (60s) without a connection.

PROGRESS EVENTS
   The daemon broadcasts agent_starting, tool_calling and token_budget_warning (and
   auto_dispatched, a2a_call) to every client, without a session id. They are published with a
   task's events only while that task is the worker's one task in flight on the daemon; the
   rest go to the daemon's own subject, tagged with the host and the daemon. With --capacity 1
   (the default) and no other client sending tasks to the daemon, every one is attributed.

PROMPTS
   Each approval_request and question of a task is answered by the worker's approver. With
   --approvers, each goes to the pool's approvers over NATS (fr-approve --nats URL --pool NAME
   --policy FILE, any number of them in a queue group): a prompt no approver answers within
   --approval-timeout (10s) is sent again, and one still unanswered after --approval-deadline
   (60s) is denied, decided by "timeout"; the first answer wins, and the outcome goes to the
   audit stream FR_AUDIT (docs/fleet-approvals.md). Without --approvers every prompt is denied
   (a question skipped) and the worker says so once on stderr: the fleet fails closed.

LIMITS
   --max-turns N, --max-tokens N, --max-duration D and --max-cost USD (with --prices FILE) are
   fr-stream's. With --budget-kv BUCKET (a bucket on the worker's NATS server, or
   nats://HOST:PORT/BUCKET) or --budget-file FILE they hold for the totals of every worker that
   shares it, per --per day|week (local time): fleet-wide. Without either they hold for this
   worker process alone, from its start. A task is a run: one taken once a limit is reached is
   not handed to the daemon, and ends with a failed result whose errorMessage is the breach
   ("stopped by --max-turns 50: 50 turns done, no more may start today (...) in
   nats://.../BUCKET: not handed to the daemon") and whose "limit" names the flag; fr-dispatch
   wait and run exit 6 for it. A turn is an agent_starting of the task (so --max-turns needs
   --capacity 1), counted as it arrives, before the task's next prompt is answered: a task
   whose turn goes past the limit is sent an interrupt (again as each later turn starts), and
   every later prompt of it is denied by the worker itself, decided by "limit" (on the audit
   stream with --approvers); its result names the limit too. The whole fleet goes past a turn
   limit by at most one turn per task running, when each turn waits on a prompt; the daemon
   need not act on the interrupt (an interrupt cancels a turn at most), so a task that asks
   nothing may go on. Protocol v1's daemon events carry no token counts: --max-tokens and
   --max-cost count only what an event reports, and the worker says so on stderr.
   --max-duration is checked as a task starts, and when it runs out while a task runs (which is
   then interrupted): with a bucket or file it holds the tasks' time, else this worker's.

STOPPING
   SIGTERM or SIGINT drains: no new task is taken, the running ones may finish within
   --drain-timeout (2m), then those still running are handed back to the queue; a second
   signal hands them back at once. With --embedded-nats the server stops with the worker: stop
   it last.

EMBEDDED SERVER
   --embedded-nats [ADDR] runs a NATS server with JetStream in the worker's process, on ADDR
   (default 127.0.0.1:4222; port 0 picks a free one), its file store under --nats-store DIR
   (default $XDG_STATE_HOME/fr/nats, else ~/.local/state/fr/nats). Its URL goes to stderr and
   to --ready-file; other workers, fr-dispatch and fr-attach join it with --nats URL. Pointing
   --nats at a NATS cluster instead is the only change for a fleet across hosts.

SECURITY
   NATS credentials come from files only: --nats-creds, --nats-nkey, --nats-user with
   --nats-password-file, --nats-ca for TLS; a URL with a password in --nats is refused
   ($FR_NATS_URL may carry one). The daemon's token comes from --token-file or
   $FUSERAFT_SERVE_TOKEN.

ENVIRONMENT
   FR_NATS_URL            the NATS server, when --nats is not given
   FUSERAFT_SERVE_TOKEN   the daemon's bearer token (--token-file wins)

EXAMPLES
   # three daemons on one machine, one worker each, the first with the server
   fr-worker --embedded-nats 127.0.0.1:4222 --socket /tmp/d1.sock --ready-file nats.json &
   fr-worker --nats nats://127.0.0.1:4222 --socket /tmp/d2.sock &
   fr-worker --nats nats://127.0.0.1:4222 --socket /tmp/d3.sock &
   printf 'task %s\n' $(seq 30) | fr-dispatch --nats nats://127.0.0.1:4222 run`

// options are fr-worker's flags, read once.
type options struct {
	conn         fleet.Conn
	pool, host   string
	capacity     int
	ackWait      time.Duration
	maxDeliver   int
	drainTimeout time.Duration
	handBack     time.Duration
	daemon       wire.Daemon
	embedded     string // address, "" for none
	store        string
	readyFile    string

	approver fleet.Approver
	budget   fleet.Budget
	plan     *budget.Plan // the limit flags; nil: none

	approvers        bool          // --approvers: prompts go to fr-approve --nats
	approvalTimeout  time.Duration // per try
	approvalDeadline time.Duration // in all
}

// App returns fr-worker's command line.
func App(s cmdutil.Streams) *cli.App {
	app := cmdutil.NewApp(s, prog, "run a fuseraft serve daemon's share of a fleet's tasks from NATS JetStream")
	app.UsageText = "fr-worker (--nats URL | --embedded-nats [ADDR]) (--socket PATH | --url ws://HOST:PORT/attach) [--pool NAME] [--capacity K] [options]"
	app.Description = description
	app.Flags = append(fleet.Flags(),
		&cli.StringFlag{Name: "pool", Value: fleet.DefaultPool, Usage: "take the tasks of pool `NAME` (1-64 of A-Z a-z 0-9 - _)"},
		&cli.StringFlag{Name: "host", Usage: "tag events and results with `NAME` (default: the machine's host name)"},
		&cli.StringFlag{Name: "socket", Usage: "the daemon's Unix socket `PATH`"},
		&cli.StringFlag{Name: "url", Usage: "the daemon's WebSocket `URL` (ws://HOST:PORT/attach or wss://...)"},
		&cli.StringFlag{Name: "token-file", Usage: "read the daemon's bearer token from `FILE` (else FUSERAFT_SERVE_TOKEN)"},
		&cli.StringFlag{Name: "ca-cert", Usage: "trust the PEM certificates in `FILE` for the daemon's wss://"},
		&cli.IntFlag{Name: "capacity", Value: 1, Usage: "take at most `K` tasks at a time"},
		&cli.BoolFlag{Name: "approvers", Usage: "send each prompt to the pool's approvers over NATS (fr-approve --nats) instead of denying it"},
		&cli.DurationFlag{Name: "approval-timeout", Value: 10 * time.Second, Usage: "with --approvers: send a prompt again when no approver answered it within `DUR`"},
		&cli.DurationFlag{Name: "approval-deadline", Value: time.Minute, Usage: "with --approvers: deny a prompt no approver answered within `DUR`"},
		&cli.DurationFlag{Name: "ack-wait", Value: 30 * time.Second, Usage: "give a task to another worker after `DUR` without a word from this one"},
		&cli.IntFlag{Name: "max-deliver", Value: 5, Usage: "fail a task delivered `N` times without a result"},
		&cli.DurationFlag{Name: "drain-timeout", Value: 2 * time.Minute, Usage: "on SIGTERM, let running tasks finish for `DUR`, then hand them back"},
		&cli.DurationFlag{Name: "hand-back-after", Value: time.Minute, Usage: "hand a task back once the daemon has been unreachable for `DUR`"},
		&cli.StringFlag{Name: "embedded-nats", Usage: "run a NATS server with JetStream in this process on `ADDR` (default " + embedded.DefaultAddr + ")"},
		&cli.StringFlag{Name: "nats-store", Usage: "keep the embedded server's store in `DIR`"},
		&cli.StringFlag{Name: "ready-file", Usage: "write {\"url\",\"pid\"} to `FILE` once taking tasks"},
	)
	app.Flags = append(app.Flags, budget.SessionFlags()...)
	app.Action = func(c *cli.Context) error {
		if c.NArg() > 0 {
			return cmdutil.Usagef("unexpected argument %q", c.Args().First())
		}
		o, err := optionsFrom(c, s)
		if err != nil {
			return err
		}
		return run(c.Context, s, o)
	}
	return cmdutil.Finish(cmdutil.DeclareExitCodes(app, exitCodes))
}

// Run runs fr-worker with args (args[0] is the program name) and returns its exit code.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	ctx, stop := cmdutil.Interruptible(ctx)
	defer stop()
	return cmdutil.RunApp(ctx, App(s), s, embeddedDefault(args))
}

// embeddedDefault gives a lone --embedded-nats (the last argument, or one followed by
// another flag) its default address, so that the address is optional.
func embeddedDefault(args []string) []string {
	out := make([]string, 0, len(args)+1)
	for i, a := range args {
		out = append(out, a)
		if a == "--embedded-nats" || a == "-embedded-nats" {
			if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
				out = append(out, embedded.DefaultAddr)
			}
		}
	}
	return out
}

func optionsFrom(c *cli.Context, s cmdutil.Streams) (*options, error) {
	o := &options{
		pool:         c.String("pool"),
		host:         c.String("host"),
		capacity:     c.Int("capacity"),
		ackWait:      c.Duration("ack-wait"),
		maxDeliver:   c.Int("max-deliver"),
		drainTimeout: c.Duration("drain-timeout"),
		handBack:     c.Duration("hand-back-after"),
		embedded:     c.String("embedded-nats"),
		store:        c.String("nats-store"),
		readyFile:    c.String("ready-file"),

		approvers:        c.Bool("approvers"),
		approvalTimeout:  c.Duration("approval-timeout"),
		approvalDeadline: c.Duration("approval-deadline"),
	}
	if err := checkApprovals(o, c.IsSet("approval-timeout") || c.IsSet("approval-deadline")); err != nil {
		return nil, err
	}
	var err error
	if o.conn, err = fleet.ConnFrom(c, s.Env); err != nil {
		return nil, err
	}
	if err := fleet.CheckName("--pool", o.pool); err != nil {
		return nil, cmdutil.Usagef("%v", err)
	}
	if o.host, err = hostName(o.host); err != nil {
		return nil, err
	}
	if err := checkLimits(o); err != nil {
		return nil, err
	}
	if err := checkBudget(c, s, o); err != nil {
		return nil, err
	}
	if c.IsSet("nats-store") && o.embedded == "" {
		return nil, cmdutil.Usagef("--nats-store is for --embedded-nats")
	}
	if o.embedded != "" && o.store == "" {
		o.store = defaultStore(s.Env)
	}
	if o.embedded == "" && o.conn.URL == "" {
		return nil, cmdutil.WithHint(cmdutil.Usagef("no NATS server: pass --nats URL, set %s, or run one here with --embedded-nats", fleet.EnvURL),
			"see 'fr-worker --help'")
	}
	if o.daemon, err = daemonFrom(c.String("socket"), c.String("url"), c.String("ca-cert")); err != nil {
		return nil, err
	}
	if o.daemon.Token, err = cmdutil.BearerToken(c.String("token-file"), s.Env); err != nil {
		return nil, err
	}
	o.conn.Name = prog + " " + o.host + " " + o.pool
	return o, nil
}

// hostName is --host, or else this machine's name.
func hostName(host string) (string, error) {
	if host == "" {
		host, _ = os.Hostname()
		if host == "" {
			host = "localhost"
		}
	}
	if strings.ContainsAny(host, "\r\n") || len(host) > 255 {
		return "", cmdutil.Usagef("--host %q is not a host name", host)
	}
	return host, nil
}

// checkLimits refuses counts and durations out of their range.
func checkLimits(o *options) error {
	switch {
	case o.capacity < 1:
		return cmdutil.Usagef("--capacity must be at least 1, not %d", o.capacity)
	case o.ackWait < time.Second:
		return cmdutil.Usagef("--ack-wait must be at least 1s, not %s", o.ackWait)
	case o.maxDeliver < 1:
		return cmdutil.Usagef("--max-deliver must be at least 1, not %d", o.maxDeliver)
	case o.drainTimeout < 0 || o.handBack <= 0:
		return cmdutil.Usagef("--drain-timeout must not be negative, and --hand-back-after must be positive")
	}
	return nil
}

// daemonFrom is the daemon of --socket or --url, trusting --ca-cert for wss://: one of the
// two must be given, fr-worker runs beside one daemon.
func daemonFrom(socket, rawURL, caCert string) (wire.Daemon, error) {
	if socket == "" && rawURL == "" {
		return wire.Daemon{}, cmdutil.WithHint(cmdutil.Usagef("no daemon: pass --socket PATH or --url ws://HOST:PORT/attach"),
			"fr-worker runs beside one fuseraft serve (or fr-sim serve)")
	}
	return cmdutil.DaemonFrom(socket, rawURL, caCert)
}

// defaultStore is the embedded server's store when --nats-store is not given.
func defaultStore(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "fr", "nats")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "fr-nats")
	}
	return filepath.Join(home, ".local", "state", "fr", "nats")
}

// randomID is a random hex string, for client ids.
func randomID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeReady writes the ready file atomically.
func writeReady(path, natsURL string) error {
	b, _ := json.Marshal(map[string]any{"url": natsURL, "pid": os.Getpid()})
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
