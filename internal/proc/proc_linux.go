//go:build linux

package proc

import "syscall"

// groupAttr puts the child in its own process group and has the kernel kill it if its parent
// dies without cleaning up (even by SIGKILL).
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
