//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package console

import "os/exec"

// foreground is a no-op where the terminal has no jobs.
func foreground(cmd *exec.Cmd, fd int) (giveBack func()) { return func() {} }
