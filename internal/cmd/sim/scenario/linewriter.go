package scenario

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// LineWriter writes event lines to a stream the way fuseraft does, with the line-level faults:
// CRLF line ends, plain-text noise lines, and lines split into pieces with pauses. Each line is
// written (and so flushed) as a whole unless split; it is safe for concurrent use.
type LineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	out    io.Writer // w, or the batch buffer
	batch  *bufio.Writer
	f      Faults
	lines  int
	noise  int
	buf    []byte
	NoWait bool // split pieces are still separate writes, without the pauses
}

// NewLineWriter returns a LineWriter over w applying f's crlf, noise and split.
func NewLineWriter(w io.Writer, f Faults) *LineWriter {
	return &LineWriter{w: w, out: w, f: f}
}

// BeginBatch holds lines in a buffer, written in 64 KiB blocks, until EndBatch.
func (l *LineWriter) BeginBatch() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.batch == nil {
		l.batch = bufio.NewWriterSize(l.w, 64<<10)
	}
	l.out = l.batch
}

// EndBatch writes what BeginBatch held back; each line is written at once again.
func (l *LineWriter) EndBatch() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out = l.w
	if l.batch == nil {
		return nil
	}
	return l.batch.Flush()
}

func (l *LineWriter) end() string {
	if l.f.CRLF {
		return "\r\n"
	}
	return "\n"
}

// WriteLine writes b and a line end, with noise and split as configured.
func (l *LineWriter) WriteLine(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.f.Noise) > 0 {
		every := l.f.NoiseEvery
		if every <= 0 {
			every = 4
		}
		if l.lines%every == 0 {
			n := l.f.Noise[l.noise%len(l.f.Noise)]
			l.noise++
			if err := l.write([]byte(n + l.end())); err != nil {
				return err
			}
		}
	}
	l.lines++
	l.buf = append(append(l.buf[:0], b...), l.end()...)
	return l.write(l.buf)
}

// WriteText writes a plain-text line (not JSON), as fuseraft's console output does.
func (l *LineWriter) WriteText(s string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.write([]byte(s + l.end()))
}

// WritePartial writes b with no line end (a crash mid-line).
func (l *LineWriter) WritePartial(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.out.Write(b)
	return err
}

func (l *LineWriter) write(b []byte) error {
	sp := l.f.Split
	if sp == nil || sp.Bytes <= 0 || len(b) <= sp.Bytes || l.out != l.w {
		_, err := l.out.Write(b)
		return err
	}
	for len(b) > 0 {
		n := min(sp.Bytes, len(b))
		if _, err := l.w.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if len(b) > 0 && !l.NoWait && sp.Pause > 0 {
			time.Sleep(sp.Pause.D())
		}
	}
	return nil
}
