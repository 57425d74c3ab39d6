package fleet_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/natstest"
)

// status is the record fr-dispatch status prints for id.
func status(t *testing.T, url, id string) map[string]any {
	t.Helper()
	r := frDispatch(t, "", "--nats", url, "status", id)
	l := lines(t, r.stdout)
	if len(l) != 1 {
		t.Fatalf("status %s: %+v", id, r)
	}
	return l[0]
}

// A worker killed with SIGKILL mid-task: the task is delivered to another worker after
// --ack-wait and finished there, with one result.
func TestKilledWorkerTaskFinishedByAnother(t *testing.T) {
	srv := natstest.Start(t)
	stuck := startDaemon(t, "stuck", "stuck.yaml", "1")
	cmd, stderr := startWorkerProc(t, "doomed", srv.URL(), stuck)
	r := frDispatch(t, "", "--nats", srv.URL(), "task", "--id", "kill-1", "fix the parser")
	must(t, r, 0)
	testkit.WaitUntil(t, 30*time.Second, "the task running on the doomed worker", func() bool {
		s := status(t, srv.URL(), "kill-1")
		return s["status"] == "running" && s["host"] == "doomed" && s["sessionId"] != nil
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	for i := 1; i <= 2; i++ {
		d := startDaemon(t, fmt.Sprintf("d%d", i), "quick.yaml", "0")
		startWorker(t, fmt.Sprintf("host%d", i), srv.URL(), d)
	}
	r = frDispatch(t, "", "--nats", srv.URL(), "wait", "kill-1")
	must(t, r, 0)
	got := lines(t, r.stdout)
	if len(got) != 1 || got[0]["status"] != "completed" || got[0]["host"] == "doomed" {
		t.Fatalf("result: %s (doomed worker said: %s)", r.stdout, stderr)
	}
	if d, _ := got[0]["deliveries"].(float64); d < 2 {
		t.Errorf("deliveries %v, want at least 2", got[0]["deliveries"])
	}
	_, js := client(t, srv.URL())
	if c := resultEvents(t, js)["kill-1"]; c != 1 {
		t.Errorf("%d result events, want 1", c)
	}
	// The task's events from its start: both runs, the second not taken for repeats of the
	// first, then the one result.
	r = frAttach(t, "--nats", srv.URL(), "--task", "kill-1", "--from-start", "--exit-on-result")
	must(t, r, 0)
	var types []string
	for _, l := range lines(t, r.stdout) {
		types = append(types, l["type"].(string))
	}
	if got := strings.Join(types, ","); got != "queued,agent_starting,queued,agent_starting,tool_calling,result" {
		t.Errorf("events of the two runs: %s", got)
	}
}

// The NATS server restarted mid-run: every task still gets exactly one result, and the
// collecting fr-dispatch run rides over the restart.
func TestServerRestartLosesNothing(t *testing.T) {
	srv := natstest.Start(t)
	for i := 1; i <= 3; i++ {
		d := startDaemon(t, fmt.Sprintf("d%d", i), "paced.yaml", "1")
		startWorker(t, fmt.Sprintf("host%d", i), srv.URL(), d)
	}
	var in strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&in, "task %d\n", i)
	}
	done := make(chan result, 1)
	go func() {
		done <- frDispatch(t, in.String(), "--nats", srv.URL(), "run", "--parallel", "30", "--id", "restart")
	}()
	// Looked up directly: two fr-dispatch in one process at once would share urfave/cli's
	// global flags.
	kv := bucket(t, srv.URL())
	testkit.WaitUntil(t, 60*time.Second, "some results before the restart", func() bool {
		r, _, ok, _ := fleet.Lookup(testkit.Context(t, 30*time.Second), kv, "restart-2")
		return ok && fleet.Final(r.Status)
	})
	srv.Restart()
	var r result
	select {
	case r = <-done:
	case <-testkit.After(120 * time.Second):
		t.Fatal("fr-dispatch run did not end after the restart")
	}
	must(t, r, 0)
	got := lines(t, r.stdout)
	ids := map[string]int{}
	for _, l := range got {
		ids[l["taskId"].(string)]++
	}
	if len(got) != 30 || len(ids) != 30 {
		t.Fatalf("%d lines for %d tasks, want 30 and 30:\n%s\n%s", len(got), len(ids), r.stdout, r.stderr)
	}
	_, js := client(t, srv.URL())
	ev := resultEvents(t, js)
	for i := 1; i <= 30; i++ {
		if c := ev[fmt.Sprintf("restart-%d", i)]; c != 1 {
			t.Errorf("restart-%d has %d result events", i, c)
		}
	}
}

// A publish repeated with the same --id runs once, whether it comes within JetStream's
// duplicate window or after the task finished.
func TestDuplicatePublishRunsOnce(t *testing.T) {
	srv := natstest.Start(t)
	d := startDaemon(t, "d1", "quick.yaml", "0")
	startWorker(t, "host1", srv.URL(), d)
	for i := 0; i < 3; i++ {
		must(t, frDispatch(t, "", "--nats", srv.URL(), "task", "--id", "ci-42-1", "update deps"), 0)
	}
	r := frDispatch(t, "", "--nats", srv.URL(), "wait", "ci-42-1")
	must(t, r, 0)
	must(t, frDispatch(t, "", "--nats", srv.URL(), "task", "--id", "ci-42-1", "update deps"), 0)
	must(t, frDispatch(t, "", "--nats", srv.URL(), "run", "--id", "ci-42-1", "update deps"), 0)
	if n := d.dispatched(t); n != 1 {
		t.Fatalf("the daemon ran the task %d times, want 1", n)
	}
}

// A worker whose daemon is down takes no task, and one it held when its daemon went away is
// handed back, not failed: another worker finishes it.
func TestDaemonDownHandsTasksBack(t *testing.T) {
	srv := natstest.Start(t)
	gone := startDaemon(t, "gone", "stuck.yaml", "1")
	wg := startWorker(t, "orphan", srv.URL(), gone)
	must(t, frDispatch(t, "", "--nats", srv.URL(), "task", "--id", "held-1", "fix it"), 0)
	testkit.WaitUntil(t, 30*time.Second, "the task on the worker whose daemon will go", func() bool {
		return status(t, srv.URL(), "held-1")["host"] == "orphan"
	})
	gone.stop()
	good := startDaemon(t, "good", "quick.yaml", "0")
	startWorker(t, "healthy", srv.URL(), good)
	var in strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&in, "task %d\n", i)
	}
	r := frDispatch(t, in.String(), "--nats", srv.URL(), "run", "--parallel", "10")
	must(t, r, 0)
	for _, l := range lines(t, r.stdout) {
		if l["host"] != "healthy" {
			t.Errorf("a task ran on %v while its daemon was down: %v", l["host"], l)
		}
	}
	r = frDispatch(t, "", "--nats", srv.URL(), "wait", "held-1")
	must(t, r, 0)
	if l := lines(t, r.stdout); l[0]["host"] != "healthy" {
		t.Errorf("held-1: %v", l[0])
	}
	if !strings.Contains(wg.stderr.String(), "handed back") {
		t.Errorf("the orphan worker did not say it handed the task back: %s", wg.stderr)
	}
}

// SIGTERM drains a worker: it takes no new task, and one still running after --drain-timeout
// is handed back to the queue, for another worker to finish; the worker exits 0.
func TestDrainHandsBackWhatDoesNotFinish(t *testing.T) {
	srv := natstest.Start(t)
	stuck := startDaemon(t, "stuck", "stuck.yaml", "1")
	w := startWorker(t, "draining", srv.URL(), stuck)
	must(t, frDispatch(t, "", "--nats", srv.URL(), "task", "--id", "drain-1", "fix it"), 0)
	testkit.WaitUntil(t, 30*time.Second, "the task on the worker to drain", func() bool {
		return status(t, srv.URL(), "drain-1")["host"] == "draining"
	})
	if code := w.stop(); code != 0 {
		t.Fatalf("the drained worker exited %d: %s", code, w.stderr)
	}
	if !strings.Contains(w.stderr.String(), "drain-1 handed back to the queue: the worker stopped before the task finished") {
		t.Errorf("stderr: %s", w.stderr)
	}
	good := startDaemon(t, "good", "quick.yaml", "0")
	startWorker(t, "next", srv.URL(), good)
	r := frDispatch(t, "", "--nats", srv.URL(), "wait", "drain-1")
	must(t, r, 0)
	if l := lines(t, r.stdout); l[0]["host"] != "next" {
		t.Errorf("drain-1: %v", l[0])
	}
}

// Over the WebSocket a worker keeps its task across a daemon restart (its client id): the
// daemon resumes the task and hands the worker its result; nothing is handed back or run twice.
func TestWebSocketDaemonRestartKeepsTheTask(t *testing.T) {
	srv := natstest.Start(t)
	dir := shortDir(t)
	d := startDaemonAt(t, dir, "0", "ws", "slow.yaml", "1")
	port := d.url[strings.LastIndex(d.url, ":")+1 : strings.LastIndex(d.url, "/")]
	w := startWorker(t, "wshost", srv.URL(), nil, "--url", d.url)
	must(t, frDispatch(t, "", "--nats", srv.URL(), "task", "--id", "ws-1", "fix it"), 0)
	testkit.WaitUntil(t, 30*time.Second, "the task running", func() bool {
		return status(t, srv.URL(), "ws-1")["sessionId"] != nil
	})
	d.stop()
	startDaemonAt(t, dir, port, "ws", "slow.yaml", "1")
	r := frDispatch(t, "", "--nats", srv.URL(), "wait", "ws-1")
	must(t, r, 0)
	l := lines(t, r.stdout)[0]
	if l["host"] != "wshost" || l["deliveries"] != float64(1) || l["lastMessage"] != "slow done" {
		t.Errorf("ws-1: %v\n%s", l, w.stderr)
	}
	if strings.Contains(w.stderr.String(), "handed back") {
		t.Errorf("the task was handed back: %s", w.stderr)
	}
}

// A task delivered --max-deliver times without a result ends with a failed result that says
// so, and is not run again.
func TestMaxDeliverEndsWithAFailedResult(t *testing.T) {
	srv := natstest.Start(t)
	stuck := startDaemon(t, "stuck", "stuck.yaml", "1")
	cmd, _ := startWorkerProc(t, "doomed", srv.URL(), stuck, "--max-deliver", "1")
	must(t, frDispatch(t, "", "--nats", srv.URL(), "task", "--id", "md-1", "fix it"), 0)
	testkit.WaitUntil(t, 30*time.Second, "the task on the doomed worker", func() bool {
		return status(t, srv.URL(), "md-1")["host"] == "doomed"
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	good := startDaemon(t, "good", "quick.yaml", "0")
	w := startWorker(t, "next", srv.URL(), good, "--max-deliver", "1")
	r := frDispatch(t, "", "--nats", srv.URL(), "wait", "md-1")
	must(t, r, 1)
	if !strings.Contains(r.stdout, "delivered once without a result") || !strings.Contains(r.stderr, "delivered once without a result") {
		t.Errorf("result: %s%s", r.stdout, r.stderr)
	}
	if n := good.dispatched(t); n != 0 {
		t.Errorf("the task ran again (%d times) after its last delivery", n)
	}
	if !strings.Contains(w.stderr.String(), "md-1") {
		t.Errorf("the worker did not name the task: %s", w.stderr)
	}
}
