//go:build !linux

package query

import "syscall"

// setDefaultAction has no portable way to bypass the runtime's handler elsewhere; dying
// falls back to signal.Reset.
func setDefaultAction(syscall.Signal) bool { return false }
