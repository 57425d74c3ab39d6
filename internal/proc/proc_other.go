//go:build !unix

package proc

import (
	"os"
	"syscall"
)

const (
	canSignal = false
	canGroup  = false
)

func groupAttr() *syscall.SysProcAttr { return nil }

// signalChild kills p for any signal but an interrupt, which has no meaning here.
func signalChild(p *os.Process, sig os.Signal, _ bool) {
	if sig != os.Interrupt {
		_ = p.Kill()
	}
}
