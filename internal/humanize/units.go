// Package humanize writes sizes the way every fr message does.
package humanize

import "fmt"

// Bytes writes a size limit as people set it: "64 MiB", "8 KiB", else "1000 bytes".
func Bytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
