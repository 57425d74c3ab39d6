package dispatch

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fr-dispatch": func() { os.Exit(Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("FUSERAFT_MCP_URL", "")
			e.Setenv("FUSERAFT_SERVE_TOKEN", "")
			testkit.ScriptEnv(e)
			return nil
		},
	})
}
