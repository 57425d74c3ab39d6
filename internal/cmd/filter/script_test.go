package filter

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fr-filter": func() { os.Exit(Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
		"fr-sim":    func() { os.Exit(sim.Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			for _, k := range []string{"FRSIM_SCENARIO", "FRSIM_RECORD", "FRSIM_FAULTS", "FRSIM_PACE", "FUSERAFT_VSCODE_QUESTIONS", "NO_COLOR"} {
				e.Setenv(k, "")
			}
			e.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
	})
}
