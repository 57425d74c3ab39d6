//go:build unix && !linux

package stream

import "syscall"

// sysProcAttr puts the child in its own process group, so a terminal's Ctrl-C reaches only
// fr-stream. There is no parent-death signal here: fr-stream kills the child on every exit
// path it controls.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
