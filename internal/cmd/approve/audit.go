package approve

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fuseraft/fr/internal/auditchain"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// Record is one line of the audit log. Fields keep this order on disk.
type Record struct {
	Time     string  `json:"time"`
	Session  *string `json:"session"`
	Type     string  `json:"type"` // approval_request, question, or audit_repair (see Cut)
	Kind     string  `json:"kind,omitempty"`
	Summary  string  `json:"summary"`
	Decision string  `json:"decision"` // allow, deny; for questions answer or skip; cut for audit_repair
	Answer   *string `json:"answer,omitempty"`
	Decider  string  `json:"decider"` // rule, person, timeout, no-tty, default, malformed
	// Typed is every line the person typed at the prompt, in order (a typo asked again, then
	// the answer); absent when nobody was asked, and in logs written before it was recorded.
	Typed   []string `json:"typed,omitempty"`
	Rule    string   `json:"rule,omitempty"`
	Part    string   `json:"part,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Charged []string `json:"charged,omitempty"`
	// Cut is set on the record repair-audit appends (type audit_repair): what it cut.
	Cut *Cut `json:"cut,omitempty"`
	// Where a fleet's prompt came from and who decided it (fr-approve --nats).
	Pool     string  `json:"pool,omitempty"`
	Host     string  `json:"host,omitempty"`
	Task     string  `json:"task,omitempty"`
	Prompt   string  `json:"prompt,omitempty"`
	Approver string  `json:"approver,omitempty"`
	Policy   string  `json:"policy"`
	Latency  float64 `json:"latencyMs"`
	Prev     *string `json:"prev"`
	// Hash is the sha256 of the line as it would be without its hash field. It is written
	// after marshalling, never by encoding/json.
	Hash string `json:"-"`
}

// auditLog appends hash-chained records. Each line ends with its own hash (the sha256 of the
// line without that field) and starts its chain with prev, the hash of the line before it. So
// a line edited in place no longer matches its own hash, and removing, inserting or reordering
// lines breaks a prev. Anyone can recompute every hash, though: keep the hash of the last line
// (verify-audit prints it) somewhere the log's writer cannot change, and check the log against
// it with verify-audit --head to notice lines rewritten or removed from the end.
//
// A line is written whole or not at all: when a write fails part way (a full disk), the file is
// cut back to where the line started, so the log still verifies. size is that place.
type auditLog struct {
	f    auditFile
	name string
	prev *string
	size int64 // bytes of whole lines: where the next line starts
	sync bool  // fsync after each line
	// torn is set when a failed line could not be cut back: nothing more is appended.
	torn error
}

// auditFile is what an audit log is written through: an *os.File.
type auditFile interface {
	io.Writer
	Truncate(size int64) error
	Sync() error
	Close() error
}

// wrapAuditFile lets tests put a failing file (a full disk) under the log.
var wrapAuditFile = func(f *os.File) auditFile { return f }

func hashLine(b []byte) string { return auditchain.Hash(b) }

// sealLine appends the hash field to a marshalled record body ({...}).
func sealLine(body []byte) (line []byte, hash string) { return auditchain.Seal(body) }

const hashSuffix = auditchain.HashSuffix

// hashLen is len("sha256:") plus 64 hex digits.
const hashLen = auditchain.HashLen

// checkLine checks one line (without its line end) against its own hash and the hash of the
// line before it (nil for the first), returning the record, its hash, or what is wrong with it.
func checkLine(line []byte, n int, prev *string) (rec Record, hash, problem string) {
	var l struct {
		Record
		Hash *string `json:"hash"`
	}
	if json.Unmarshal(line, &l) != nil {
		return rec, "", "not a JSON audit record"
	}
	rec = l.Record
	tail := len(hashSuffix) + hashLen + 2
	if l.Hash == nil || len(line) < tail+1 || !bytes.HasSuffix(line, []byte(`"}`)) ||
		string(line[len(line)-tail:len(line)-tail+len(hashSuffix)]) != hashSuffix {
		return rec, "", "the line has no hash field at its end: it was not written by fr-approve, or was rewritten"
	}
	body := append(append([]byte(nil), line[:len(line)-tail]...), '}')
	hash = hashLine(body)
	if *l.Hash != hash || string(line[len(line)-hashLen-2:len(line)-2]) != hash {
		return rec, "", "the line does not match its hash: it was changed"
	}
	switch {
	case prev == nil && rec.Prev != nil:
		return rec, "", "the first line chains to a line that is not there: lines before it were removed"
	case prev != nil && rec.Prev == nil:
		return rec, "", fmt.Sprintf("prev is null but line %d comes before it", n-1)
	case prev != nil && *rec.Prev != *prev:
		return rec, "", fmt.Sprintf("prev does not match line %d: a line was removed, inserted or moved", n-1)
	}
	return rec, hash, ""
}

// chainEnd is how far an audit log verifies.
type chainEnd struct {
	Lines int     // lines that verify
	Prev  *string // hash of the last of them
	End   int64   // the offset just after the last of them
}

// scanAudit reads an audit log, checking each line against its hash and the line before it,
// and calls each (when not nil) with the record of every line that verifies, its Hash set. It
// stops at the first line that breaks the chain, which is a *ChainError; end says how far the
// log verifies in any case. This is the one reader of audit logs: fr-approve on start,
// verify-audit, repair-audit and fr-report all use it.
func scanAudit(name string, r io.Reader, each func(Record)) (end chainEnd, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, rerr := br.ReadBytes('\n')
		if len(line) > 0 {
			n := end.Lines + 1
			if line[len(line)-1] != '\n' {
				return end, &ChainError{File: name, Line: n, Offset: end.End, Torn: true,
					Msg: "the line is incomplete (no line end): the log was cut"}
			}
			rec, h, problem := checkLine(line[:len(line)-1], n, end.Prev)
			if problem != "" {
				return end, &ChainError{File: name, Line: n, Offset: end.End, Msg: problem}
			}
			if each != nil {
				rec.Hash = h
				each(rec)
			}
			end.Lines, end.Prev, end.End = n, &h, end.End+int64(len(line))
		}
		if rerr == io.EOF {
			return end, nil
		}
		if rerr != nil {
			return end, rerr
		}
	}
}

// repairHint points at repair-audit for a log whose last line is torn.
func repairHint(name string) string {
	return "cut the torn line with 'fr-approve repair-audit " + name + "' (the bytes cut are saved beside the log, and the cut is recorded in it)"
}

// openAudit opens (or creates) the audit log for appending, takes an exclusive lock on it,
// checks its chain and returns the records already there (for the limits). A log whose chain
// is broken is refused: the limits would be rebuilt from records that cannot be trusted. A
// torn last line (a write cut short by a full disk or a crash) is refused with a pointer to
// repair-audit. With sync set, every line is flushed to the disk before its answer is sent.
func openAudit(name string, sync bool) (*auditLog, []Record, error) {
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
	end, err := scanAudit(name, f, func(r Record) { recs = append(recs, r) })
	if err != nil {
		f.Close()
		var ce *ChainError
		if !errors.As(err, &ce) {
			return nil, nil, cmdutil.Errorf(cmdutil.ExitUsage, "audit log: %v", err)
		}
		if ce.Torn {
			return nil, nil, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage,
				"audit log %s: line %d: the line is incomplete: a write to the log was cut short (a full disk, a crash)", name, ce.Line),
				repairHint(name))
		}
		return nil, nil, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage, "audit log %s: line %d: %s", name, ce.Line, ce.Msg),
			"check it with 'fr-approve verify-audit "+name+"'; start a new log rather than append to this one")
	}
	if sync {
		// the file may be new: its name must reach the disk too
		if err := syncDir(name); err != nil {
			f.Close()
			return nil, nil, cmdutil.Errorf(cmdutil.ExitUsage, "audit log: %v", err)
		}
	}
	return &auditLog{f: wrapAuditFile(f), name: name, prev: end.Prev, size: end.End, sync: sync}, recs, nil
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

// append writes one record in a single write (then fsyncs it, with sync set). When that fails,
// the file is cut back to where the line started: the log holds whole lines only, and the
// error is an *AppendError.
func (a *auditLog) append(rec Record) error {
	if a.torn != nil {
		return a.torn
	}
	rec.Prev = a.prev
	line, h := sealLine(marshal(rec))
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

func (a *auditLog) close() error { return a.f.Close() }

// VerifyResult is what verify-audit prints for an intact chain.
type VerifyResult struct {
	File    string `json:"file"`
	Subject string `json:"subject,omitempty"` // of a chain of an audit stream: its writer's subject
	Lines   int    `json:"lines"`
	OK      bool   `json:"ok"`
	Last    string `json:"last,omitempty"`  // hash of the last line: keep it elsewhere to detect truncation
	Since   *int   `json:"since,omitempty"` // with --head: lines written after that line
	Cut     *Cut   `json:"cut,omitempty"`   // repair-audit: what it cut
}

// ChainError names the first line that breaks the chain.
type ChainError struct {
	File string
	Line int
	Msg  string
	// Offset is where the line starts: the log verifies up to there.
	Offset int64
	// Torn says the line is the last and has no line end: a write cut short.
	Torn bool
}

func (e *ChainError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// verifyChain checks every line of an audit log. With head set, the log must also hold a line
// with that hash (the last hash of an earlier check), and VerifyResult.Since counts the lines
// after it.
func verifyChain(name string, r io.Reader, head string) (VerifyResult, error) {
	res := VerifyResult{File: name}
	headAt, n := 0, 0
	end, err := scanAudit(name, r, func(rec Record) {
		n++
		if head != "" && rec.Hash == head {
			headAt = n
		}
	})
	if err != nil {
		return res, err
	}
	if head != "" && headAt == 0 {
		return res, &ChainError{File: name, Line: end.Lines, Offset: end.End,
			Msg: "no line has the hash given with --head: lines were removed or rewritten since it was taken"}
	}
	res.Lines, res.OK = end.Lines, true
	if end.Prev != nil {
		res.Last = *end.Prev
	}
	if head != "" {
		since := end.Lines - headAt
		res.Since = &since
	}
	return res, nil
}

func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// ReadAudit reads a whole audit log, checking every line against its hash and the line before
// it, and returns its records. The first line that breaks the chain is a *ChainError: records
// that cannot be trusted are never returned.
func ReadAudit(name string, r io.Reader) ([]Record, error) {
	var recs []Record
	if _, err := scanAudit(name, r, func(rec Record) { recs = append(recs, rec) }); err != nil {
		return nil, err
	}
	return recs, nil
}

// TypeRepair is the type of the record repair-audit appends after a cut.
const TypeRepair = "audit_repair"

// Cut says what repair-audit cut from the end of an audit log.
type Cut struct {
	Line   int    `json:"line"`   // the number of the first line cut
	Offset int64  `json:"offset"` // where the bytes cut started
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`          // of the bytes cut
	Saved  string `json:"saved,omitempty"` // the file they were saved to
	Reason string `json:"reason"`          // what was wrong with the first line cut
}

// repairOptions say how far repair-audit may go.
type repairOptions struct {
	force  bool // also cut from a complete line that breaks the chain
	dryRun bool // say what would be cut, change nothing
	now    time.Time
}

// errNotTorn is returned by repairAudit when the chain breaks at a complete line.
var errNotTorn = errors.New("not a torn last line")

// repairAudit cuts what follows the last line of name that verifies: a torn last line (a
// write cut short), or with force anything from the first line that breaks the chain. The
// bytes cut are first saved to name.torn-TIME, then the file is cut, then a record of the cut
// (type audit_repair, with Cut) is appended to the chain and synced, so the cut is itself
// audited. It returns the log's state after the repair (Cut nil when nothing was wrong).
func repairAudit(name string, o repairOptions) (VerifyResult, error) {
	res := VerifyResult{File: name}
	flags := os.O_RDWR | os.O_APPEND
	if o.dryRun {
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
	end, err := scanAudit(name, f, nil)
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
	if !ce.Torn && !o.force {
		return res, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "audit chain broken at %v: %v", ce, errNotTorn),
			fmt.Sprintf("the line is complete, so it was not left by a failed write: look at it with 'fr-approve verify-audit %s'", name),
			fmt.Sprintf("to cut from line %d to the end anyway (the bytes are saved beside the log), pass --force", ce.Line))
	}
	fi, err := f.Stat()
	if err != nil {
		return res, cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
	}
	cut := &Cut{Line: ce.Line, Offset: end.End, Bytes: fi.Size() - end.End, Reason: ce.Msg}
	tail := io.NewSectionReader(f, end.End, cut.Bytes)
	sum := sha256.New()
	if o.dryRun {
		if _, err := io.Copy(sum, tail); err != nil {
			return res, cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
		}
		cut.SHA256 = "sha256:" + hex.EncodeToString(sum.Sum(nil))
		res.Cut = cut
		return res, nil
	}
	saved, err := saveTail(name, o.now, io.TeeReader(tail, sum))
	if err != nil {
		return res, cmdutil.Errorf(cmdutil.ExitFailed, "saving the bytes to cut: %v (nothing was cut)", err)
	}
	cut.SHA256, cut.Saved = "sha256:"+hex.EncodeToString(sum.Sum(nil)), saved
	res.Cut = cut
	if err := f.Truncate(end.End); err != nil {
		return res, cmdutil.Errorf(cmdutil.ExitFailed, "cutting %s: %v (nothing was cut; the bytes are saved in %s)", name, err, saved)
	}
	a := &auditLog{f: wrapAuditFile(f), name: name, prev: end.Prev, size: end.End, sync: true}
	rec := Record{Time: o.now.UTC().Format(time.RFC3339Nano), Type: TypeRepair,
		Summary:  fmt.Sprintf("cut %d bytes at offset %d (line %d)", cut.Bytes, cut.Offset, cut.Line),
		Decision: "cut", Decider: "repair-audit", Reason: ce.Msg, Cut: cut}
	if err := a.append(rec); err != nil {
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

// logged sends resp, the answer to one prompt, once rec is written whole to the audit log
// (when there is one): a decision is never sent without its line. When the line cannot be
// written, the prompt gets refusal instead (a denial; for a question, no answer), unlogged,
// the answers before it (all logged) are sent, and the error ends fr-approve with exit 1.
// Every prompt so gets exactly one answer, and an answer the log does not hold is never
// anything but a refusal.
func (srv *server) logged(rec Record, resp, refusal []byte) error {
	if srv.audit == nil {
		return srv.respond(resp)
	}
	err := srv.audit.append(rec)
	if err == nil {
		return srv.respond(resp)
	}
	if rerr := srv.respond(refusal); rerr == nil {
		srv.flush()
	}
	what := "denied"
	if rec.Type == wire.TypeQuestion {
		what = "answered null"
	}
	var e *AppendError
	if errors.As(err, &e) && e.Torn != nil {
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "%v: the prompt was %s, unrecorded (%s); fr-approve stops", err, what, rec.Summary),
			repairHint(srv.audit.name)+", once the disk takes writes again")
	}
	return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "%v: the prompt was %s, unrecorded (%s); fr-approve stops", err, what, rec.Summary),
		"the log was cut back to its last whole line and still verifies: free space, then start fr-approve again on it")
}
