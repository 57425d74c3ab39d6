package dispatch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleet"
)

const fleetHelp = `THE FLEET
   With --nats URL (or $FR_NATS_URL, when --url is not given) the tasks go to a fleet instead: they are published to the
   work queue of --pool NAME (default "default") on NATS JetStream, where fr-worker processes
   beside many daemons take them. Each task gets a task id, random unless --id KEY names it
   (KEY-1, KEY-2, ... for several tasks): publishing a task id again within JetStream's
   duplicate window (1h), or while the fleet keeps its record (7 days), runs it once. task prints
   {"taskId","status":"queued","task","pool",...} per task; status, result and wait take task ids
   and print the task's record, to which the daemon's sessionId, succeeded, errorMessage,
   lastAgent and lastMessage are added once it has its result, with the host that ran it. wait
   and run print one line per task in the order they finish and exit 0 only when all
   succeeded, as against one daemon; --parallel N bounds the tasks of a run in the fleet at
   once. Results are kept 7 days, so a later CI step can collect them. See docs/fleet.md.`

// fleetFlags are the app's flags for the fleet.
func fleetFlags() []cli.Flag {
	return append(fleet.Flags(),
		&cli.StringFlag{Name: "pool", Value: fleet.DefaultPool, Usage: "with --nats: the pool `NAME` whose workers run the tasks"})
}

var idFlag = &cli.StringFlag{Name: "id", Usage: "with --nats: the task id `KEY` (several tasks: KEY-1, KEY-2, ...), so that a retried publish runs once"}

// fleetOptions are the fleet's part of a subcommand's command line.
type fleetOptions struct {
	conn fleet.Conn
	pool string
	id   string // --id: the task id KEY
}

// fleetOptionsFrom reads the fleet's flags.
func fleetOptionsFrom(c *cli.Context, cn fleet.Conn) (*fleetOptions, error) {
	f := &fleetOptions{conn: cn, pool: c.String("pool"), id: c.String("id")}
	if err := fleet.CheckName("--pool", f.pool); err != nil {
		return nil, cmdutil.Usagef("%v", err)
	}
	if f.id != "" {
		if err := fleet.CheckName("--id", f.id); err != nil {
			return nil, cmdutil.Usagef("%v", err)
		}
	}
	return f, nil
}

// runFleet runs a subcommand against the fleet.
func runFleet(ctx context.Context, s cmdutil.Streams, o *options) error {
	args := o.args
	if o.objective != "" {
		return cmdutil.Usagef("--objective is for one daemon's dispatch_task; the fleet has no objectives")
	}
	switch o.name {
	case "status", "result", "wait":
		if len(args) == 0 {
			return cmdutil.WithHint(cmdutil.Usagef("%s needs at least one task id", o.name),
				"see 'fr-dispatch "+o.name+" --help'")
		}
	case "task", "run":
		var err error
		if args, err = tasks(s.In, args); err != nil {
			return err
		}
	}
	cn := o.fleet.conn
	cn.Name = prog
	cl, err := fleet.Dial(ctx, cn, nats.MaxReconnects(-1))
	if err != nil {
		return err
	}
	defer cl.Close()
	setup, cancel := context.WithTimeout(ctx, o.requestTimeout)
	defer cancel()
	if err := cl.Setup(setup); err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "the fleet on %s: %v", cn, err)
	}
	kv, err := cl.Bucket(setup)
	if err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "%v", err)
	}
	f := &fleetRun{s: s, o: o, cl: cl, kv: kv, pool: o.fleet.pool, id: o.fleet.id}
	switch o.name {
	case "task":
		return f.task(ctx, args)
	case "status", "result":
		return f.lookup(ctx, args, o.name == "result")
	case "wait":
		return f.wait(ctx, args)
	case "run":
		return f.run(ctx, args)
	}
	return nil
}

type fleetRun struct {
	s    cmdutil.Streams
	o    *options
	cl   *fleet.Client
	kv   jetstream.KeyValue
	pool string
	id   string
}

// taskID is the id of the i-th (from 0) of n tasks.
func (f *fleetRun) taskID(i, n int) string {
	switch {
	case f.id == "":
		return fleet.NewTaskID()
	case n == 1:
		return f.id
	}
	return f.id + "-" + strconv.Itoa(i+1)
}

func (f *fleetRun) publish(ctx context.Context, id, text string) (fleet.Record, error) {
	c, cancel := context.WithTimeout(ctx, f.o.requestTimeout)
	defer cancel()
	r, err := f.cl.Publish(c, f.kv, fleet.Task{TaskID: id, Task: text, Pool: f.pool})
	if err != nil {
		if errors.Is(err, nats.ErrMaxPayload) {
			return r, cmdutil.Errorf(cmdutil.ExitUsage, "task %s is larger than the NATS server takes (%d bytes)", id, f.cl.NC.MaxPayload())
		}
		return r, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUnavailable, "publishing task %s: %v", id, err),
			"publish it again with the same --id: it runs once")
	}
	return r, nil
}

func (f *fleetRun) task(ctx context.Context, texts []string) error {
	for i, t := range texts {
		r, err := f.publish(ctx, f.taskID(i, len(texts)), t)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(f.s.Out, "%s\n", r.Line()); err != nil {
			return err
		}
	}
	return nil
}

func (f *fleetRun) get(ctx context.Context, id string) (fleet.Record, error) {
	c, cancel := context.WithTimeout(ctx, f.o.requestTimeout)
	defer cancel()
	r, _, ok, err := fleet.Lookup(c, f.kv, id)
	if err != nil {
		return r, cmdutil.Errorf(cmdutil.ExitUnavailable, "looking up task %s: %v", id, err)
	}
	if !ok {
		return fleet.UnknownRecord(id), nil
	}
	return r, nil
}

func (f *fleetRun) lookup(ctx context.Context, ids []string, result bool) error {
	var failed []string
	for _, id := range ids {
		r, err := f.get(ctx, id)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(f.s.Out, "%s\n", r.Line()); err != nil {
			return err
		}
		if r.Status == fleet.StatusUnknown || (result && fleet.Final(r.Status) && !r.OK()) {
			failed = append(failed, id+": "+r.Why())
		}
	}
	return failures(f.s, failed, len(ids))
}

func (f *fleetRun) outcome(r fleet.Record, text string, took time.Duration) outcome {
	line := r.Line()
	st, _ := decodeState(line)
	return outcome{id: r.TaskID, text: text, line: line, st: st, took: took}
}

func (f *fleetRun) wait(ctx context.Context, ids []string) error {
	wctx, cancel := withTimeout(ctx, f.o)
	defer cancel()
	p := &printer{s: f.s, terminal: f.o.terminal}
	col, err := fleet.NewCollector(wctx, f.kv)
	if err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "watching the results: %v", err)
	}
	start := time.Now()
	pending := map[string]bool{}
	for _, id := range ids {
		r, err := f.get(wctx, id)
		if err != nil {
			return err
		}
		if r.Status == fleet.StatusUnknown {
			p.print(f.outcome(r, "", 0))
			continue
		}
		if !pending[id] {
			pending[id] = true
			col.Add(wctx, id)
		}
	}
	f.collect(ctx, wctx, col, pending, p, start, nil)
	if err := interrupted(ctx, keys(pending)); err != nil {
		return err
	}
	return p.done()
}

// collect prints results until every pending task has one or wctx ends; then each task still
// pending is reported as not finished in time. done, when set, is told of each result.
func (f *fleetRun) collect(ctx, wctx context.Context, col *fleet.Collector, pending map[string]bool, p *printer, start time.Time, done func(fleet.Record)) {
	for len(pending) > 0 {
		select {
		case r := <-col.Results():
			if !pending[r.TaskID] {
				continue
			}
			delete(pending, r.TaskID)
			p.print(f.outcome(r, "", time.Since(start)))
			if done != nil {
				done(r)
			}
		case <-wctx.Done():
			if ctx.Err() != nil {
				return
			}
			for id := range pending {
				p.print(outcome{id: id, err: wctx.Err(), took: time.Since(start)})
			}
			return
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func (f *fleetRun) run(ctx context.Context, texts []string) error {
	wctx, cancel := withTimeout(ctx, f.o)
	defer cancel()
	p := &printer{s: f.s, terminal: f.o.terminal}
	col, err := fleet.NewCollector(wctx, f.kv)
	if err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "watching the results: %v", err)
	}
	start := time.Now()
	var mu sync.Mutex
	seen := map[string]bool{}
	var all []string
	slots := make(chan struct{}, f.o.parallel)
	var pubErr error
	go func() {
		for i, t := range texts {
			select {
			case slots <- struct{}{}:
			case <-wctx.Done():
				return
			}
			id := f.taskID(i, len(texts))
			if _, err := f.publish(wctx, id, t); err != nil {
				mu.Lock()
				pubErr = err
				mu.Unlock()
				cancel()
				return
			}
			mu.Lock()
			all = append(all, id)
			mu.Unlock()
			col.Add(wctx, id)
		}
	}()
	got := 0
	for got < len(texts) {
		select {
		case r := <-col.Results():
			got++
			seen[r.TaskID] = true
			p.print(f.outcome(r, r.Task, time.Since(start)))
			<-slots
		case <-wctx.Done():
			mu.Lock()
			if pubErr != nil {
				mu.Unlock()
				return pubErr
			}
			ids := append([]string(nil), all...)
			mu.Unlock()
			if ctx.Err() != nil {
				return interrupted(ctx, ids)
			}
			for _, id := range ids {
				if !seen[id] {
					p.print(outcome{id: id, err: wctx.Err(), took: time.Since(start)})
				}
			}
			got = len(texts)
		}
	}
	return p.done()
}

// natsAsked says whether the command line asks for the fleet.
func natsAsked(c *cli.Context, s cmdutil.Streams) (fleet.Conn, bool, error) {
	if !c.IsSet("nats") && c.String("url") != "" {
		return fleet.Conn{}, false, nil // --url names one daemon, whatever $FR_NATS_URL says
	}
	cn, err := fleet.ConnFrom(c, s.Env)
	if err != nil {
		return cn, false, err
	}
	return cn, cn.URL != "", nil
}
