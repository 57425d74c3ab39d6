//go:build !linux

package sessioninput

import "os"

// Buffered cannot learn how many bytes wait in f here.
func Buffered(f *os.File) (n int, ok bool) { return 0, false }
