package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
)

// HashLen is the length of a line's hash: len("sha256:") plus 64 hex digits.
const HashLen = 7 + 64

const hashSuffix = `,"hash":"`

// Hash is the hash of b as the log writes it: sha256: and 64 hex digits.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Seal appends the hash field to a marshalled record body ({...}, its prev already set): the
// line as the log and a fleet's audit stream hold it.
func Seal(body []byte) (line []byte, hash string) {
	hash = Hash(body)
	line = make([]byte, 0, len(body)+len(hashSuffix)+len(hash)+2)
	line = append(line, body[:len(body)-1]...)
	line = append(line, hashSuffix...)
	line = append(line, hash...)
	line = append(line, '"', '}')
	return line, hash
}

// HashOf returns the hash a sealed line ends with, or "" when it does not end with one. It
// does not check it.
func HashOf(line []byte) string {
	tail := len(hashSuffix) + HashLen + 2
	if len(line) < tail+1 || string(line[len(line)-2:]) != `"}` ||
		string(line[len(line)-tail:len(line)-tail+len(hashSuffix)]) != hashSuffix {
		return ""
	}
	return string(line[len(line)-HashLen-2 : len(line)-2])
}

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
	tail := len(hashSuffix) + HashLen + 2
	if l.Hash == nil || len(line) < tail+1 || !bytes.HasSuffix(line, []byte(`"}`)) ||
		string(line[len(line)-tail:len(line)-tail+len(hashSuffix)]) != hashSuffix {
		return rec, "", "the line has no hash field at its end: it was not written by fr-approve, or was rewritten"
	}
	body := append(append([]byte(nil), line[:len(line)-tail]...), '}')
	hash = Hash(body)
	if *l.Hash != hash || string(line[len(line)-HashLen-2:len(line)-2]) != hash {
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

// End is how far an audit log verifies.
type End struct {
	Lines int     // lines that verify
	Prev  *string // hash of the last of them
	End   int64   // the offset just after the last of them
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

// Scan reads an audit log, checking each line against its hash and the line before it, and
// calls each (when not nil) with the record of every line that verifies, its Hash set. It
// stops at the first line that breaks the chain, which is a *ChainError; end says how far the
// log verifies in any case. This is the one reader of audit logs: fr-approve on start,
// verify-audit, repair-audit and fr-report all use it.
func Scan(name string, r io.Reader, each func(Record)) (end End, err error) {
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

// Verify checks every line of an audit log. With head set, the log must also hold a line
// with that hash (the last hash of an earlier check), and VerifyResult.Since counts the lines
// after it.
func Verify(name string, r io.Reader, head string) (VerifyResult, error) {
	res := VerifyResult{File: name}
	headAt, n := 0, 0
	end, err := Scan(name, r, func(rec Record) {
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

// Read reads a whole audit log, checking every line against its hash and the line before
// it, and returns its records. The first line that breaks the chain is a *ChainError: records
// that cannot be trusted are never returned.
func Read(name string, r io.Reader) ([]Record, error) {
	var recs []Record
	if _, err := Scan(name, r, func(rec Record) { recs = append(recs, rec) }); err != nil {
		return nil, err
	}
	return recs, nil
}

// RepairHint points at repair-audit for a log whose last line is torn.
func RepairHint(name string) string {
	return "cut the torn line with 'fr-approve repair-audit " + name + "' (the bytes cut are saved beside the log, and the cut is recorded in it)"
}
