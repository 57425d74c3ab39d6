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
	Time     string   `json:"time"`
	Session  *string  `json:"session"`
	Type     string   `json:"type"` // approval_request or question
	Kind     string   `json:"kind,omitempty"`
	Summary  string   `json:"summary"`
	Decision string   `json:"decision"` // allow, deny; for questions answer or skip
	Answer   *string  `json:"answer,omitempty"`
	Decider  string   `json:"decider"` // rule, person, timeout, no-tty, default, malformed
	Rule     string   `json:"rule,omitempty"`
	Part     string   `json:"part,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Charged  []string `json:"charged,omitempty"`
	Policy   string   `json:"policy"`
	Latency  float64  `json:"latencyMs"`
	Prev     *string  `json:"prev"`
}

// auditLog appends hash-chained records: each line's prev is the sha256 of the previous line's
// bytes, so editing, removing or reordering lines breaks the chain at that point.
type auditLog struct {
	f    *os.File
	name string
	prev *string
}

func hashLine(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// openAudit opens (or creates) the audit log for appending, takes an exclusive lock on it and
// returns the records already there (for the limits).
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
	r := bufio.NewReaderSize(f, 64<<10)
	var last []byte
	n := 0
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			n++
			if line[len(line)-1] != '\n' {
				f.Close()
				return nil, nil, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage, "audit log %s: line %d is incomplete", name, n),
					"check it with 'fr-approve verify-audit "+name+"'")
			}
			line = line[:len(line)-1]
			var rec Record
			if json.Unmarshal(line, &rec) == nil {
				recs = append(recs, rec)
			}
			last = line
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, nil, cmdutil.Errorf(cmdutil.ExitUsage, "audit log: %v", err)
		}
	}
	if last != nil {
		h := hashLine(last)
		a.prev = &h
	}
	return a, recs, nil
}

// append writes one record in a single write and returns any error.
func (a *auditLog) append(rec Record) error {
	rec.Prev = a.prev
	b := marshal(rec)
	if _, err := a.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("audit log %s: %w", a.name, err)
	}
	h := hashLine(b)
	a.prev = &h
	return nil
}

func (a *auditLog) close() error { return a.f.Close() }

// VerifyResult is what verify-audit prints for an intact chain.
type VerifyResult struct {
	File  string `json:"file"`
	Lines int    `json:"lines"`
	OK    bool   `json:"ok"`
	Last  string `json:"last,omitempty"` // hash of the last line: keep it elsewhere to detect truncation
}

// ChainError names the first line that breaks the chain.
type ChainError struct {
	File string
	Line int
	Msg  string
}

func (e *ChainError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// verifyChain checks every line of an audit log.
func verifyChain(name string, r io.Reader) (VerifyResult, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	res := VerifyResult{File: name}
	var prev []byte
	n := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			n++
			if line[len(line)-1] != '\n' {
				return res, &ChainError{name, n, "the line is incomplete (no line end): the log was cut"}
			}
			line = bytes.TrimSuffix(line, []byte{'\n'})
			var rec struct {
				Prev *string `json:"prev"`
			}
			if !json.Valid(line) || json.Unmarshal(line, &rec) != nil {
				return res, &ChainError{name, n, "not a JSON audit record"}
			}
			switch {
			case prev == nil && rec.Prev != nil:
				return res, &ChainError{name, n, "the first line chains to a line that is not there: lines before it were removed"}
			case prev != nil && rec.Prev == nil:
				return res, &ChainError{name, n, fmt.Sprintf("prev is null but line %d comes before it", n-1)}
			case prev != nil && *rec.Prev != hashLine(prev):
				return res, &ChainError{name, n, fmt.Sprintf("prev does not match line %d: a line was changed, removed or inserted", n-1)}
			}
			prev = append(prev[:0], line...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, err
		}
	}
	res.Lines, res.OK = n, true
	if prev != nil {
		res.Last = hashLine(prev)
	}
	return res, nil
}

func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}
