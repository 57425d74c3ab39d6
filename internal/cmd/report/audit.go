package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fuseraft/fr/internal/audit"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleet"
)

// auditChain is one hash chain of fr-approve's audit log: a whole log, or one of several logs
// joined into one file (cat a.jsonl b.jsonl), each starting at its own first line (prev null).
type auditChain struct {
	info    *AuditInfo
	recs    []audit.Record
	at      int      // the next record a prompt may match
	session *Session // the session whose prompts it has matched first, if any
}

// maxAuditLine bounds one line of an audit log while it is split into chains; fr-approve's
// records are far smaller.
const maxAuditLine = 64 << 20

// splitChains cuts an audit log into its chains: a new one starts at every line whose prev is
// null (the first line fr-approve writes to a log). Each is returned with the number of its
// first line in the file. Lines that are not records stay in the chain they are in, whose check
// then names them.
func splitChains(r io.Reader) (chains [][]byte, firstLines []int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var cur bytes.Buffer
	n := 0
	for {
		line, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			// a long line: read the rest of it
			long := append([]byte(nil), line...)
			for errors.Is(rerr, bufio.ErrBufferFull) && len(long) <= maxAuditLine {
				line, rerr = br.ReadSlice('\n')
				long = append(long, line...)
			}
			if len(long) > maxAuditLine {
				return nil, nil, fmt.Errorf("line %d is longer than %d bytes: not an audit log", n+1, maxAuditLine)
			}
			line = long
		}
		if len(line) > 0 {
			n++
			if genesis(line) && cur.Len() > 0 {
				chains = append(chains, append([]byte(nil), cur.Bytes()...))
				cur.Reset()
			}
			if cur.Len() == 0 {
				firstLines = append(firstLines, n)
			}
			cur.Write(line)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, nil, rerr
		}
	}
	if cur.Len() > 0 || len(chains) == 0 {
		if cur.Len() == 0 {
			firstLines = append(firstLines, 1)
		}
		chains = append(chains, cur.Bytes())
	}
	return chains, firstLines, nil
}

// genesis says whether line is an audit record with prev null: the first line of a chain.
func genesis(line []byte) bool {
	var l struct {
		Prev json.RawMessage `json:"prev"`
	}
	return json.Unmarshal(bytes.TrimRight(line, "\r\n"), &l) == nil && string(l.Prev) == "null"
}

// readAudit reads one --audit file: each chain in it is checked on its own (a chain that does
// not verify refuses the whole report) and added to the builder's.
func (b *builder) readAudit(name string) error {
	if server, stream, ok, err := fleet.SplitURL(name); ok {
		if err != nil {
			return cmdutil.Usagef("--audit %v", err)
		}
		return b.readAuditStream(name, server, stream)
	}
	f, err := os.Open(name)
	if err != nil {
		return cmdutil.Usagef("audit log: %v", err)
	}
	defer f.Close()
	return b.readAuditLog(name, f)
}

// readAuditStream reads a fleet's audit stream (nats://HOST:PORT/STREAM): each writer's chain
// is read as a log of its own, named URL#SUBJECT.
func (b *builder) readAuditStream(name, server, stream string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	logs, err := audit.ReadServerStream(ctx, server, stream, prog, "", "")
	if err != nil {
		return cmdutil.Usagef("audit stream %s: %v", name, err)
	}
	for _, l := range logs {
		if err := b.readAuditLog(name+"#"+l.Subject, bytes.NewReader(l.Data)); err != nil {
			return err
		}
	}
	return nil
}

// readAuditLog reads one audit log from r.
func (b *builder) readAuditLog(name string, r io.Reader) error {
	chains, first, err := splitChains(r)
	if err != nil {
		return cmdutil.Usagef("audit log %s: %v", name, err)
	}
	for i, chain := range chains {
		recs, err := audit.Read(name, bytes.NewReader(chain))
		if err != nil {
			var ce *audit.ChainError
			if errors.As(err, &ce) {
				// line numbers of the file, not of the chain
				ce.Line += first[i] - 1
				where := ""
				if len(chains) > 1 {
					where = fmt.Sprintf(" (chain %d of %d, from line %d)", i+1, len(chains), first[i])
				}
				if ce.Torn {
					return cmdutil.WithHint(cmdutil.Usagef("audit log %v%s", err, where),
						"a write to it was cut short: cut the torn line with 'fr-approve repair-audit "+name+"', then report again")
				}
				hint := "check it with 'fr-approve verify-audit " + name + "': its decisions cannot be trusted"
				if len(chains) > 1 {
					hint = "several logs joined in one file are checked each on its own; this one breaks: its decisions cannot be trusted"
				}
				return cmdutil.WithHint(cmdutil.Usagef("audit log %v%s", err, where), hint)
			}
			return cmdutil.Usagef("audit log: %v", err)
		}
		info := &AuditInfo{File: name, Records: len(recs)}
		if len(chains) > 1 {
			info.Chain, info.FromLine = i+1, first[i]
		}
		if len(recs) > 0 {
			info.Last = recs[len(recs)-1].Hash
		}
		b.audits = append(b.audits, &auditChain{info: info, recs: recs})
	}
	return nil
}

// auditTotals sets the report's audit fields once every log is read: Audit sums them, Audits
// lists each chain when there are several.
func (b *builder) auditTotals() {
	if len(b.audits) == 0 {
		return
	}
	if len(b.audits) == 1 {
		b.r.Audit = b.audits[0].info
		return
	}
	total := &AuditInfo{}
	var files []string
	for _, c := range b.audits {
		total.Records += c.info.Records
		total.Matched += c.info.Matched
		if len(files) == 0 || files[len(files)-1] != c.info.File {
			files = append(files, c.info.File)
		}
		b.r.Audits = append(b.r.Audits, c.info)
	}
	total.File = strings.Join(files, ", ")
	b.r.Audit = total
}

// matchAudit finds the record of a prompt: the next record, from where the last match in its
// chain was, of the same type and summary (and session, when both name one). fr-approve decides
// prompts in the order they come, so records of other sessions in the same log are skipped
// over. With several chains (one fr-approve each), a session keeps to the chain its first
// prompt matched in; a session's first prompt looks first in the chains no session has
// matched in yet, in the order given, then in the others.
func (b *builder) matchAudit(typ, summary string, s *Session) *audit.Record {
	order := make([]*auditChain, 0, len(b.audits))
	for _, c := range b.audits {
		if c.session == s {
			order = append(order, c)
		}
	}
	for _, c := range b.audits {
		if c.session == nil {
			order = append(order, c)
		}
	}
	for _, c := range b.audits {
		if c.session != nil && c.session != s {
			order = append(order, c)
		}
	}
	for _, c := range order {
		for i := c.at; i < len(c.recs); i++ {
			rec := &c.recs[i]
			if rec.Type != typ || rec.Summary != summary {
				continue
			}
			if rec.Session != nil && *rec.Session != "" && s.ID != "" && *rec.Session != s.ID {
				continue
			}
			c.at = i + 1
			c.info.Matched++
			if c.session == nil {
				c.session = s
			}
			return rec
		}
	}
	return nil
}
