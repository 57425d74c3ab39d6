//go:build linux

package sessioninput

import (
	"os"

	"golang.org/x/sys/unix"
)

// Buffered returns how many bytes wait to be read in f (a pipe or a socket: FIONREAD), and false where
// that cannot be learned.
func Buffered(f *os.File) (n int, ok bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var ierr error
	if rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }) != nil || ierr != nil {
		return 0, false
	}
	return n, true
}
