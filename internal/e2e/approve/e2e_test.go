// Package e2e runs fr-approve in pipelines with fr-sim standing in for fuseraft. It is a
// package of its own so that fr-approve's own tests do not depend on fr-sim.
package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/cmd/approve"
	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fr-approve": func() { os.Exit(approve.Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
		"fr-sim":     func() { os.Exit(sim.Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
	})
}

func TestPipelines(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			root, err := filepath.Abs("../../..")
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLES", filepath.Join(root, "examples"))
			env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			return nil
		},
	})
}
