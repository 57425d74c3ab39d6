package fleet_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/natstest"
)

// Bad input gets a clear error and is never run or taken for done: an empty task, a message
// on the task subject that is not a task, one whose task is blank, an id the fleet never saw.
func TestBadInput(t *testing.T) {
	srv := natstest.Start(t)
	d := startDaemon(t, "d1", "quick.yaml", "0")
	w := startWorker(t, "host1", srv.URL(), d)

	r := frDispatch(t, "", "--nats", srv.URL(), "task", "")
	must(t, r, 2)
	if !strings.Contains(r.stderr, "empty") {
		t.Errorf("empty task: %s", r.stderr)
	}
	must(t, frDispatch(t, "", "--nats", srv.URL(), "task", "--id", "bad id!", "x"), 2)

	_, js := client(t, srv.URL())
	ctx := testkit.Context(t, 30*time.Second)
	bad := nats.NewMsg(fleet.TaskSubject("default"))
	bad.Header.Set("Nats-Msg-Id", "garbled-1")
	bad.Data = []byte("this is not a task")
	if _, err := js.PublishMsg(ctx, bad); err != nil {
		t.Fatal(err)
	}
	blank, _ := json.Marshal(fleet.Task{TaskID: "blank-1", Task: "   ", Pool: "default"})
	if _, err := js.Publish(ctx, fleet.TaskSubject("default"), blank); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ id, why string }{{"garbled-1", "not a JSON object"}, {"blank-1", "the task is empty"}} {
		var r result
		testkit.WaitUntil(t, 30*time.Second, c.id+" settled", func() bool {
			r = frDispatch(t, "", "--nats", srv.URL(), "result", c.id)
			return r.code != 0 && strings.Contains(r.stdout, `"failed"`)
		})
		must(t, r, 1)
		if !strings.Contains(r.stdout, c.why) || !strings.Contains(r.stderr, c.why) {
			t.Errorf("%s: want %q in the result and the error:\n%s%s", c.id, c.why, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(w.stderr.String(), "not a JSON object") {
		t.Errorf("the worker did not say what was wrong: %s", w.stderr)
	}
	if n := d.dispatched(t); n != 0 {
		t.Errorf("the daemon was sent %d tasks, want none", n)
	}
	// Terminated, not acknowledged: nothing waits, nothing is redelivered.
	cons, err := js.Consumer(ctx, fleet.TasksStream, fleet.ConsumerName("default"))
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, 30*time.Second, "the queue empty", func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	})

	r = frDispatch(t, "", "--nats", srv.URL(), "result", "never-seen")
	must(t, r, 1)
	if !strings.Contains(r.stdout, `"status":"unknown"`) || !strings.Contains(r.stderr, "never-seen") {
		t.Errorf("unknown id: %+v", r)
	}
	r = frDispatch(t, "", "--nats", srv.URL(), "wait", "never-seen")
	must(t, r, 1)
}

// An event larger than the server's maximum payload reaches fr-attach whole.
func TestBigEventSplitAndJoined(t *testing.T) {
	srv := natstest.Start(t)
	d := startDaemon(t, "d1", "quick.yaml", "0")
	startWorker(t, "host1", srv.URL(), d)
	r := frDispatch(t, "", "--nats", srv.URL(), "run", "--id", "big-1", "big output")
	must(t, r, 0)
	r = frAttach(t, "--nats", srv.URL(), "--task", "big-1", "--from-start", "--exit-on-result")
	must(t, r, 0)
	var types []string
	big := 0
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("a line that is not JSON (%d bytes): %.200s", len(l), l)
		}
		types = append(types, ev["type"].(string))
		if ev["taskId"] != "big-1" || ev["host"] != "host1" || ev["pool"] != "default" {
			t.Errorf("event without the fleet's fields: %.200s", l)
		}
		if ev["type"] == "tool_call" {
			big = len(l)
		}
	}
	if big < 3000000 {
		t.Errorf("the big tool_call is %d bytes, want over 3000000", big)
	}
	if got := strings.Join(types, ","); got != "queued,agent_starting,tool_call,result" {
		t.Errorf("events %s", got)
	}
}

// fr-attach --nats --exit-on-result for a task that finished before: its result at once.
func TestAttachToFinishedTask(t *testing.T) {
	srv := natstest.Start(t)
	d := startDaemon(t, "d1", "quick.yaml", "0")
	startWorker(t, "host1", srv.URL(), d)
	must(t, frDispatch(t, "", "--nats", srv.URL(), "run", "--id", "done-1", "fail on purpose"), 1)
	r := frAttach(t, "--nats", srv.URL(), "--task", "done-1", "--exit-on-result")
	must(t, r, 1)
	l := lines(t, r.stdout)
	if len(l) != 1 || l[0]["type"] != "result" || l[0]["succeeded"] != false {
		t.Fatalf("got %s", r.stdout)
	}
}

// Flags for one daemon are refused with --nats, and flags for the fleet without it.
func TestFleetFlagsMisused(t *testing.T) {
	for _, c := range []struct {
		attach bool
		args   []string
		want   string
	}{
		{false, []string{"--nats", "nats://127.0.0.1:1", "task", "--objective", "O-1", "x"}, "--objective is for one daemon"},
		{false, []string{"--nats", "nats://u:pw@127.0.0.1:1", "task", "x"}, "must not carry a password"},
		{true, []string{"--nats", "nats://127.0.0.1:1", "--socket", "/tmp/s"}, "--socket is for one daemon"},
		{true, []string{"--nats", "nats://127.0.0.1:1", "--exit-on-result"}, "needs --task ID"},
		{true, []string{"--nats", "nats://127.0.0.1:1", "--task", "not an id"}, "--task"},
		{true, []string{"--from-start", "--socket", "/tmp/s"}, "are for a fleet"},
	} {
		var r result
		if c.attach {
			r = frAttach(t, c.args...)
		} else {
			r = frDispatch(t, "", c.args...)
		}
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
