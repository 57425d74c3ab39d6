// Package passthrough moves the lines of a pipe to an output after the program has looked at
// each one, without carrying the lines it keeps through the program's memory twice.
//
// On Linux a Lines sees what is waiting in the pipe through tee(2), which duplicates it into a
// private pipe without consuming it, and reads that copy; the lines kept then go from the pipe
// to the output with splice(2), and the lines left out are read off and thrown away. The output
// gets exactly the bytes that were looked at, in order, and nothing is held back in the program:
// a line kept is on its way out before Next waits for more. A relay that reads and writes copies
// every byte twice between the kernel and itself; this copies it once.
//
// A line that is not whole in the pipe (still being written, or longer than the pipe) is read
// off, to its end, into the program, and Pass writes it. Other systems, and sources or outputs
// that cannot splice, get no Lines: New returns nil and the caller reads and writes as before.
package passthrough

import (
	"errors"
	"fmt"
)

// ErrLineTooLong is wrapped by the error Next returns for a line longer than the limit given to
// New; the Lines gives that error from then on.
var ErrLineTooLong = errors.New("line too long")

// tooLong is the error for a line longer than max bytes (its line end not counted).
func tooLong(max int) error { return fmt.Errorf("%w: over %d bytes", ErrLineTooLong, max) }
