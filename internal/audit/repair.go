package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// RepairOptions say how far Repair may go.
type RepairOptions struct {
	Force  bool // also cut from a complete line that breaks the chain
	DryRun bool // say what would be cut, change nothing
	Now    time.Time
	// Wrap is Options.Wrap, for the record of the cut.
	Wrap func(*os.File) File
}

// ErrNotTorn is returned by Repair when the chain breaks at a complete line.
var ErrNotTorn = errors.New("not a torn last line")

// Repair cuts what follows the last line of name that verifies: a torn last line (a write cut
// short), or with o.Force anything from the first line that breaks the chain. The bytes cut are
// first saved to name.torn-TIME, then the file is cut, then a record of the cut (type
// audit_repair, with Cut) is appended to the chain and synced, so the cut is itself audited. It
// returns the log's state after the repair (Cut nil when nothing was wrong).
func Repair(name string, o RepairOptions) (VerifyResult, error) {
	res := VerifyResult{File: name}
	flags := os.O_RDWR | os.O_APPEND
	if o.DryRun {
		flags = os.O_RDONLY
	}
	f, err := os.OpenFile(name, flags, 0)
	if err != nil {
		return res, cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return res, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage, "audit log %s is in use by another process", name),
			"stop the fr-approve writing it first")
	}
	end, err := Scan(name, f, nil)
	var ce *ChainError
	if err != nil && !errors.As(err, &ce) {
		return res, cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
	}
	res.Lines, res.OK = end.Lines, true
	if end.Prev != nil {
		res.Last = *end.Prev
	}
	if ce == nil {
		return res, nil // nothing to cut
	}
	if !ce.Torn && !o.Force {
		return res, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "audit chain broken at %v: %v", ce, ErrNotTorn),
			fmt.Sprintf("the line is complete, so it was not left by a failed write: look at it with 'fr-approve verify-audit %s'", name),
			fmt.Sprintf("to cut from line %d to the end anyway (the bytes are saved beside the log), pass --force", ce.Line))
	}
	fi, err := f.Stat()
	if err != nil {
		return res, cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
	}
	cut := &Cut{Line: ce.Line, Offset: end.End, Bytes: fi.Size() - end.End, Reason: ce.Msg}
	tail := io.NewSectionReader(f, end.End, cut.Bytes)
	if o.DryRun {
		sum := sha256.New()
		if _, err := io.Copy(sum, tail); err != nil {
			return res, cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
		}
		cut.SHA256 = "sha256:" + hex.EncodeToString(sum.Sum(nil))
		res.Cut = cut
		return res, nil
	}
	return cutTail(f, end, cut, tail, o, res)
}

// cutTail saves the bytes of tail, cuts them from f and records the cut in the chain.
func cutTail(f *os.File, end End, cut *Cut, tail io.Reader, o RepairOptions, res VerifyResult) (VerifyResult, error) {
	name := res.File
	sum := sha256.New()
	saved, err := saveTail(name, o.Now, io.TeeReader(tail, sum))
	if err != nil {
		return res, cmdutil.Errorf(cmdutil.ExitFailed, "saving the bytes to cut: %v (nothing was cut)", err)
	}
	cut.SHA256, cut.Saved = "sha256:"+hex.EncodeToString(sum.Sum(nil)), saved
	res.Cut = cut
	if err := f.Truncate(end.End); err != nil {
		return res, cmdutil.Errorf(cmdutil.ExitFailed, "cutting %s: %v (nothing was cut; the bytes are saved in %s)", name, err, saved)
	}
	a := &Log{f: Options{Wrap: o.Wrap}.wrap(f), name: name, prev: end.Prev, size: end.End, sync: true}
	rec := Record{Time: o.Now.UTC().Format(time.RFC3339Nano), Type: TypeRepair,
		Summary:  fmt.Sprintf("cut %d bytes at offset %d (line %d)", cut.Bytes, cut.Offset, cut.Line),
		Decision: "cut", Decider: "repair-audit", Reason: cut.Reason, Cut: cut}
	if err := a.Append(rec); err != nil {
		return res, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "the torn tail was cut (and saved in %s), but the record of the cut could not be appended: %v", saved, err),
			"the log verifies without that record; keep "+saved+" with the log: it holds what was cut")
	}
	res.Lines++
	res.Last = *a.prev
	return res, nil
}

// saveTail copies r to a new file beside name, name.torn-TIME, synced, and returns its name.
func saveTail(name string, now time.Time, r io.Reader) (string, error) {
	base := name + ".torn-" + now.UTC().Format("20060102T150405Z")
	var f *os.File
	var err error
	path := base
	for i := 2; ; i++ {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil || !errors.Is(err, os.ErrExist) || i > 100 {
			break
		}
		path = fmt.Sprintf("%s-%d", base, i)
	}
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", err
	}
	return path, syncDir(path)
}
