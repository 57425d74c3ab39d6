//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package attach

import "errors"

// editMode is not available here: the terminal's own line editing is used.
func editMode(fd int) (restore func() error, err error) {
	return nil, errors.New("no line editing on this system")
}

func watchTerminal(resized, resumed func()) (stop func()) { return func() {} }
