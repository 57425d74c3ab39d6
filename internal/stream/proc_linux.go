//go:build linux

package stream

import "syscall"

// sysProcAttr puts the child in its own process group, so a terminal's Ctrl-C reaches only
// fr-stream (which decides what it means), and has the kernel kill it if fr-stream dies
// without cleaning up (even by SIGKILL).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
