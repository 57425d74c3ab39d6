package budget

import (
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/natstest"
)

func openKV(t *testing.T, srv *natstest.Server, bucket string) *KVStore {
	t.Helper()
	nc, err := nats.Connect(srv.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	st, err := OpenKV(testkit.Context(t, 30*time.Second), js, bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Three runs, each on a connection of its own, share a budget of N turns in a bucket: no
// update is lost, and together they stop within N + 3 turns, one per run.
func TestKVConcurrentRunsStopWithinOneTurnEach(t *testing.T) {
	srv := natstest.Start(t)
	const n, runs = 40, 3
	var wg sync.WaitGroup
	started := make([]int64, runs)
	ended := make([]int64, runs) // turns whose tokens were reported
	for r := 0; r < runs; r++ {
		st := openKV(t, srv, "budget")
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			b := New(Limits{Turns: n}, Options{Store: st})
			defer b.Close()
			if b.Start() != nil {
				return
			}
			for i := 0; i < 10*n; i++ {
				if b.BeforeTurn() != nil {
					return
				}
				started[r]++
				if b.Observe(ev(`{"type":"agent_starting","agent":"coder"}`)) != nil {
					return
				}
				ended[r]++
				if b.Observe(ev(agentMsg("10", "5"))) != nil {
					return
				}
			}
			t.Errorf("run %d was never stopped", r)
		}(r)
	}
	wg.Wait()
	day, _, err := openKV(t, srv, "budget").Read(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	total := started[0] + started[1] + started[2]
	if day.Turns != total {
		t.Errorf("the bucket counts %d turns, the runs started %d: an update was lost", day.Turns, total)
	}
	if day.Turns < n || day.Turns > n+runs {
		t.Errorf("%d turns in all, want from %d to %d", day.Turns, n, n+runs)
	}
	tokens := 15 * (ended[0] + ended[1] + ended[2])
	if day.Runs != runs || day.Tokens() != tokens {
		t.Errorf("totals %+v, want %d runs and %d tokens", day, runs, tokens)
	}
	t.Logf("turns started: %v (limit %d)", started, n)
}

// The totals are kept by the server: a restart loses none, and a week sums its days.
func TestKVSurvivesRestart(t *testing.T) {
	srv := natstest.Start(t)
	st := openKV(t, srv, "budget")
	mon := time.Date(2026, 11, 30, 12, 0, 0, 0, time.Local) // a Monday
	for _, d := range []time.Time{mon, mon.AddDate(0, 0, 2), mon.AddDate(0, 0, 7)} {
		if _, _, err := st.Add(d, Usage{Turns: 2, Input: 100}); err != nil {
			t.Fatal(err)
		}
	}
	srv.Restart()
	ctx := testkit.Context(t, 30*time.Second)
	var day, week Usage
	var err error
	// the store's connection comes back by itself
	testkit.WaitUntil(t, 30*time.Second, "the bucket read after the restart", func() bool {
		day, week, err = st.Read(mon.AddDate(0, 0, 2))
		return err == nil && ctx.Err() == nil
	})
	if day.Turns != 2 || week.Turns != 4 || week.Input != 200 {
		t.Errorf("after a restart: day %+v, week %+v; want 2 turns today and 4 this week", day, week)
	}
	next, _, err := openKV(t, srv, "budget").Read(mon.AddDate(0, 0, 7))
	if err != nil || next.Turns != 2 {
		t.Errorf("next Monday: %+v, %v", next, err)
	}
}

// A turn in flight of another run is seen, and forgotten once it goes stale.
func TestKVTurnsInFlight(t *testing.T) {
	srv := natstest.Start(t)
	st := openKV(t, srv, "budget")
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.Local)
	if _, _, _, err := st.Commit(now, Usage{}, &Turn{Run: "a", InFlight: true, Done: 500}); err != nil {
		t.Fatal(err)
	}
	_, _, sh, err := st.Commit(now, Usage{}, &Turn{Run: "b"})
	if err != nil || sh.Others != 1 || sh.Largest != 500 {
		t.Fatalf("another run's turn in flight: %+v, %v", sh, err)
	}
	_, _, sh, _ = st.Commit(now.Add(kvTurnStale+time.Minute), Usage{}, &Turn{Run: "b"})
	if sh.Others != 0 {
		t.Errorf("a turn not refreshed for %s is still counted: %+v", kvTurnStale, sh)
	}
}

// A budget whose bucket cannot be reached is a breach naming --budget-kv.
func TestKVUnreachableIsABreach(t *testing.T) {
	srv := natstest.Start(t)
	st := openKV(t, srv, "budget")
	srv.Stop()
	defer func(d time.Duration) { kvTimeout = d }(kvTimeout)
	kvTimeout = 200 * time.Millisecond // how long a server may take to answer before it is given up on
	b := New(Limits{Turns: 5}, Options{Store: st})
	br := b.Start()
	if br == nil || br.Limit != "--budget-kv" {
		t.Fatalf("Start with the server gone: %v", br)
	}
}
