package chaos

import (
	"fmt"
	"regexp"
	"syscall"
	"testing"
	"time"
)

var verdictRe = regexp.MustCompile(`"text":"p(\d+) (allowed|denied)"`)

// checkVerdicts holds the protocol's hardest rule from the daemon's side: the daemon says, for
// every approval it decided, which answer it got (the scenario's info events). Each of the n
// approvals must be decided once, and by the answer the policy gives its command: a late
// answer meant for another prompt shows as the wrong verdict.
func checkVerdicts(t *testing.T, events []string, n int) {
	t.Helper()
	got := map[int][]string{}
	for _, e := range events {
		if m := verdictRe.FindStringSubmatch(e); m != nil {
			var k int
			fmt.Sscan(m[1], &k)
			got[k] = append(got[k], m[2])
		}
	}
	for k := 1; k <= n; k++ {
		want := "denied"
		if k%2 == 1 {
			want = "allowed"
		}
		switch v := got[k]; {
		case len(v) == 0:
			t.Errorf("approval p%d was never decided", k)
		case len(v) > 1:
			t.Errorf("approval p%d was decided %d times: %v", k, len(v), v)
		case v[0] != want:
			t.Errorf("approval p%d was %s, but the answer written for it was %s", k, v[0], want)
		}
	}
}

// checkOneResult: the client got its task's result exactly once.
func checkOneResult(t *testing.T, events []string, task string) {
	t.Helper()
	n := 0
	for _, e := range events {
		if jsonField(e, "type") == "result" && jsonField(e, "task") == task {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the result of %q arrived %d times, want once", task, n)
	}
}

type fault struct {
	name string
	do   func(d *daemon)
}

var faults = []fault{
	{"kill-9", func(d *daemon) { d.restart(syscall.SIGKILL) }},
	{"sigterm", func(d *daemon) { d.restart(syscall.SIGTERM) }},
	{"sigstop", func(d *daemon) {
		d.p.signal(syscall.SIGSTOP)
		time.Sleep(1500 * time.Millisecond)
		d.p.signal(syscall.SIGCONT)
	}},
}

// TestRestartMidApproval: the daemon dies (or freezes) while an approval waits for an answer
// that comes late; the approval is asked again after the restart, and every approval still
// gets the answer written for it, once.
func TestRestartMidApproval(t *testing.T) {
	delays := []time.Duration{0, 200 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}
	if !full {
		delays = []time.Duration{time.Second}
	}
	const n = 4
	for _, f := range faults {
		for _, delay := range delays {
			f, delay := f, delay
			t.Run(fmt.Sprintf("%s/answer-after-%s", f.name, delay), func(t *testing.T) {
				h := newHarness(t)
				scen := h.write("scenario.yaml", taskScenario(n, 0))
				d := h.startDaemon("--scenario", scen, "--reconnect-grace", "30s")
				pl := h.approvedClient(delay, "--url", d.url, "--client-id", "chaos-1", "--max-backoff", "100ms",
					"--task", "chaos task", "--exit-on-result")
				// approval 2 is pending, its answer still on its way
				pl.events.waitFor(t, `"command":"curl http://x/p2"`, 1, 30*time.Second)
				f.do(d)
				if code := pl.finish(t, 60*time.Second); code != 0 {
					t.Errorf("fr-attach exited %d, want 0", code)
				}
				d.stop(syscall.SIGTERM)
				events := pl.events.snapshot()
				pl.checkApprover(t)
				checkVerdicts(t, events, n)
				checkOneResult(t, events, "chaos task")
			})
		}
	}
}

// TestManyRestarts: the daemon is killed again and again during a long task; each approval is
// asked until answered, answered once, by its own answer.
func TestManyRestarts(t *testing.T) {
	n, restarts := 10, 4
	if full {
		n, restarts = 40, 20
	}
	h := newHarness(t)
	scen := h.write("scenario.yaml", taskScenario(n, 20*time.Millisecond))
	d := h.startDaemon("--scenario", scen, "--reconnect-grace", "30s")
	pl := h.approvedClient(100*time.Millisecond, "--url", d.url, "--client-id", "chaos-2", "--max-backoff", "100ms",
		"--task", "long task", "--exit-on-result")
	for i := 1; i <= restarts; i++ {
		// Half the kills land while approval k waits for its answer, half just after it was
		// decided, before the next one is asked.
		k := i * n / (restarts + 1)
		if i%2 == 0 {
			pl.events.waitFor(t, fmt.Sprintf(`"text":"p%d `, k), 1, 60*time.Second)
		} else {
			pl.events.waitFor(t, fmt.Sprintf(`/p%d"`, k), 1, 60*time.Second)
		}
		sig := syscall.SIGKILL
		if i%3 == 0 {
			sig = syscall.SIGTERM
		}
		d.restart(sig)
	}
	if code := pl.finish(t, 120*time.Second); code != 0 {
		t.Errorf("fr-attach exited %d, want 0", code)
	}
	d.stop(syscall.SIGTERM)
	events := pl.events.snapshot()
	pl.checkApprover(t)
	checkVerdicts(t, events, n)
	checkOneResult(t, events, "long task")
	if hellos := pl.events.count(`"type":"hello"`); hellos != restarts+1 {
		t.Errorf("%d hellos, want %d (one per connection)", hellos, restarts+1)
	}
}
