//go:build !unix

package stream

import (
	"os"
	"syscall"
)

var pipeSignals []os.Signal

// canSignal is false: an interrupt is sent to fuseraft as an interrupt line.
const canSignal = false

func sysProcAttr() *syscall.SysProcAttr { return nil }

func interruptChild(p *os.Process) error { return nil }
func terminateChild(p *os.Process) error { return p.Kill() }
func killChild(p *os.Process) error      { return p.Kill() }
