package otel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// auditLog is fr-approve's audit log (--audit): the decision of each approval_request and who
// made it, which the session stream does not carry. fr-approve may be writing it while
// fr-otel reads the session (both in one pipeline), so the log is read again, from where it
// was left, whenever a decision is looked up: a prompt is decided when its span ends, at the
// session's next event, which fuseraft sends only once it has the answer. The next
// approval_request of a kind takes the first record of that kind not yet taken, of the same
// session when the record names one.
type auditLog struct {
	names []string
	off   []int64
	part  [][]byte // a last line not yet whole, per file
	recs  []auditRecord
	used  []bool
	from  int // records before it are all taken
	err   error
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

// readAudit reads what the audit log in file name holds now; a log that does not exist yet is
// read when it does. A line that is not a record is an error naming it: a file that is not
// fr-approve's log would give prompts decisions they did not get.
func readAudit(name string) (*auditLog, error) {
	a := &auditLog{}
	if err := a.add(name); err != nil {
		return nil, err
	}
	return a, nil
}

// add reads one more log, given after the others.
func (a *auditLog) add(name string) error {
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", name)
	} else if err != nil && !os.IsNotExist(err) {
		return err
	}
	a.names = append(a.names, name)
	a.off = append(a.off, 0)
	a.part = append(a.part, nil)
	a.refresh()
	return a.err
}

// refresh reads what the logs gained since they were last read.
func (a *auditLog) refresh() {
	for i, name := range a.names {
		if a.err != nil {
			return
		}
		f, err := os.Open(name)
		if err != nil {
			continue // not there yet
		}
		if _, err := f.Seek(a.off[i], io.SeekStart); err == nil {
			data, _ := io.ReadAll(io.LimitReader(f, 64<<20))
			a.off[i] += int64(len(data))
			data = append(a.part[i], data...)
			for {
				nl := bytes.IndexByte(data, '\n')
				if nl < 0 {
					break
				}
				a.line(name, data[:nl])
				data = data[nl+1:]
			}
			a.part[i] = append([]byte(nil), data...)
		}
		f.Close()
	}
}

func (a *auditLog) line(name string, b []byte) {
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	var r auditRecord
	if err := json.Unmarshal(b, &r); err != nil || r.Type == "" || r.Decision == "" {
		if a.err == nil {
			a.err = fmt.Errorf("%s: a line that is not a record of fr-approve's audit log: %.60q", name, b)
		}
		return
	}
	if r.Type == "approval_request" {
		a.recs = append(a.recs, r)
		a.used = append(a.used, false)
	}
}

// next takes the decision of the next approval_request of kind in session (id, "" when not
// known): "allow" or "deny" and who decided ("rule:NAME", "person", "timeout", ...), or
// "unknown" when the log has no record for it.
func (a *auditLog) next(kind, session string) (decision, decider string) {
	a.refresh()
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
