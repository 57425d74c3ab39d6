package wire

import (
	"bufio"
	"errors"
	"io"
	"sync"
	"syscall"
)

// Writer writes JSONL output in batches and is flushed by its caller when the input has nothing
// more ready (see ReaderOptions.BeforeRead). That makes output live when events trickle in, and
// as fast as a plain buffered copy when they arrive in bulk. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	bw  *bufio.Writer
	err error
}

// NewWriter returns a Writer over w with a 64 KiB buffer.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 64<<10)}
}

// WriteLine writes b followed by '\n'. After the first error every call returns it.
func (w *Writer) WriteLine(b []byte) error {
	w.mu.Lock()
	if w.err == nil {
		if _, err := w.bw.Write(b); err != nil {
			w.err = err
		} else if err := w.bw.WriteByte('\n'); err != nil {
			w.err = err
		}
	}
	err := w.err
	w.mu.Unlock()
	return err
}

// Write writes b as it is (no line end is added).
func (w *Writer) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.bw.Write(b)
	w.err = err
	return n, err
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.err = w.bw.Flush()
	return w.err
}

// Err returns the first write error, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// IsBrokenPipe reports whether err means the reader of our output has gone away (EPIPE, or a
// closed pipe), which a command in a pipeline such as `... | head -1` should take as a quiet end.
func IsBrokenPipe(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe)
}
