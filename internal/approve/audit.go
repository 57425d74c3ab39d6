package approve

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// Record is one line of the audit log. Fields keep this order on disk.
type Record struct {
	Time     string  `json:"time"`
	Session  *string `json:"session"`
	Type     string  `json:"type"` // approval_request or question
	Kind     string  `json:"kind,omitempty"`
	Summary  string  `json:"summary"`
	Decision string  `json:"decision"` // allow, deny; for questions answer or skip
	Answer   *string `json:"answer,omitempty"`
	Decider  string  `json:"decider"` // rule, person, timeout, no-tty, default, malformed
	// Typed is every line the person typed at the prompt, in order (a typo asked again, then
	// the answer); absent when nobody was asked, and in logs written before it was recorded.
	Typed   []string `json:"typed,omitempty"`
	Rule    string   `json:"rule,omitempty"`
	Part    string   `json:"part,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Charged []string `json:"charged,omitempty"`
	Policy  string   `json:"policy"`
	Latency float64  `json:"latencyMs"`
	Prev    *string  `json:"prev"`
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
type auditLog struct {
	f    *os.File
	name string
	prev *string
}

func hashLine(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// sealLine appends the hash field to a marshalled record body ({...}).
func sealLine(body []byte) (line []byte, hash string) {
	hash = hashLine(body)
	line = make([]byte, 0, len(body)+len(hashSuffix)+len(hash)+2)
	line = append(line, body[:len(body)-1]...)
	line = append(line, hashSuffix...)
	line = append(line, hash...)
	line = append(line, '"', '}')
	return line, hash
}

const hashSuffix = `,"hash":"`

// hashLen is len("sha256:") plus 64 hex digits.
const hashLen = 7 + 64

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

// openAudit opens (or creates) the audit log for appending, takes an exclusive lock on it,
// checks its chain and returns the records already there (for the limits). A log whose chain
// is broken is refused: the limits would be rebuilt from records that cannot be trusted.
func openAudit(name string) (*auditLog, []Record, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, cmdutil.Errorf(cmdutil.ExitUsage, "audit log: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, nil, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage, "audit log %s is in use by another process", name),
			"give each fr-approve its own --audit file")
	}
	a := &auditLog{f: f, name: name}
	var recs []Record
	broken := func(n int, msg string) (*auditLog, []Record, error) {
		f.Close()
		return nil, nil, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage, "audit log %s: line %d: %s", name, n, msg),
			"check it with 'fr-approve verify-audit "+name+"'; start a new log rather than append to this one")
	}
	r := bufio.NewReaderSize(f, 64<<10)
	n := 0
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			n++
			if line[len(line)-1] != '\n' {
				return broken(n, "the line is incomplete")
			}
			line = line[:len(line)-1]
			rec, h, problem := checkLine(line, n, a.prev)
			if problem != "" {
				return broken(n, problem)
			}
			recs = append(recs, rec)
			a.prev = &h
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, nil, cmdutil.Errorf(cmdutil.ExitUsage, "audit log: %v", err)
		}
	}
	return a, recs, nil
}

// append writes one record in a single write and returns any error.
func (a *auditLog) append(rec Record) error {
	rec.Prev = a.prev
	line, h := sealLine(marshal(rec))
	if _, err := a.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("audit log %s: %w", a.name, err)
	}
	a.prev = &h
	return nil
}

func (a *auditLog) close() error { return a.f.Close() }

// VerifyResult is what verify-audit prints for an intact chain.
type VerifyResult struct {
	File  string `json:"file"`
	Lines int    `json:"lines"`
	OK    bool   `json:"ok"`
	Last  string `json:"last,omitempty"`  // hash of the last line: keep it elsewhere to detect truncation
	Since *int   `json:"since,omitempty"` // with --head: lines written after that line
}

// ChainError names the first line that breaks the chain.
type ChainError struct {
	File string
	Line int
	Msg  string
}

func (e *ChainError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// verifyChain checks every line of an audit log. With head set, the log must also hold a line
// with that hash (the last hash of an earlier check), and VerifyResult.Since counts the lines
// after it.
func verifyChain(name string, r io.Reader, head string) (VerifyResult, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	res := VerifyResult{File: name}
	var prev *string
	n, headAt := 0, 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			n++
			if line[len(line)-1] != '\n' {
				return res, &ChainError{name, n, "the line is incomplete (no line end): the log was cut"}
			}
			_, h, problem := checkLine(line[:len(line)-1], n, prev)
			if problem != "" {
				return res, &ChainError{name, n, problem}
			}
			prev = &h
			if head != "" && h == head {
				headAt = n
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, err
		}
	}
	if head != "" && headAt == 0 {
		return res, &ChainError{name, n, "no line has the hash given with --head: lines were removed or rewritten since it was taken"}
	}
	res.Lines, res.OK = n, true
	if prev != nil {
		res.Last = *prev
	}
	if head != "" {
		since := n - headAt
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
	br := bufio.NewReaderSize(r, 64<<10)
	var recs []Record
	var prev *string
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				return nil, &ChainError{name, n, "the line is incomplete (no line end): the log was cut"}
			}
			rec, h, problem := checkLine(line[:len(line)-1], n, prev)
			if problem != "" {
				return nil, &ChainError{name, n, problem}
			}
			rec.Hash = h
			recs = append(recs, rec)
			prev = &h
		}
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
