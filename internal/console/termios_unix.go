//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package console

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// EditMode sets the terminal on fd to deliver each key as it is typed, without echo, so the
// input line can be redrawn under the output. Ctrl-C, Ctrl-Z and Ctrl-\ still signal, and
// output processing is kept, so lines written to stderr end as usual. restore undoes it.
func EditMode(fd int) (restore func() error, err error) {
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.IEXTEN
	t.Lflag |= unix.ISIG
	t.Iflag &^= unix.ICRNL | unix.INLCR | unix.IGNCR
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &t); err != nil {
		return nil, err
	}
	return func() error { return unix.IoctlSetTermios(fd, ioctlSetTermios, old) }, nil
}

// WatchTerminal calls resized when the terminal's size changes and resumed when the process
// continues after a stop (Ctrl-Z, then fg), until stop is called.
func WatchTerminal(resized, resumed func()) (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, unix.SIGWINCH, unix.SIGCONT)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case s := <-ch:
				if s == unix.SIGWINCH {
					resized()
				} else {
					resumed()
				}
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// DiscardTypeahead drops what was typed on the terminal fd and not yet read, so a key pressed
// before a prompt was shown never answers it. Errors (fd is no terminal) are ignored.
func DiscardTypeahead(fd int) { _ = flushInput(fd) }
