package wire_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmdutil"
)

// TestMain puts a fuseraft on PATH for the tests and examples that start one: this test
// binary, which runs as fr-sim (playing without delays) when it is started by that name.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "fuseraft" {
		os.Exit(sim.Run(context.Background(), cmdutil.OSStreams(), os.Args))
	}
	os.Exit(withSim(m))
}

func withSim(m *testing.M) int {
	exe, err := os.Executable()
	if err == nil {
		var dir string
		if dir, err = os.MkdirTemp("", "wire-sim"); err == nil {
			defer os.RemoveAll(dir)
			err = os.Symlink(exe, filepath.Join(dir, "fuseraft"))
			os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
			os.Setenv("FRSIM_PACE", "0")
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wire tests: putting fr-sim on PATH as fuseraft:", err)
		return 1
	}
	return m.Run()
}
