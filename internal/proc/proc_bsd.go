//go:build unix && !linux

package proc

import "syscall"

// groupAttr puts the child in its own process group. There is no parent-death signal here:
// the caller kills the child on every exit path it controls.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
