//go:build linux

package wire

import (
	"os"

	"golang.org/x/sys/unix"
)

// setPipeSize asks the kernel for a pipe buffer of n bytes (rounded up to a page); a refusal
// leaves the pipe as it is.
func setPipeSize(f *os.File, n int) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, n)
	})
}
