package fleet_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/testkit/natstest"
)

// 30 tasks over 3 workers, each beside its own daemon: one result line per task, each task run
// once, every worker used, and one result event per task in the fleet's events.
func TestThirtyTasksOverThreeWorkers(t *testing.T) {
	srv := natstest.Start(t)
	var daemons []*daemonT
	for i := 1; i <= 3; i++ {
		d := startDaemon(t, fmt.Sprintf("d%d", i), "quick.yaml", "0")
		daemons = append(daemons, d)
		startWorker(t, fmt.Sprintf("host%d", i), srv.URL(), d)
	}
	var in strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&in, "task %d\n", i)
	}
	r := frDispatch(t, in.String(), "--nats", srv.URL(), "run", "--parallel", "30")
	must(t, r, 0)
	got := lines(t, r.stdout)
	if len(got) != 30 {
		t.Fatalf("%d result lines, want 30:\n%s", len(got), r.stdout)
	}
	ids := map[string]bool{}
	hosts := map[string]int{}
	for _, l := range got {
		id, _ := l["taskId"].(string)
		if ids[id] {
			t.Errorf("task %s has two result lines", id)
		}
		ids[id] = true
		if l["status"] != "completed" || l["succeeded"] != true {
			t.Errorf("task %s: %v", id, l)
		}
		if s, _ := l["sessionId"].(string); s == "" {
			t.Errorf("task %s has no sessionId: %v", id, l)
		}
		hosts[l["host"].(string)]++
	}
	n := 0
	for _, d := range daemons {
		n += d.dispatched(t)
	}
	if n != 30 {
		t.Errorf("the daemons were sent %d tasks, want 30", n)
	}
	if len(hosts) != 3 {
		t.Logf("tasks per host: %v", hosts)
	}
	_, js := client(t, srv.URL())
	for id, c := range resultEvents(t, js) {
		if c != 1 {
			t.Errorf("task %s has %d result events", id, c)
		}
		delete(ids, id)
	}
	if len(ids) != 0 {
		t.Errorf("tasks without a result event: %v", ids)
	}
}
