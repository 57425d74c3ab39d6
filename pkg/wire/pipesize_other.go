//go:build !linux

package wire

import "os"

// setPipeSize does nothing where a pipe's size cannot be set.
func setPipeSize(f *os.File, n int) {}
