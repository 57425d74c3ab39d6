package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// Log appends hash-chained records. Each line ends with its own hash (the sha256 of the
// line without that field) and starts its chain with prev, the hash of the line before it. So
// a line edited in place no longer matches its own hash, and removing, inserting or reordering
// lines breaks a prev. Anyone can recompute every hash, though: keep the hash of the last line
// (verify-audit prints it) somewhere the log's writer cannot change, and check the log against
// it with verify-audit --head to notice lines rewritten or removed from the end.
//
// A line is written whole or not at all: when a write fails part way (a full disk), the file is
// cut back to where the line started, so the log still verifies. size is that place.
type Log struct {
	f    File
	name string
	prev *string
	size int64 // bytes of whole lines: where the next line starts
	sync bool  // fsync after each line
	// torn is set when a failed line could not be cut back: nothing more is appended.
	torn error
}

// File is what an audit log is written through: an *os.File.
type File interface {
	io.Writer
	Truncate(size int64) error
	Sync() error
	Close() error
}

// Options say how a log is opened.
type Options struct {
	// Sync flushes every line to the disk before Append returns.
	Sync bool
	// Wrap, when set, is given the opened file and returns what lines are written through:
	// tests put a failing file (a full disk) under the log.
	Wrap func(*os.File) File
}

func (o Options) wrap(f *os.File) File {
	if o.Wrap != nil {
		return o.Wrap(f)
	}
	return f
}

// Open opens (or creates) the audit log for appending, takes an exclusive lock on it, checks
// its chain and returns the records already there (for the limits). A log whose chain is
// broken is refused: the limits would be rebuilt from records that cannot be trusted. A torn
// last line (a write cut short by a full disk or a crash) is refused with a pointer to
// repair-audit. With o.Sync, every line is flushed to the disk before its answer is sent.
// Errors are usage errors (exit 2).
func Open(name string, o Options) (*Log, []Record, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, cmdutil.Errorf(cmdutil.ExitUsage, "audit log: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, nil, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage, "audit log %s is in use by another process", name),
			"give each fr-approve its own --audit file")
	}
	var recs []Record
	end, err := Scan(name, f, func(r Record) { recs = append(recs, r) })
	if err != nil {
		f.Close()
		return nil, nil, openError(name, err)
	}
	if o.Sync {
		// the file may be new: its name must reach the disk too
		if err := syncDir(name); err != nil {
			f.Close()
			return nil, nil, cmdutil.Errorf(cmdutil.ExitUsage, "audit log: %v", err)
		}
	}
	return &Log{f: o.wrap(f), name: name, prev: end.Prev, size: end.End, sync: o.Sync}, recs, nil
}

// openError is why Open refuses a log that does not verify.
func openError(name string, err error) error {
	var ce *ChainError
	if !errors.As(err, &ce) {
		return cmdutil.Errorf(cmdutil.ExitUsage, "audit log: %v", err)
	}
	if ce.Torn {
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage,
			"audit log %s: line %d: the line is incomplete: a write to the log was cut short (a full disk, a crash)", name, ce.Line),
			RepairHint(name))
	}
	return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage, "audit log %s: line %d: %s", name, ce.Line, ce.Msg),
		"check it with 'fr-approve verify-audit "+name+"'; start a new log rather than append to this one")
}

// syncDir flushes the directory holding name to the disk.
func syncDir(name string) error {
	d, err := os.Open(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// AppendError is a line the audit log could not take. The log is cut back to its last whole
// line, and still verifies, unless Torn says that failed too.
type AppendError struct {
	File string
	Err  error // the failed write or fsync
	// Torn is the error cutting the partial line back: the log ends in a torn line, which
	// repair-audit cuts.
	Torn error
}

func (e *AppendError) Error() string {
	if e.Torn != nil {
		return fmt.Sprintf("audit log %s: %v, and the partial line could not be cut back: %v", e.File, e.Err, e.Torn)
	}
	return fmt.Sprintf("audit log %s: %v", e.File, e.Err)
}

func (e *AppendError) Unwrap() error { return e.Err }

// Append writes one record in a single write (then fsyncs it, with Sync set). When that fails,
// the file is cut back to where the line started: the log holds whole lines only, and the
// error is an *AppendError.
func (a *Log) Append(rec Record) error {
	if a.torn != nil {
		return a.torn
	}
	rec.Prev = a.prev
	line, h := Seal(Encode(&rec))
	line = append(line, '\n')
	_, err := a.f.Write(line)
	if err == nil && a.sync {
		err = a.f.Sync()
	}
	if err != nil {
		e := &AppendError{File: a.name, Err: err}
		if terr := a.f.Truncate(a.size); terr != nil {
			e.Torn = terr
			a.torn = e
		}
		return e
	}
	a.size += int64(len(line))
	a.prev = &h
	return nil
}

// Name is the log's file name.
func (a *Log) Name() string { return a.name }

// Last is the hash of the log's last line, nil while it is empty.
func (a *Log) Last() *string { return a.prev }

// Close closes the log's file.
func (a *Log) Close() error { return a.f.Close() }
