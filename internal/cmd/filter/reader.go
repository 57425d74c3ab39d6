package filter

import (
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/pkg/wire"
)

// lineReader reads lines as wire.Reader does (\n or \r\n ends a line, a last line without one
// counts, wire.DefaultMaxLine at most, BeforeRead before a read that may block), but a line
// longer than its buffer (maxBuf) is read in pieces: its type is followed as it goes by
// (jsonscan.Stream), and a line of a type that is dropped is not held at all past the point
// where its type is known. A line that is kept is held once, in pieces of maxBuf bytes.
type lineReader struct {
	src        io.Reader
	beforeRead func()
	keepCR     bool
	maxLine    int
	maxBuf     int

	buf    []byte
	r, w   int
	err    error
	line   int64
	broken error
}

// longLine is a line longer than the read buffer.
type longLine struct {
	chunks [][]byte // the line's bytes; nil when dropped
	n      int
	sh     jsonscan.Shape // jsonscan.Scan's result on the whole line
	// dropped: its type was one to drop, so its bytes were let go. flipped: a later "type"
	// key then made it a type to keep (the last one counts), too late to keep its bytes.
	dropped, flipped bool
}

// bytes returns the line in one piece, and lets the pieces go.
func (l *longLine) bytes() []byte {
	b := make([]byte, 0, l.n)
	for _, c := range l.chunks {
		b = append(b, c...)
	}
	l.chunks = nil
	return b
}

func newLineReader(src io.Reader, beforeRead func(), keepCR bool) *lineReader {
	return &lineReader{src: src, beforeRead: beforeRead, keepCR: keepCR, maxLine: wire.DefaultMaxLine,
		maxBuf: 4 << 20, buf: make([]byte, 64<<10)}
}

func (r *lineReader) LineNumber() int64 { return r.line }

func (r *lineReader) fill() {
	if r.r > 0 {
		copy(r.buf, r.buf[r.r:r.w])
		r.w -= r.r
		r.r = 0
	}
	if r.beforeRead != nil {
		r.beforeRead()
	}
	for i := 0; i < 100; i++ {
		n, err := r.src.Read(r.buf[r.w:])
		r.w += n
		if err != nil {
			r.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.err = io.ErrNoProgress
}

func (r *lineReader) tooLong() error {
	r.broken = &wire.LineTooLongError{Line: r.line + 1, Limit: r.maxLine}
	return r.broken
}

// ReadLine returns the next line without its line end; the slice is valid until the next call.
// A line longer than the buffer is returned as a *longLine instead. drop, when not nil, says
// from a string type (quoted, and whether it must be unquoted) that a line is dropped.
func (r *lineReader) ReadLine(drop func(raw []byte, esc bool) bool) ([]byte, *longLine, error) {
	if r.broken != nil {
		return nil, nil, r.broken
	}
	scanned := 0
	for {
		if i := bytes.IndexByte(r.buf[r.r+scanned:r.w], '\n'); i >= 0 {
			end := r.r + scanned + i
			line := r.buf[r.r:end]
			r.r = end + 1
			return r.finish(line)
		}
		scanned = r.w - r.r
		if scanned > r.maxLine+1 {
			return nil, nil, r.tooLong()
		}
		if r.err != nil {
			if r.w > r.r {
				line := r.buf[r.r:r.w]
				r.r = r.w
				return r.finish(line)
			}
			return nil, nil, r.err
		}
		if r.w == len(r.buf) && r.r == 0 {
			if len(r.buf) >= r.maxBuf {
				return r.readLong(drop)
			}
			nb := make([]byte, len(r.buf)*2)
			copy(nb, r.buf[:r.w])
			r.buf = nb
		}
		r.fill()
	}
}

func (r *lineReader) finish(line []byte) ([]byte, *longLine, error) {
	r.line++
	if n := len(line); n > 0 && line[n-1] == '\r' && !r.keepCR {
		line = line[:n-1]
	}
	if len(line) > r.maxLine {
		r.line--
		return nil, nil, r.tooLong()
	}
	return line, nil, nil
}

// readLong reads the rest of a line that fills the buffer, in pieces.
func (r *lineReader) readLong(drop func(raw []byte, esc bool) bool) ([]byte, *longLine, error) {
	l := &longLine{}
	var st jsonscan.Stream
	for {
		piece := r.buf[r.r:r.w]
		eol := bytes.IndexByte(piece, '\n')
		if eol >= 0 {
			piece = piece[:eol]
		}
		st.Write(piece)
		l.n += len(piece)
		if l.n > r.maxLine+1 {
			return nil, nil, r.tooLong()
		}
		if !l.dropped && len(piece) > 0 {
			l.chunks = append(l.chunks, append(make([]byte, 0, len(piece)), piece...))
		}
		if drop != nil && !l.dropped {
			if raw, esc, ok := st.Typed(); ok && drop(raw, esc) {
				l.dropped, l.chunks = true, nil
			}
		}
		if eol >= 0 {
			r.r += eol + 1
			break
		}
		r.r = r.w
		if r.err != nil {
			break
		}
		r.fill()
		if r.w == r.r && r.err != nil {
			break
		}
	}
	r.line++
	if !r.keepCR && l.n > 0 {
		if last := len(l.chunks) - 1; last >= 0 {
			c := l.chunks[last]
			if c[len(c)-1] == '\r' {
				l.chunks[last] = c[:len(c)-1]
				if len(l.chunks[last]) == 0 {
					l.chunks = l.chunks[:last]
				}
				l.n--
			}
		}
	}
	if l.n > r.maxLine {
		r.line--
		return nil, nil, r.tooLong()
	}
	l.sh = st.End()
	if l.dropped {
		raw, esc, ok := st.Typed()
		l.flipped = ok && !drop(raw, esc)
	}
	return nil, l, nil
}

// piecesUTF8 reports whether the pieces of a line, put together, are UTF-8, without putting
// them together: a character cut between two pieces is completed from the next.
func piecesUTF8(chunks [][]byte) bool {
	var cut [utf8.UTFMax]byte // the start of a character cut at the end of a piece
	n := 0
	for _, c := range chunks {
		if n > 0 {
			for n < utf8.UTFMax && !utf8.FullRune(cut[:n]) && len(c) > 0 {
				cut[n] = c[0]
				n, c = n+1, c[1:]
			}
			if !utf8.FullRune(cut[:n]) {
				continue // this piece is too short to complete it
			}
			if r, size := utf8.DecodeRune(cut[:n]); r == utf8.RuneError && size <= 1 || size != n {
				return false
			}
			n = 0
		}
		if jsonscan.TextFlags(c)&jsonscan.HighBytes == 0 {
			continue
		}
		// Set aside a character cut at the end: it starts in the last 3 bytes.
		for i := len(c) - 1; i >= 0 && i >= len(c)-(utf8.UTFMax-1); i-- {
			if utf8.RuneStart(c[i]) {
				if !utf8.FullRune(c[i:]) {
					n = copy(cut[:], c[i:])
					c = c[:i]
				}
				break
			}
		}
		if !jsonscan.UTF8(c) {
			return false
		}
	}
	return n == 0
}
