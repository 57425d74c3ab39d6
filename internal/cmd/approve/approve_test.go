package approve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit/termsafetest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fr-approve": func() { os.Exit(Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			root, err := filepath.Abs("../../..")
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLES", filepath.Join(root, "examples"))
			// the race detector otherwise sleeps a second at each command's exit
			env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			return termsafetest.Setup(env)
		},
		Cmds: termsafetest.Cmds(),
	})
}
