//go:build unix

package proc

import (
	"os"
	"syscall"
)

const (
	canSignal = true
	canGroup  = true
)

// signalChild sends sig to p, or to the process group p leads.
func signalChild(p *os.Process, sig os.Signal, group bool) {
	if s, ok := sig.(syscall.Signal); ok && group {
		if syscall.Kill(-p.Pid, s) == nil {
			return
		}
	}
	_ = p.Signal(sig)
}
