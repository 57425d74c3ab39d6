//go:build unix

package testkit

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestScriptCmds(t *testing.T) {
	RunScripts(t, testscript.Params{Dir: "testdata/script"})
}
