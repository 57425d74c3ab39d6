//go:build linux

package sessioninput

import (
	"os"

	"golang.org/x/sys/unix"
)

// PipeSize is the capacity GrowPipe asks for: 1 MiB, Linux's default most for an
// unprivileged process (/proc/sys/fs/pipe-max-size).
const PipeSize = 1 << 20

// GrowPipe asks the kernel for a pipe buffer of PipeSize when w is an *os.File that is a pipe (either end), so a
// flood moves in fewer, larger reads and writes, with fewer switches between the processes on
// either side. Latency does not change: output is still flushed when the input has nothing
// more ready. Anything else, or a refusal (the user's pipe quota), leaves f as it is.
func GrowPipe(w any) {
	f, ok := w.(*os.File)
	if !ok {
		return
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		if n, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err == nil && n < PipeSize {
			_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, PipeSize)
		}
	})
}
