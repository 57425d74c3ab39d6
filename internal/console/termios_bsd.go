//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package console

import "golang.org/x/sys/unix"

const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)

// flushInput drops what was typed on the terminal fd and not yet read (TIOCFLUSH of FREAD,
// which is 1 on every BSD).
func flushInput(fd int) error { return unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, 1) }
