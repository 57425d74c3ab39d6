package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/fuseraft/fr/internal/humanize"
)

// DefaultMaxLine is the longest line a [Reader] accepts unless told otherwise: 256 MiB.
// fuseraft sets no maximum, and tool output or file contents can be whole files.
const DefaultMaxLine = 256 << 20

// LineTooLongError is returned by [Reader.Next] for a line longer than the reader's limit.
// The stream cannot be resynchronised safely after it, so readers stop there.
type LineTooLongError struct {
	Line  int64 // 1-based number of the offending line
	Limit int   // the limit in bytes
}

// Error gives the line number and the limit it passed.
func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("line %d is longer than the limit of %s", e.Line, humanize.Bytes(e.Limit))
}

// ReaderOptions configure a [Reader]. The zero value is ready to use.
type ReaderOptions struct {
	// MaxLine is the longest accepted line in bytes, line end excluded. 0 means DefaultMaxLine.
	MaxLine int
	// BeforeRead, if set, is called each time the reader is about to read from its source,
	// that is, when everything read so far has been consumed and the next read may block.
	// Pass a Writer's Flush to get output that is live on a slow source and batched on a
	// fast one.
	BeforeRead func()
	// KeepCR keeps a \r before the \n as part of the line (for text read as it is).
	KeepCR bool
}

// Reader reads a JSONL stream one line at a time. Unlike bufio.Scanner it has no 64 KiB
// ceiling: lines grow up to ReaderOptions.MaxLine. Both \n and \r\n end a line, and a last
// line without a line end is still returned.
type Reader struct {
	src    io.Reader
	opts   ReaderOptions
	buf    []byte
	r, w   int   // buf[r:w] is unread
	err    error // sticky error from src
	line   int64
	long   []byte // accumulates a line longer than buf
	broken error  // sticky LineTooLongError
	// nl, when not 0, is 1 + the index in buf of the '\n' that ends the next line, as hasLine
	// found it.
	nl int
	// keep makes the lines returned stay as they are: buf is never written again before r,
	// and a new buffer takes over once it is used up (only a line gathered in long is reused).
	keep bool
}

const initialBuf = 64 << 10

// minRead is the least room a Reader that keeps its lines reads into before it takes a new
// buffer.
const minRead = 4 << 10

// NewReader returns a Reader over src.
func NewReader(src io.Reader, opts ReaderOptions) *Reader {
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	return &Reader{src: src, opts: opts, buf: make([]byte, initialBuf)}
}

// Buffered reports how many bytes have been read from the source but not yet returned.
func (r *Reader) Buffered() int { return r.w - r.r }

// LineNumber is the 1-based number of the line last returned by Next.
func (r *Reader) LineNumber() int64 { return r.line }

// fill reads more data into buf, compacting it first. It returns the number of bytes read.
func (r *Reader) fill() int {
	if r.keep && r.r > 0 && len(r.buf)-r.w < minRead {
		// The lines returned point into buf: the rest goes into a new buffer.
		tail := r.w - r.r
		n := initialBuf
		for n < 2*tail && n < len(r.buf) {
			n *= 2
		}
		nb := make([]byte, n)
		copy(nb, r.buf[r.r:r.w])
		r.buf, r.r, r.w = nb, 0, tail
	} else if r.r > 0 && !r.keep {
		copy(r.buf, r.buf[r.r:r.w])
		r.w -= r.r
		r.r = 0
	}
	if r.opts.BeforeRead != nil {
		r.opts.BeforeRead()
	}
	for i := 0; i < 100; i++ {
		n, err := r.src.Read(r.buf[r.w:])
		r.w += n
		if err != nil {
			r.err = err
			return n
		}
		if n > 0 {
			return n
		}
	}
	r.err = io.ErrNoProgress
	return 0
}

// ReadLine returns the next line's bytes without its line end. The slice is only valid until
// the next call. At the end of the stream it returns io.EOF; a line past the limit returns a
// *LineTooLongError, and the reader returns that error from then on.
func (r *Reader) ReadLine() ([]byte, error) {
	if r.broken != nil {
		return nil, r.broken
	}
	r.long = r.long[:0]
	if r.nl > 0 {
		end := r.nl - 1
		r.nl = 0
		line := r.buf[r.r:end]
		r.r = end + 1
		return r.finish(line)
	}
	scanned := 0 // bytes of buf[r.r:] already searched for '\n'
	for {
		if i := bytes.IndexByte(r.buf[r.r+scanned:r.w], '\n'); i >= 0 {
			end := r.r + scanned + i
			var line []byte
			if len(r.long) > 0 {
				r.long = append(r.long, r.buf[r.r:end]...)
				line = r.long
			} else {
				line = r.buf[r.r:end]
			}
			r.r = end + 1
			return r.finish(line)
		}
		scanned = r.w - r.r
		if len(r.long)+scanned > r.opts.MaxLine+1 { // +1: a trailing \r is not part of the line
			return nil, r.tooLong()
		}
		if r.err != nil {
			if r.w > r.r || len(r.long) > 0 {
				var line []byte
				if len(r.long) > 0 {
					line = append(r.long, r.buf[r.r:r.w]...)
				} else {
					line = r.buf[r.r:r.w]
				}
				r.r = r.w
				return r.finish(line)
			}
			if r.err == io.EOF {
				return nil, io.EOF
			}
			return nil, r.err
		}
		if r.w == len(r.buf) {
			if r.r == 0 {
				// The buffer is full of one unfinished line: grow it up to 4 MiB, then
				// accumulate the rest separately so the read buffer stays small.
				if len(r.buf) < 4<<20 {
					nb := make([]byte, len(r.buf)*2)
					copy(nb, r.buf[:r.w])
					r.buf = nb
				} else {
					r.long = append(r.long, r.buf[:r.w]...)
					r.w = 0
					scanned = 0
				}
			}
		}
		r.fill()
	}
}

func (r *Reader) finish(line []byte) ([]byte, error) {
	r.line++
	if n := len(line); n > 0 && line[n-1] == '\r' && !r.opts.KeepCR {
		line = line[:n-1]
	}
	if len(line) > r.opts.MaxLine {
		r.line--
		return nil, r.tooLong()
	}
	return line, nil
}

func (r *Reader) tooLong() error {
	r.broken = &LineTooLongError{Line: r.line + 1, Limit: r.opts.MaxLine}
	r.long = nil
	return r.broken
}

// Next reads and classifies the next line. Line.Raw is only valid until the next call;
// use Line.Clone to keep it.
func (r *Reader) Next() (Line, error) {
	b, err := r.ReadLine()
	if err != nil {
		return Line{}, err
	}
	return ParseLine(b), nil
}

// IsLineTooLong reports whether err is a *LineTooLongError.
func IsLineTooLong(err error) bool {
	var e *LineTooLongError
	return errors.As(err, &e)
}

// hasLine reports whether the next ReadLine returns without reading from the source.
func (r *Reader) hasLine() bool {
	if r.nl > 0 || r.broken != nil || r.err != nil {
		return true
	}
	if i := bytes.IndexByte(r.buf[r.r:r.w], '\n'); i >= 0 {
		r.nl = r.r + i + 1
		return true
	}
	return false
}

// kept reports whether the line ReadLine returned last stays as it is (see keep).
func (r *Reader) kept() bool { return r.keep && len(r.long) == 0 }
