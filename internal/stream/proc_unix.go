//go:build unix

package stream

import (
	"os"
	"syscall"
)

// pipeSignals are caught so that a reader of our stdout that went away (| head -1) shows up
// as a failed write, which ends the session quietly, rather than killing fr-stream. Catching
// it (not ignoring it) keeps the child's default disposition.
var pipeSignals = []os.Signal{syscall.SIGPIPE}

// canSignal says an interrupt reaches the child as SIGINT rather than as an interrupt line.
const canSignal = true

// signalGroup sends sig to the child's process group (the child leads it: see sysProcAttr), so
// commands fuseraft started get it too, as they would from a terminal's Ctrl-C.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid, sig); err != nil {
		return p.Signal(sig)
	}
	return nil
}

func interruptChild(p *os.Process) error { return signalGroup(p, syscall.SIGINT) }
func terminateChild(p *os.Process) error { return signalGroup(p, syscall.SIGTERM) }
func killChild(p *os.Process) error      { return signalGroup(p, syscall.SIGKILL) }
