//go:build unix

package budget_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/cmd/attach"
	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmd/stream"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fr-stream": func() { os.Exit(stream.Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
		"fr-attach": func() { os.Exit(attach.Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
		"fr-sim":    func() { os.Exit(sim.Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
	})
}

// Real processes sharing a budget file (testdata/script).
func TestScripts(t *testing.T) {
	testkit.RunScripts(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("FUSERAFT_BIN", "fr-sim")
			e.Setenv("FRSIM_RECORD", "")
			e.Setenv("FRSIM_FAULTS", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"totals": cmdTotals, "turns": cmdTurns},
	})
}

// totals FILE TURNS-AT-MOST TOKENS-AT-MOST: today's totals in the budget file FILE are at most
// these (and not 0).
func cmdTotals(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: totals FILE TURNS TOKENS")
	}
	st, err := budget.OpenStore(ts.MkAbs(args[0]))
	ts.Check(err)
	day, _, err := st.Read(time.Now())
	ts.Check(err)
	turns, _ := strconv.ParseInt(args[1], 10, 64)
	tokens, _ := strconv.ParseInt(args[2], 10, 64)
	ts.Logf("today: %d runs, %d turns, %d tokens", day.Runs, day.Turns, day.Tokens())
	if day.Turns == 0 || day.Turns > turns || day.Tokens() > tokens {
		ts.Fatalf("today's totals: %d turns and %d tokens, want at most %d and %d", day.Turns, day.Tokens(), turns, tokens)
	}
}

// turns FILE N TOKENS BYTES DELAY: writes an fr-sim scenario FILE whose run plays N turns, each
// an agent_starting, DELAY, and an agent_message of TOKENS tokens (half input, half output)
// whose content is BYTES bytes long.
func cmdTurns(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 5 {
		ts.Fatalf("usage: turns FILE N TOKENS BYTES DELAY")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	tok, err := strconv.Atoi(args[2])
	ts.Check(err)
	size, err := strconv.Atoi(args[3])
	ts.Check(err)
	var b strings.Builder
	b.WriteString("version: 1\nrun:\n  agents: [coder]\n  steps:\n")
	content := strings.Repeat("x", size)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    - {emit: {type: agent_starting, agent: coder}}\n")
		fmt.Fprintf(&b, "    - {delay: %s}\n", args[4])
		fmt.Fprintf(&b, "    - {emit: {type: agent_message, message: {agentName: coder, role: assistant, content: %s, turnIndex: %d, timestamp: \"2026-12-01T10:00:00Z\", inputTokens: %d, outputTokens: %d, isCompactionSummary: false, toolCalls: []}, elapsedMs: 20}}\n",
			content, i, tok/2, tok-tok/2)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o666))
}
