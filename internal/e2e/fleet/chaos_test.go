package fleet_test

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/natstest"
)

// Under make chaos: 200 tasks over 3 worker processes, one of them killed with SIGKILL and
// started again eight times during the run, and the server restarted twice: every task has
// exactly one result line and one result event.
func TestChaosKillsAndRestarts(t *testing.T) {
	if !testkit.Long() {
		t.Skip("a long fault run: make chaos (FR_CHAOS=full)")
	}
	const n = 200
	srv := natstest.Start(t)
	var daemons []*daemonT
	var procs []*exec.Cmd
	for i := 1; i <= 3; i++ {
		d := startDaemon(t, fmt.Sprintf("d%d", i), "paced.yaml", "1")
		daemons = append(daemons, d)
		p, _ := startWorkerProc(t, fmt.Sprintf("host%d", i), srv.URL(), d)
		procs = append(procs, p)
	}
	var in strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&in, "task %d\n", i)
	}
	done := make(chan result, 1)
	go func() {
		done <- frDispatch(t, in.String(), "--nats", srv.URL(), "run", "--parallel", fmt.Sprint(n), "--id", "chaos")
	}()
	kv := bucket(t, srv.URL())
	finished := func() int {
		c := 0
		for i := 1; i <= n; i++ {
			r, _, ok, _ := fleet.Lookup(testkit.Context(t, 30*time.Second), kv, fmt.Sprintf("chaos-%d", i))
			if ok && fleet.Final(r.Status) {
				c++
			}
		}
		return c
	}
	for round := 1; round <= 10; round++ {
		target := round * n / 12
		testkit.WaitUntil(t, 120*time.Second, fmt.Sprintf("%d results", target), func() bool { return finished() >= target })
		if round == 4 || round == 8 {
			srv.Restart()
			continue
		}
		i := round % 3
		procs[i].Process.Signal(syscall.SIGKILL)
		procs[i].Wait()
		procs[i], _ = startWorkerProc(t, fmt.Sprintf("host%d-%d", i+1, round), srv.URL(), daemons[i])
	}
	var r result
	select {
	case r = <-done:
	case <-testkit.After(300 * time.Second):
		t.Fatal("fr-dispatch run did not end")
	}
	must(t, r, 0)
	ids := map[string]int{}
	for _, l := range lines(t, r.stdout) {
		ids[l["taskId"].(string)]++
	}
	if len(ids) != n {
		t.Fatalf("%d tasks with a result line, want %d", len(ids), n)
	}
	_, js := client(t, srv.URL())
	ev := resultEvents(t, js)
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("chaos-%d", i)
		if ids[id] != 1 || ev[id] != 1 {
			t.Errorf("%s: %d result lines, %d result events", id, ids[id], ev[id])
		}
	}
}
