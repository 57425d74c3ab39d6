//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package console

import "errors"

// EditMode is not available here: the terminal's own line editing is used.
func EditMode(fd int) (restore func() error, err error) {
	return nil, errors.New("no line editing on this system")
}

func WatchTerminal(resized, resumed func()) (stop func()) { return func() {} }

// DiscardTypeahead does nothing here: there is no portable way to drop typed-ahead input.
func DiscardTypeahead(fd int) {}
