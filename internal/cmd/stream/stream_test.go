//go:build unix

package stream

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/termsafetest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fr-stream": func() { os.Exit(Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
		"fr-sim":    func() { os.Exit(sim.Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
	})
}

func TestScripts(t *testing.T) {
	testkit.RunScripts(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("FUSERAFT_BIN", "")
			return termsafetest.Setup(e)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"termsafe": termsafetest.Cmds()["termsafe"],
			"unescape": termsafetest.Cmds()["unescape"],
			"bigline":  cmdBigLine,
		},
	})
}

// bigline N FILE: write one event line with a text field N bytes long (plus a line end).
func cmdBigLine(ts *testscript.TestScript, neg bool, args []string) {
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	f, err := os.Create(ts.MkAbs(args[1]))
	ts.Check(err)
	defer f.Close()
	fmt.Fprint(f, `{"type":"tool_result","id":"c1","name":"read_file","ok":true,"output":"`)
	chunk := []byte(strings.Repeat("abcdefghij", 1<<16))
	for n > 0 {
		c := chunk
		if n < len(c) {
			c = c[:n]
		}
		f.Write(c)
		n -= len(c)
	}
	fmt.Fprint(f, "\"}\n")
}
