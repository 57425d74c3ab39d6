package budget

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/internal/prices"
)

// PerValues are the periods of --per.
var PerValues = []string{"day", "week"}

// LimitFlags are the --max-* flags of a command that holds a session to them.
func LimitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.Int64Flag{Name: "max-turns", Usage: "stop after `N` turns: the next turn is not started, or is interrupted (exit 6)", DefaultText: "none"},
		&cli.Int64Flag{Name: "max-tokens", Usage: "stop once more than `N` tokens (input + output, as fuseraft reports them) are used (exit 6)", DefaultText: "none"},
		&cli.DurationFlag{Name: "max-duration", Usage: "stop after `DURATION` (e.g. 30m) of wall-clock time (exit 6)", DefaultText: "none"},
		&cli.Float64Flag{Name: "max-cost", Usage: "stop once the tokens cost more than `USD` dollars, priced with --prices (exit 6)", DefaultText: "none"},
	}
}

// ReportFlags are the --max-* flags of a command that shows totals against them.
func ReportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.Int64Flag{Name: "max-turns", Usage: "show the turns against a limit of `N`", DefaultText: "none"},
		&cli.Int64Flag{Name: "max-tokens", Usage: "show the tokens (input + output) against a limit of `N`", DefaultText: "none"},
		&cli.DurationFlag{Name: "max-duration", Usage: "show the duration against a limit of `DURATION`", DefaultText: "none"},
		&cli.Float64Flag{Name: "max-cost", Usage: "show the cost (with --prices) against a limit of `USD` dollars", DefaultText: "none"},
	}
}

// SessionFlags are the flags of a command that holds a live session to limits: the --max-*
// flags, --prices, and the budget file.
func SessionFlags() []cli.Flag {
	return append(LimitFlags(),
		&cli.StringFlag{Name: "prices", Usage: "the price table `FILE` for --max-cost (YAML, as fr-report's)"},
		&cli.StringFlag{Name: "budget-file", Usage: "keep running totals in `FILE`, shared by every run that names it, and hold the --max-* limits to the totals of the --per period instead of to this run"},
		&cli.StringFlag{Name: "budget-kv", Usage: "as --budget-file, in the NATS key-value `BUCKET` (nats://HOST:PORT/BUCKET, or BUCKET on $FR_NATS_URL), shared by runs on every host"},
		cmdutil.Enum("per", PerValues, "day", "with --budget-file or --budget-kv, the `PERIOD` the limits are for: {values} (local time)"),
	)
}

// LimitsFrom reads the --max-* flags (and --prices, when the command has it).
func LimitsFrom(c *cli.Context) (Limits, error) {
	l := Limits{Turns: c.Int64("max-turns"), Tokens: c.Int64("max-tokens"),
		Duration: c.Duration("max-duration"), CostUSD: c.Float64("max-cost")}
	switch {
	case l.Turns < 0:
		return l, cmdutil.Usagef("--max-turns must not be negative")
	case l.Tokens < 0:
		return l, cmdutil.Usagef("--max-tokens must not be negative")
	case l.Duration < 0:
		return l, cmdutil.Usagef("--max-duration must not be negative")
	case l.CostUSD < 0:
		return l, cmdutil.Usagef("--max-cost must not be negative")
	}
	if name := c.String("prices"); name != "" {
		t, err := prices.Load(name)
		if err != nil {
			return l, cmdutil.Usagef("--prices: %v", err)
		}
		l.Prices = t
	}
	return l, nil
}

// FromFlags makes the Budget the session flags ask for, or nil when they ask for none.
func FromFlags(c *cli.Context, now func() time.Time) (*Budget, error) {
	p, err := PlanFrom(c, now)
	if err != nil || p == nil {
		return nil, err
	}
	st, err := p.Open(c.Context, nil, "")
	if err != nil {
		return nil, err
	}
	o := p.Options
	o.Store = st
	return New(p.Limits, o), nil
}

// Plan is what the session flags ask for, read and checked, before any store is opened: for
// a command that holds many runs to the same limits (fr-worker: one run per task).
type Plan struct {
	Limits  Limits
	Options Options // Now and Per; Store is opened by Open
	File    string  // --budget-file
	KV      string  // --budget-kv, as given
}

// PlanFrom reads the session flags; nil means they ask for nothing.
func PlanFrom(c *cli.Context, now func() time.Time) (*Plan, error) {
	l, err := LimitsFrom(c)
	if err != nil {
		return nil, err
	}
	if l.CostUSD > 0 && l.Prices == nil {
		return nil, cmdutil.WithHint(cmdutil.Usagef("--max-cost needs --prices FILE"), "the price table is YAML: models: {MODEL: {input: 3, output: 15}}; see 'fr-report --help'")
	}
	p := &Plan{Limits: l, Options: Options{Now: now, Per: c.String("per")}, File: c.String("budget-file"), KV: c.String("budget-kv")}
	switch {
	case p.File != "" && p.KV != "":
		return nil, cmdutil.Usagef("--budget-file and --budget-kv: keep the totals in one place")
	case p.File == "" && p.KV == "" && c.IsSet("per"):
		return nil, cmdutil.Usagef("--per needs --budget-file FILE or --budget-kv BUCKET")
	case !l.Any() && p.File == "" && p.KV == "":
		return nil, nil
	}
	return p, nil
}

// Open opens the store the plan names, or returns nil for none. A --budget-kv BUCKET with no
// server in it is a bucket on js (the command's own NATS connection, server its URL for
// messages) when js is not nil, else on $FR_NATS_URL; nats://HOST:PORT/BUCKET has a
// connection of its own. A server that cannot be reached is exit 10.
func (p *Plan) Open(ctx context.Context, js jetstream.JetStream, server string) (Store, error) {
	switch {
	case p.File != "":
		st, err := OpenStore(p.File)
		if err != nil {
			return nil, cmdutil.Usagef("--budget-file: %v", err)
		}
		return st, nil
	case p.KV == "":
		return nil, nil
	}
	if _, _, ok, err := fleet.SplitURL(p.KV); js == nil || ok || err != nil {
		return kvFromFlag(ctx, p.KV)
	}
	if !validBucket(p.KV) {
		return nil, cmdutil.Usagef("--budget-kv: %q is not a bucket name (letters, digits, - and _)", p.KV)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	octx, cancel := context.WithTimeout(ctx, kvTimeout)
	defer cancel()
	st, err := OpenKV(octx, js, p.KV, strings.TrimSuffix(server, "/")+"/"+p.KV)
	if err != nil {
		return nil, cmdutil.Errorf(cmdutil.ExitUnavailable, "--budget-kv: %v", err)
	}
	return st, nil
}

func validBucket(name string) bool { return name != "" && !strings.ContainsAny(name, "./*> ") }

// Err is the error a command stopped by the breach exits with (exit 6, cmdutil.ExitLimit):
// "stopped by --max-turns 2: turn 3 started", and ": what" after it when what is given.
func (b *Breach) Err(what string) error {
	msg := "stopped by " + b.String()
	if what != "" {
		msg += ": " + what
	}
	return cmdutil.Errorf(cmdutil.ExitLimit, "%s", msg)
}

// kvFromFlag opens the bucket --budget-kv names: nats://HOST:PORT/BUCKET, or BUCKET on the
// server of $FR_NATS_URL. A server that cannot be reached is exit 10.
func kvFromFlag(ctx context.Context, arg string) (*KVStore, error) {
	server, bucket, ok, err := fleet.SplitURL(arg)
	if err != nil {
		return nil, cmdutil.Usagef("--budget-kv %v", err)
	}
	if !ok {
		server, bucket = os.Getenv("FR_NATS_URL"), arg
		if server == "" {
			return nil, cmdutil.WithHint(cmdutil.Usagef("--budget-kv %s: no NATS server named", arg),
				"give it as nats://HOST:PORT/"+arg+", or set FR_NATS_URL")
		}
	}
	if !validBucket(bucket) {
		return nil, cmdutil.Usagef("--budget-kv: %q is not a bucket name (letters, digits, - and _)", bucket)
	}
	nc, err := fleet.Connect(ctx, server, "fr budget", "", "")
	if err != nil {
		return nil, cmdutil.Errorf(cmdutil.ExitUnavailable, "--budget-kv %s: %v", arg, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, cmdutil.Errorf(cmdutil.ExitUnavailable, "--budget-kv %s: %v", arg, err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	octx, cancel := context.WithTimeout(ctx, kvTimeout)
	defer cancel()
	st, err := OpenKV(octx, js, bucket, strings.TrimSuffix(server, "/")+"/"+bucket)
	if err != nil {
		nc.Close()
		return nil, cmdutil.Errorf(cmdutil.ExitUnavailable, "--budget-kv: %v", err)
	}
	st.OnClose(nc.Close)
	return st, nil
}
