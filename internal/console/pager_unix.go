//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package console

import (
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// foreground makes cmd, once started, the terminal's foreground job, as a shell does, so that
// Ctrl-C and Ctrl-Z typed in the pager go to the pager alone. giveBack hands the terminal back
// to the job that had it.
func foreground(cmd *exec.Cmd, fd int) (giveBack func()) {
	prev, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil || prev != syscall.Getpgrp() {
		// Not the terminal's foreground job: leave the terminal's jobs alone.
		return func() {}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Foreground: true, Ctty: fd}
	return func() {
		// A background job that sets the foreground is stopped by SIGTTOU unless it ignores it.
		signal.Ignore(syscall.SIGTTOU)
		defer signal.Reset(syscall.SIGTTOU)
		unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, prev)
	}
}
