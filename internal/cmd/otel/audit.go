package otel

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// auditLog is fr-approve's audit log (--audit): the decision of each approval_request and who
// made it, which the session stream does not carry. Its records are taken in order: the next
// approval_request of a kind takes the first record of that kind not yet taken, of the same
// session when the record names one.
type auditLog struct {
	recs []auditRecord
	used []bool
	from int // records before it are all taken
}

// auditRecord is the part of fr-approve's audit record (see fr-approve --help, AUDIT LOG) the
// mapping reads.
type auditRecord struct {
	Type     string  `json:"type"`
	Session  *string `json:"session"`
	Kind     string  `json:"kind"`
	Decision string  `json:"decision"`
	Decider  string  `json:"decider"`
	Rule     string  `json:"rule"`
}

// readAudit reads the audit log in file name. A line that is not a record is an error naming
// it: a log that is not fr-approve's would give prompts decisions they did not get.
func readAudit(name string) (*auditLog, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a := &auditLog{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var r auditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Type == "" || r.Decision == "" {
			return nil, fmt.Errorf("%s:%d: not a record of fr-approve's audit log", name, n)
		}
		if r.Type == "approval_request" {
			a.recs = append(a.recs, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	a.used = make([]bool, len(a.recs))
	return a, nil
}

// next takes the decision of the next approval_request of kind in session (id, "" when not
// known): "allow" or "deny" and who decided ("rule:NAME", "person", "timeout", ...), or
// "unknown" when the log has no record for it.
func (a *auditLog) next(kind, session string) (decision, decider string) {
	for i := a.from; i < len(a.recs); i++ {
		r := a.recs[i]
		if a.used[i] || r.Kind != kind {
			continue
		}
		if r.Session != nil && *r.Session != "" && session != "" && *r.Session != session {
			continue
		}
		a.used[i] = true
		for a.from < len(a.used) && a.used[a.from] {
			a.from++
		}
		decider = r.Decider
		if r.Rule != "" {
			decider += ":" + r.Rule
		}
		return r.Decision, decider
	}
	return "unknown", ""
}

// add appends the records of b, a log given after a's.
func (a *auditLog) add(b *auditLog) {
	a.recs = append(a.recs, b.recs...)
	a.used = append(a.used, b.used...)
}
