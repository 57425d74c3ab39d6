//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sessioninput

import "io"

// WatchStdout is not available here: a closed stdout is learned from the next write's error.
func WatchStdout(out io.Writer) (gone <-chan struct{}, stop func()) { return nil, func() {} }
