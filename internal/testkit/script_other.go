//go:build !unix

package testkit

import "github.com/rogpeppe/go-internal/testscript"

func platformCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return nil
}
