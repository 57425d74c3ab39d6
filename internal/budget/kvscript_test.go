//go:build unix

package budget_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/natstest"
)

// Real processes sharing a budget in a bucket of a real NATS server (testdata/kvscript): the
// server is $FR_NATS_URL.
func TestKVScripts(t *testing.T) {
	srv := natstest.Start(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/kvscript",
		Setup: func(e *testscript.Env) error {
			e.Setenv("FUSERAFT_BIN", "fr-sim")
			e.Setenv("FRSIM_RECORD", "")
			e.Setenv("FRSIM_FAULTS", "")
			e.Setenv("FR_NATS_URL", srv.URL())
			testkit.ScriptEnv(e)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"turns": cmdTurns,
			"kvtotals": func(ts *testscript.TestScript, neg bool, args []string) { cmdKVTotals(ts, srv, neg, args) }},
	})
}

// kvtotals BUCKET TURNS-FROM TURNS-TO: today's turns in the bucket are within these.
func cmdKVTotals(ts *testscript.TestScript, srv *natstest.Server, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: kvtotals BUCKET FROM TO")
	}
	nc, err := nats.Connect(srv.URL())
	ts.Check(err)
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound(30*time.Second))
	defer cancel()
	st, err := budget.OpenKV(ctx, js, args[0], "")
	ts.Check(err)
	day, _, err := st.Read(time.Now())
	ts.Check(err)
	from, _ := strconv.ParseInt(args[1], 10, 64)
	to, _ := strconv.ParseInt(args[2], 10, 64)
	ts.Logf("today: %d runs, %d turns, %d tokens", day.Runs, day.Turns, day.Tokens())
	if day.Turns < from || day.Turns > to {
		ts.Fatalf("today's turns: %d, want from %d to %d", day.Turns, from, to)
	}
}
