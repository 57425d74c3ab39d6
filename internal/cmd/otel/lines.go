package otel

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader passes its input to an output byte for byte, as tee does, and hands each line to
// the caller to look at. A line is written out as soon as it has been read, before the caller
// sees it, so what fr-otel does with a line never holds it up; the output is flushed whenever
// the input has nothing more ready.
type lineReader struct {
	br  *bufio.Reader
	out *bufio.Writer
	max int    // longest line looked at; longer ones are passed on unseen
	buf []byte // a line longer than br's buffer, gathered
	// outErr is the first error writing the output (a reader that went away).
	outErr error
}

func newLineReader(r io.Reader, out *bufio.Writer, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), out: out, max: max}
}

// next returns the next line without its line end (\n or \r\n). tooLong says the line was
// longer than max: it was passed on, but line is nil. At the end of the input it returns
// io.EOF; a last line without a line end is returned first, and passed on as it was.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	long := false
	for {
		if lr.br.Buffered() == 0 {
			lr.flush()
		}
		chunk, rerr := lr.br.ReadSlice('\n')
		if len(chunk) > 0 {
			lr.write(chunk)
		}
		switch {
		case errors.Is(rerr, bufio.ErrBufferFull):
			// room for the line end, which is not counted
			if !long && len(lr.buf)+len(chunk) <= lr.max+2 {
				lr.buf = append(lr.buf, chunk...)
			} else {
				long, lr.buf = true, lr.buf[:0]
			}
			continue
		case rerr != nil && len(chunk) == 0 && len(lr.buf) == 0 && !long:
			lr.flush()
			return nil, false, rerr
		}
		// The line is whole: out it goes, before the caller looks at it, when nothing more
		// is ready to read.
		if lr.br.Buffered() == 0 {
			lr.flush()
		}
		if long {
			return nil, true, nil
		}
		line = chunk
		if len(lr.buf) > 0 {
			lr.buf = append(lr.buf, chunk...)
			line = lr.buf
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > lr.max {
			return nil, true, nil
		}
		// an error other than the end comes again on the next call
		return line, false, nil
	}
}

func (lr *lineReader) write(b []byte) {
	if lr.outErr != nil {
		return
	}
	if _, err := lr.out.Write(b); err != nil {
		lr.outErr = err
	}
}

func (lr *lineReader) flush() {
	if lr.outErr == nil {
		if err := lr.out.Flush(); err != nil {
			lr.outErr = err
		}
	}
}
