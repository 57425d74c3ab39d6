//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package attach

import (
	"errors"
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// watchPollMillis bounds each poll, so that the watcher notices stop soon after fr-attach ends.
const watchPollMillis = 250

// watchStdout watches out when it is a pipe and closes the returned channel once the pipe's
// reader has gone away (| head -1 having read enough), so that fr-attach need not wait for its
// next write to learn it. A pipe whose readers are all gone reports POLLERR, even to a poll
// asking for no events. The channel is nil (never ready) when out is not a pipe. stop ends the
// watcher; call it when fr-attach ends.
func watchStdout(out io.Writer) (gone <-chan struct{}, stop func()) {
	f, ok := out.(*os.File)
	if !ok {
		return nil, func() {}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, func() {}
	}
	isPipe := false
	if rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		isPipe = unix.Fstat(int(fd), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO
	}) != nil || !isPipe {
		return nil, func() {}
	}
	ch := make(chan struct{})
	var stopped atomic.Bool
	go func() {
		for !stopped.Load() {
			closed, broken := false, false
			err := rc.Control(func(fd uintptr) {
				fds := []unix.PollFd{{Fd: int32(fd)}}
				n, err := unix.Poll(fds, watchPollMillis)
				switch {
				case errors.Is(err, unix.EINTR):
				case err != nil:
					broken = true
				case n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0:
					closed = true
				case n > 0:
					broken = true // POLLNVAL: nothing more to learn from this descriptor
				}
			})
			if err != nil || broken {
				return
			}
			if closed {
				close(ch)
				return
			}
		}
	}()
	return ch, func() { stopped.Store(true) }
}
