package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/cmd/approve"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleetapproval"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/natstest"
)

// Three workers (capacity 1 each) share a budget of 9 turns a day in a bucket, and run more
// tasks than fit. Each task has five turns, and each turn's step waits for its prompt to be
// allowed (the pool's fr-approve allows it); the daemon drops interrupts, so what stops a task
// is the worker alone: it counts a turn as the turn's agent_starting arrives, before it reads
// the turn's prompt, and once the bucket's total is past the limit it refuses that prompt
// itself. So however slow the machine, the day's total ends within 9 + 3 (each worker's one
// task may have started the turn that went past), every task taken once the total is at 9 is
// failed without reaching a daemon, and fr-dispatch run exits 6.
func TestFleetBudgetHoldsAcrossWorkers(t *testing.T) {
	const limit, workers, tasks = 9, 3, 15
	srv := natstest.Start(t)
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte("version: 1\nrules:\n  - {name: step, decision: allow, shell: {commands: [make step]}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startApprover(t, srv.URL(), "bud", pol, dir)

	var ws []*workerT
	var ds []*daemonT
	for i, name := range []string{"h1", "h2", "h3"}[:workers] {
		d := startDaemon(t, "d"+name, "turns.yaml", "0")
		ds = append(ds, d)
		// the bucket on the worker's own connection, or (the last worker) on one of its own
		bucket := "fleetbudget"
		if i == workers-1 {
			bucket = srv.URL() + "/fleetbudget"
		}
		ws = append(ws, startWorker(t, name, srv.URL(), d, "--pool", "bud", "--approvers",
			"--approval-timeout", testkit.Bound(20*time.Second).String(), "--approval-deadline", testkit.Bound(40*time.Second).String(),
			"--max-turns", "9", "--per", "day", "--budget-kv", bucket))
	}
	r := frDispatch(t, strings.Repeat("five turns\n", tasks), "--nats", srv.URL(), "--pool", "bud", "run", "--parallel", "15")
	must(t, r, cmdutil.ExitLimit)
	for _, w := range ws {
		w.stop() // every task's run is closed in the bucket
	}

	notRun, stopped, succeeded := 0, 0, 0
	scope := "in " + srv.URL() + "/fleetbudget"
	for _, l := range lines(t, r.stdout) {
		msg, _ := l["errorMessage"].(string)
		switch {
		case l["succeeded"] == true:
			succeeded++
			if l["limit"] != nil {
				t.Errorf("a task that succeeded names a limit: %v", l)
			}
		case strings.Contains(msg, "not handed to the daemon"):
			notRun++
			if l["limit"] != "--max-turns" || !strings.HasPrefix(msg, "stopped by --max-turns 9: ") || !strings.Contains(msg, scope) {
				t.Errorf("a task not run for the limit: want limit --max-turns and the breach naming the bucket (%s): %v", scope, l)
			}
		case msg == "step denied":
			stopped++
			if l["limit"] != "--max-turns" {
				t.Errorf("a task whose prompt the worker denied for the limit does not name it: %v", l)
			}
		default:
			t.Errorf("a task that failed otherwise: %v", l)
		}
	}
	if notRun+stopped+succeeded != tasks {
		t.Fatalf("%d results (%d not run, %d stopped, %d succeeded), want %d:\n%s", notRun+stopped+succeeded, notRun, stopped, succeeded, tasks, r.stdout)
	}
	if notRun == 0 || stopped == 0 {
		t.Errorf("%d tasks not run and %d stopped by the limit: want some of each:\n%s", notRun, stopped, r.stdout)
	}
	sent := 0
	for _, d := range ds {
		sent += d.dispatched(t)
	}
	if sent != tasks-notRun {
		t.Errorf("the daemons were sent %d tasks, want %d (%d of %d were failed by the limit before reaching one)", sent, tasks-notRun, notRun, tasks)
	}

	turns := bucketTurns(t, srv.URL(), "fleetbudget")
	if turns < limit || turns > limit+workers {
		t.Errorf("the bucket's day total is %d turns, want %d to %d (the limit, plus at most one turn of each worker's task)", turns, limit, limit+workers)
	}
	// each turn past the limit had its prompt refused by the worker, on the audit stream
	t.Logf("%d turns in the bucket; %d tasks succeeded, %d stopped, %d not run", turns, succeeded, stopped, notRun)
	refused := auditLimitRefusals(t, srv.URL())
	if refused != stopped {
		t.Errorf("%d refusals decided by limit on the audit stream, want one per task stopped (%d)", refused, stopped)
	}
	if !strings.Contains(ws[0].stderr.String()+ws[1].stderr.String()+ws[2].stderr.String(), "decided by limit") {
		t.Errorf("no worker said it denied a prompt for the limit")
	}
}

// startApprover runs fr-approve --nats for pool with the policy, until the test ends.
func startApprover(t *testing.T, url, pool, policy, root string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var errb testkit.SyncBuffer
	done := make(chan int, 1)
	go func() {
		s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb, Getenv: func(string) string { return "" }}
		done <- approve.Run(ctx, s, []string{"fr-approve", "--nats", url, "--pool", pool, "--policy", policy, "--root", root,
			"--audit", filepath.Join(root, "audit-"+pool+".jsonl"), "--approver-id", "a-" + pool, "--verbose"})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-testkit.After(30 * time.Second):
			t.Error("fr-approve did not stop")
		}
	})
	if !testkit.Until(30*time.Second, func() bool { return strings.Contains(errb.String(), "answering the prompts of pool "+pool) }) {
		t.Fatalf("fr-approve is not serving the pool: %s", errb.String())
	}
}

// bucketTurns is the turns of every day in a budget bucket.
func bucketTurns(t *testing.T, url, name string) int64 {
	t.Helper()
	ctx := testkit.Context(t, 30*time.Second)
	_, js := client(t, url)
	kv, err := js.KeyValue(ctx, name)
	if err != nil {
		t.Fatalf("the budget bucket %s: %v", name, err)
	}
	keys, err := kv.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, k := range keys {
		if !strings.HasPrefix(k, "day.") {
			continue
		}
		e, err := kv.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Turns int64 `json:"turns"`
		}
		if err := json.Unmarshal(e.Value(), &v); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		n += v.Turns
	}
	return n
}

// auditLimitRefusals counts the audit stream's records of prompts a worker refused for a limit.
func auditLimitRefusals(t *testing.T, url string) int {
	t.Helper()
	ctx := testkit.Context(t, 30*time.Second)
	_, js := client(t, url)
	s, err := js.Stream(ctx, fleetapproval.DefaultAuditStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.OrderedConsumer(ctx, fleetapproval.DefaultAuditStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := uint64(0); i < info.State.Msgs; i++ {
		m, err := cons.Next(jetstream.FetchMaxWait(testkit.Bound(10 * time.Second)))
		if errors.Is(err, jetstream.ErrNoMessages) || errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Decider, Outcome, Decision string
		}
		json.Unmarshal(m.Data(), &rec)
		if rec.Decider == "limit" {
			n++
			if rec.Outcome != "refused" || rec.Decision != "deny" {
				t.Errorf("an audit record decided by limit: %s", m.Data())
			}
		}
	}
	return n
}

// Without --budget-kv the limits hold for one worker process: with --max-turns 2 and tasks of
// one turn each, run one at a time, the first two run and the others fail naming the limit,
// never reaching the daemon; fr-dispatch run exits 6.
func TestWorkerLimitWithoutBucket(t *testing.T) {
	srv := natstest.Start(t)
	d := startDaemon(t, "d1", "quick.yaml", "0")
	w := startWorker(t, "solo", srv.URL(), d, "--pool", "lim", "--max-turns", "2")
	r := frDispatch(t, "task 1\ntask 2\ntask 3\ntask 4\n", "--nats", srv.URL(), "--pool", "lim", "run", "--parallel", "4")
	must(t, r, cmdutil.ExitLimit)
	ok, limited := 0, 0
	for _, l := range lines(t, r.stdout) {
		switch {
		case l["succeeded"] == true:
			ok++
		case l["limit"] == "--max-turns" && l["errorMessage"] == "stopped by --max-turns 2: 2 turns done, no more may start: not handed to the daemon":
			limited++
		default:
			t.Errorf("a task neither run nor stopped by the limit: %v", l)
		}
	}
	if ok != 2 || limited != 2 {
		t.Errorf("%d tasks succeeded and %d were stopped by the limit, want 2 and 2:\n%s", ok, limited, r.stdout)
	}
	if n := d.dispatched(t); n != 2 {
		t.Errorf("the daemon was sent %d tasks, want 2", n)
	}
	if !strings.Contains(w.stderr.String(), "stopped by --max-turns 2") {
		t.Errorf("the worker did not say why it failed a task: %s", w.stderr)
	}
	// fr-attach --nats shows the limit on the task's result event too, and --exit-on-result
	// exits 6 for it, as fr-dispatch does (and 0 for a task that succeeded)
	for _, l := range lines(t, r.stdout) {
		a := frAttach(t, "--nats", srv.URL(), "--task", l["taskId"].(string), "--from-start", "--exit-on-result")
		ev := lines(t, a.stdout)
		if l["limit"] == nil {
			if a.code != 0 {
				t.Errorf("fr-attach --nats --exit-on-result on a task that succeeded: exit %d, want 0; stderr %s", a.code, a.stderr)
			}
			continue
		}
		if len(ev) == 0 || ev[len(ev)-1]["type"] != "result" || ev[len(ev)-1]["limit"] != "--max-turns" {
			t.Errorf("the result event of a task the limit stopped, as fr-attach --nats prints it, does not name the limit: %s", a.stdout)
		}
		if a.code != cmdutil.ExitLimit || !strings.Contains(a.stderr, "stopped by --max-turns 2") {
			t.Errorf("fr-attach --nats --exit-on-result on a task the limit stopped: exit %d, want 6; stderr %s", a.code, a.stderr)
		}
	}
}

// A task whose turn goes past the limit on a worker without --approvers: its prompt is denied
// by the worker for the limit (not by the missing approver), the daemon drops the interrupt,
// and the task's failed result names the limit: exit 6.
func TestWorkerDeniesPromptsPastTheLimit(t *testing.T) {
	srv := natstest.Start(t)
	d := startDaemon(t, "d1", "quick.yaml", "0")
	w := startWorker(t, "solo", srv.URL(), d, "--pool", "lim", "--max-turns", "1")
	r := frDispatch(t, "two turns\n", "--nats", srv.URL(), "--pool", "lim", "run")
	must(t, r, cmdutil.ExitLimit)
	l := lines(t, r.stdout)
	if len(l) != 1 || l[0]["errorMessage"] != "deploy denied" || l[0]["limit"] != "--max-turns" {
		t.Errorf("want the task failed by the denial, naming the limit: %s", r.stdout)
	}
	errs := w.stderr.String()
	if !strings.Contains(errs, "stopped by --max-turns 1: turn 2 started: interrupting it") || !strings.Contains(errs, "approval_request denied (decided by limit)") {
		t.Errorf("the worker did not say it interrupted the task and denied its prompt for the limit: %s", errs)
	}
	if strings.Contains(errs, "no approver is configured") {
		t.Errorf("the prompt of a task past the limit went to the approver: %s", errs)
	}
}

// An interrupt cancels a turn at most: a task that goes on past the limit (its daemon drops
// the interrupt) is interrupted again as each later turn starts, and its result names the limit.
func TestWorkerInterruptsEachTurnPastTheLimit(t *testing.T) {
	srv := natstest.Start(t)
	d := startDaemon(t, "d1", "quick.yaml", "0")
	startWorker(t, "solo", srv.URL(), d, "--pool", "lim", "--max-turns", "1")
	r := frDispatch(t, "three turns\n", "--nats", srv.URL(), "--pool", "lim", "run")
	must(t, r, cmdutil.ExitLimit)
	if l := lines(t, r.stdout); len(l) != 1 || l[0]["limit"] != "--max-turns" {
		t.Errorf("want the task's result naming the limit: %s", r.stdout)
	}
	testkit.WaitUntil(t, 30*time.Second, "an interrupt for each of the two turns past the limit", func() bool {
		b, _ := os.ReadFile(d.record)
		return bytes.Count(b, []byte(`"interrupt"`)) == 2
	})
}

// --max-duration runs out while a task runs (its daemon would take 10 minutes): the worker
// interrupts it then, not at its next event, and its result names the limit. The budget file
// holds the time of the task's run alone, so the limit runs out while the task runs.
func TestWorkerInterruptsATaskWhenItsTimeRunsOut(t *testing.T) {
	srv := natstest.Start(t)
	d := startDaemon(t, "d1", "stuck.yaml", "1")
	file := filepath.Join(t.TempDir(), "budget.json")
	startWorker(t, "solo", srv.URL(), d, "--pool", "lim", "--max-duration", "3s", "--budget-file", file)
	r := frDispatch(t, "wait long\n", "--nats", srv.URL(), "--pool", "lim", "run")
	must(t, r, cmdutil.ExitLimit)
	if l := lines(t, r.stdout); len(l) != 1 || l[0]["limit"] != "--max-duration" || l[0]["errorMessage"] != "The task was cancelled." {
		t.Errorf("want the task cancelled by the interrupt, naming the limit: %s", r.stdout)
	}
	if b, _ := os.ReadFile(d.record); !bytes.Contains(b, []byte(`"interrupt"`)) {
		t.Errorf("the daemon got no interrupt: %s", b)
	}
}
