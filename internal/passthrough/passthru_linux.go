//go:build linux

package passthrough

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeSize is the private pipe's capacity, and the most Next sees at a time: as large as the
// pipes fr's commands ask for on their side.
const pipeSize = 1 << 20

// Lines passes on the lines of a pipe that the caller keeps. Next returns the next line; Pass
// keeps it as it is, Write puts other bytes in its place, and a line neither passed nor written
// is left out. Lines kept are moved out together before Next waits for more input. A Lines is
// used by one goroutine.
type Lines struct {
	in, out     *os.File
	inRC, outRC syscall.RawConn
	teeFlags    int // SPLICE_F_NONBLOCK when in is non-blocking: the poller waits instead
	outFlags    int
	peekR       *os.File // the private pipe that tee fills
	peekW       int
	max         int

	buf      []byte // what tee last showed, read from the private pipe
	whole    int    // buf[:whole] is whole lines still at the head of the source
	pos      int    // the next line starts at buf[pos]
	long     []byte // a line already read off the source (owned): not at its head any more
	cur      []byte // the line Next last returned
	owned    bool   // cur was read off the source: Pass writes it
	kept     bool   // cur is to be passed
	runs     []run  // bytes at the source's head not yet moved out or read off, in order
	noSplice bool
	err      error // sticky: the source's end or error, or a line too long
	outErr   error // sticky: the output's
	scratch  []byte
}

// run is a stretch of the source's head: to move out (keep), or to read off and drop.
type run struct {
	keep bool
	n    int
}

// New returns a Lines moving lines from the pipe in to out, or nil when in is not a pipe or
// out cannot take spliced data as it is (a terminal, a file opened for appending) or the
// system refuses the private pipe. max is the longest line accepted, line end not counted.
func New(in, out *os.File, max int) *Lines {
	if !isPipe(in) || !canSplice(out) {
		return nil
	}
	inRC, err1 := in.SyscallConn()
	outRC, err2 := out.SyscallConn()
	if err1 != nil || err2 != nil {
		return nil
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil
	}
	_, _ = unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, pipeSize)
	size, err := unix.FcntlInt(uintptr(p[1]), unix.F_GETPIPE_SZ, 0)
	if err != nil || size <= 0 {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil
	}
	l := &Lines{in: in, out: out, inRC: inRC, outRC: outRC, peekR: os.NewFile(uintptr(p[0]), "peek"), peekW: p[1],
		max: max, buf: make([]byte, size)}
	if nonBlocking(inRC) {
		l.teeFlags = unix.SPLICE_F_NONBLOCK
	}
	if nonBlocking(outRC) {
		l.outFlags = unix.SPLICE_F_NONBLOCK
	}
	return l
}

// Close releases the private pipe. It does not close the source or the output.
func (l *Lines) Close() error {
	unix.Close(l.peekW)
	return l.peekR.Close()
}

// Next returns the next line of the source, its '\n' included (the last line of the source may
// have none). The slice is valid until the next call. Lines kept before it are moved out before
// Next waits for input. At the source's end it returns io.EOF.
func (l *Lines) Next() ([]byte, error) {
	l.settle()
	if l.pos < l.whole {
		e := l.pos + bytes.IndexByte(l.buf[l.pos:l.whole], '\n') + 1
		l.cur, l.owned = l.buf[l.pos:e], false
		l.pos = e
		if l.over(l.cur) {
			// The lines kept before it still go out.
			l.cur = nil
			if err := l.flush(); err != nil {
				return nil, l.fail(err)
			}
			return nil, l.fail(tooLong(l.max))
		}
		return l.cur, nil
	}
	if err := l.flush(); err != nil && l.err == nil {
		l.err = err
	}
	if l.err != nil {
		return nil, l.err
	}
	return l.peek()
}

// Pass keeps the line Next last returned: it goes out as it is. It returns the output's error,
// once it has one.
func (l *Lines) Pass() error {
	if l.outErr != nil {
		return l.outErr
	}
	if l.owned {
		l.write(l.cur)
		return l.outErr
	}
	l.kept = true
	return nil
}

// Write puts b out in place of the line Next last returned, after the lines kept before it.
func (l *Lines) Write(b []byte) error {
	if l.outErr != nil {
		return l.outErr
	}
	if err := l.flush(); err != nil {
		return err
	}
	l.write(b)
	return l.outErr
}

// settle records what became of the line Next last returned, when it was at the source's head.
func (l *Lines) settle() {
	if l.cur != nil && !l.owned {
		keep := l.kept && l.outErr == nil
		if k := len(l.runs) - 1; k >= 0 && l.runs[k].keep == keep {
			l.runs[k].n += len(l.cur)
		} else {
			l.runs = append(l.runs, run{keep, len(l.cur)})
		}
	}
	l.cur, l.kept, l.owned = nil, false, false
}

// flush moves out the lines kept at the source's head and reads off those left out, in order.
// It returns the source's error; the output's is kept in outErr.
func (l *Lines) flush() error {
	runs := l.runs
	l.runs = l.runs[:0]
	for _, r := range runs {
		if r.keep && l.outErr == nil {
			if err := l.splice(r.n); err != nil {
				return err
			}
			continue
		}
		if err := l.discard(r.n); err != nil {
			return err
		}
	}
	return nil
}

// splice moves n bytes from the source's head to the output.
func (l *Lines) splice(n int) error {
	if l.noSplice {
		return l.copyOut(n)
	}
	for n > 0 {
		var m int
		var err error
		cerr := l.inRC.Control(func(ifd uintptr) {
			werr := l.outRC.Write(func(ofd uintptr) bool {
				for {
					var k int64
					k, err = unix.Splice(int(ifd), nil, int(ofd), nil, n, l.outFlags)
					m = int(k)
					if err != unix.EAGAIN {
						return true
					}
					if l.outFlags != 0 {
						return false // the poller waits for room
					}
					// A pipe to a pipe does not wait when either end is non-blocking, as the
					// source is: wait for room here, as a write to the output would.
					if err = waitWritable(int(ofd)); err != nil {
						return true
					}
				}
			})
			if err == nil {
				err = werr
			}
		})
		if cerr != nil {
			return closed(cerr)
		}
		switch {
		case err == unix.EINVAL && !l.noSplice:
			// The output takes no spliced data after all: copy through memory from here on.
			l.noSplice = true
			return l.copyOut(n)
		case err != nil:
			l.outErr = &os.PathError{Op: "write", Path: l.out.Name(), Err: err}
			return l.discard(n)
		case m == 0:
			return io.ErrUnexpectedEOF
		}
		n -= m
	}
	return nil
}

// copyOut reads n bytes off the source and writes them to the output.
func (l *Lines) copyOut(n int) error { return l.consume(n, true) }

// discard reads n bytes off the source and drops them.
func (l *Lines) discard(n int) error { return l.consume(n, false) }

// consume reads n bytes off the source, writing them to the output when out says so.
func (l *Lines) consume(n int, out bool) error {
	for n > 0 {
		b, err := l.readOff(n)
		if err != nil {
			return err
		}
		if out {
			l.write(b)
		}
		n -= len(b)
	}
	return nil
}

// readOff reads up to n bytes (at least one) off the source into scratch.
func (l *Lines) readOff(n int) ([]byte, error) {
	if l.scratch == nil {
		l.scratch = make([]byte, 64<<10)
	}
	k, err := l.in.Read(l.scratch[:min(n, len(l.scratch))])
	if k == 0 && err == nil {
		err = io.ErrUnexpectedEOF
	}
	if k == 0 {
		return nil, err
	}
	return l.scratch[:k], nil
}

// write writes b to the output, keeping its first error.
func (l *Lines) write(b []byte) {
	if l.outErr != nil {
		return
	}
	if _, err := l.out.Write(b); err != nil {
		l.outErr = err
	}
}

// over reports whether the whole line (its '\n' included) is longer than the limit once its
// line end, and a '\r' before it, are left out, as wire.Reader counts.
func (l *Lines) over(line []byte) bool {
	n := len(line) - 1
	if n > 0 && line[n-1] == '\r' {
		n--
	}
	return n > l.max
}

// OutErr returns the output's first error: it may come to light when lines kept are moved
// out, after Pass returned.
func (l *Lines) OutErr() error { return l.outErr }

// fail makes err the Lines' error from now on.
func (l *Lines) fail(err error) error {
	l.err = err
	l.cur = nil
	return err
}

// peek waits for input and returns its first line: from what tee shows when a whole line is
// at the source's head, or read off the source when not.
func (l *Lines) peek() ([]byte, error) {
	l.long = l.long[:0]
	for {
		n, err := l.tee()
		if err != nil {
			return nil, l.fail(err)
		}
		if n == 0 {
			// The source's end. A last line without a line end is passed as it is.
			if len(l.long) > 0 {
				l.cur, l.owned = l.long, true
				l.err = io.EOF
				return l.cur, nil
			}
			return nil, l.fail(io.EOF)
		}
		e := bytes.IndexByte(l.buf[:n], '\n') + 1
		if len(l.long) == 0 && e > 0 {
			l.whole, l.pos = bytes.LastIndexByte(l.buf[:n], '\n')+1, 0
			return l.Next()
		}
		// No whole line at the head: read it off, to its end if it is there.
		content := len(l.long) + e - 1 // the line so far, its line end not counted
		if e == 0 {
			e, content = n, len(l.long)+n
		}
		if content > l.max+1 { // +1: a '\r' before the '\n' is not counted
			return nil, l.fail(tooLong(l.max))
		}
		if err := l.readInto(e); err != nil {
			return nil, l.fail(err)
		}
		if l.long[len(l.long)-1] == '\n' {
			if l.over(l.long) {
				return nil, l.fail(tooLong(l.max))
			}
			l.cur, l.owned = l.long, true
			return l.cur, nil
		}
	}
}

// readInto reads the next n bytes of the source onto the end of long.
func (l *Lines) readInto(n int) error {
	for n > 0 {
		start := len(l.long)
		l.long = append(l.long, make([]byte, n)...)
		k, err := io.ReadAtLeast(l.in, l.long[start:], n)
		l.long = l.long[:start+k]
		if err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// tee waits for input and copies what the source holds, without consuming it, into buf. It
// returns 0 at the source's end.
func (l *Lines) tee() (int, error) {
	var n int64
	var err error
	rerr := l.inRC.Read(func(fd uintptr) bool {
		n, err = unix.Tee(int(fd), l.peekW, len(l.buf), l.teeFlags)
		return !(err == unix.EAGAIN && l.teeFlags != 0)
	})
	if rerr != nil {
		// The wait was cut short: the source was closed.
		return 0, closed(rerr)
	}
	if err != nil {
		return 0, &os.PathError{Op: "read", Path: l.in.Name(), Err: err}
	}
	if _, err := io.ReadFull(l.peekR, l.buf[:n]); err != nil {
		return 0, err
	}
	return int(n), nil
}

// waitWritable waits until fd has room for more.
func waitWritable(fd int) error {
	for {
		_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}, -1)
		if err != unix.EINTR {
			return err
		}
	}
}

// closed returns os.ErrClosed for the error a RawConn gives once its file is closed (the
// poller's own "use of closed file", which the os package turns into os.ErrClosed for its
// reads and writes, but not for a RawConn), and err itself otherwise.
func closed(err error) error {
	if errors.Is(err, os.ErrClosed) || err.Error() == "use of closed file" {
		return os.ErrClosed
	}
	return err
}

// isPipe reports whether f is a pipe.
func isPipe(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeNamedPipe != 0
}

// canSplice reports whether data spliced to f lands as written would: a pipe, a socket, or a
// file not opened for appending (splice refuses those).
func canSplice(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	switch m := fi.Mode(); {
	case m&(os.ModeNamedPipe|os.ModeSocket) != 0:
		return true
	case m.IsRegular():
		rc, err := f.SyscallConn()
		if err != nil {
			return false
		}
		flags := unix.O_APPEND
		_ = rc.Control(func(fd uintptr) { flags, _ = unix.FcntlInt(fd, unix.F_GETFL, 0) })
		return flags&unix.O_APPEND == 0
	}
	return false
}

// nonBlocking reports whether the file under rc is in non-blocking mode (Go's poller waits for
// it).
func nonBlocking(rc syscall.RawConn) bool {
	nb := false
	_ = rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nb = err == nil && fl&unix.O_NONBLOCK != 0
	})
	return nb
}
