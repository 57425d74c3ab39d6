//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sessioninput

import (
	"errors"
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// watchPollMillis bounds each poll, so that the watcher notices stop soon after it is called.
const watchPollMillis = 250

// WatchStdout watches out when it is a pipe or a socket and closes the returned channel once
// its reader has gone away (| head -1 having read enough, a consumer that crashed), so that a
// command that has nothing to write (it waits for the answer to a prompt, or for a daemon)
// need not wait for its next write to learn it. A pipe whose readers are all gone reports
// POLLERR, and a socket whose peer has closed POLLHUP, even to a poll asking for no events.
// The channel is nil (never ready) when out is neither, or cannot be watched here. stop ends
// the watcher; call it when the command ends.
func WatchStdout(out io.Writer) (gone <-chan struct{}, stop func()) {
	f, ok := out.(*os.File)
	if !ok {
		return nil, func() {}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, func() {}
	}
	watched := false
	if rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) == nil {
			m := st.Mode & unix.S_IFMT
			watched = m == unix.S_IFIFO || m == unix.S_IFSOCK
		}
	}) != nil || !watched {
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
			if closed && !stopped.Load() {
				close(ch)
				return
			}
		}
	}()
	return ch, func() { stopped.Store(true) }
}
