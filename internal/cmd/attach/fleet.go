package attach

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/pkg/wire"
)

const fleetHelp = `THE FLEET
   With --nats URL (or $FR_NATS_URL) fr-attach prints the events of a fleet's tasks instead of
   one daemon's: every event of --pool NAME (default "default"), or with --task ID (repeatable)
   the events of those tasks, each line as the daemon sent it with the fleet's fields added
   after its own: taskId, host and pool (and daemon, for a progress event no single task could
   be named for; see docs/fleet.md). From now on, or from the first event the fleet keeps
   (24h) with --from-start. --exit-on-result with --task exits once each task has its result
   (one that finished before is printed at once): 0 if all succeeded, else 1. fr-filter,
   fr-report and the recipes read it as they read one daemon's events.

      fr-attach --nats nats://127.0.0.1:4222 --task "$id" --from-start --exit-on-result`

func fleetFlags() []cli.Flag {
	return append(fleet.Flags(),
		&cli.StringFlag{Name: "pool", Usage: "with --nats: the pool `NAME` whose events to print (default \"default\")"},
		&cli.BoolFlag{Name: "from-start", Usage: "with --nats: print from the first event the fleet keeps, not from now on"},
	)
}

// fleetAsked says whether the command line asks for the fleet: --nats, or $FR_NATS_URL when
// no daemon is named (--socket or --url name one, whatever $FR_NATS_URL says).
func fleetAsked(c *cli.Context, s cmdutil.Streams) (fleet.Conn, bool, error) {
	var cn fleet.Conn
	if c.IsSet("nats") || !(c.IsSet("socket") || c.IsSet("url")) {
		var err error
		if cn, err = fleet.ConnFrom(c, s.Env); err != nil {
			return cn, false, err
		}
	}
	if cn.URL == "" {
		if c.IsSet("pool") || c.IsSet("from-start") {
			return cn, false, cmdutil.Usagef("--pool and --from-start are for a fleet: pass --nats URL or set %s", fleet.EnvURL)
		}
		return cn, false, nil
	}
	return cn, true, nil
}

// fleetOptions are fr-attach --nats's command line.
type fleetOptions struct {
	conn   fleet.Conn
	follow fleet.Follow
}

// fleetOptionsFrom reads fr-attach --nats's flags.
func fleetOptionsFrom(c *cli.Context, cn fleet.Conn) (*fleetOptions, error) {
	if c.NArg() > 0 {
		return nil, cmdutil.Usagef("unexpected argument %q (a task is given with --task)", c.Args().First())
	}
	for _, f := range []string{"socket", "url", "input", "client-id"} {
		if c.IsSet(f) {
			return nil, cmdutil.Usagef("--%s is for one daemon; with --nats fr-attach prints the fleet's events", f)
		}
	}
	f := fleet.Follow{Pool: c.String("pool"), Tasks: c.StringSlice("task"), FromStart: c.Bool("from-start"), ExitOnResult: c.Bool("exit-on-result")}
	if f.Pool == "" && len(f.Tasks) == 0 {
		f.Pool = fleet.DefaultPool
	}
	if f.Pool != "" {
		if err := fleet.CheckName("--pool", f.Pool); err != nil {
			return nil, cmdutil.Usagef("%v", err)
		}
	}
	for _, id := range f.Tasks {
		if err := fleet.CheckName("--task", id); err != nil {
			return nil, cmdutil.WithHint(cmdutil.Usagef("%v", err), "with --nats, --task takes a task id that fr-dispatch --nats printed")
		}
	}
	if f.ExitOnResult && len(f.Tasks) == 0 {
		return nil, cmdutil.Usagef("with --nats, --exit-on-result needs --task ID")
	}
	cn.Name = prog
	return &fleetOptions{conn: cn, follow: f}, nil
}

// followFleet is fr-attach --nats.
func followFleet(ctx context.Context, s cmdutil.Streams, o *fleetOptions) error {
	cl, err := fleet.Dial(ctx, o.conn)
	if err != nil {
		return err
	}
	defer cl.Close()
	cmdutil.QuietOnClosedStdout(s)
	return fleet.FollowEvents(ctx, cl, o.follow, wire.NewWriter(s.Out))
}
