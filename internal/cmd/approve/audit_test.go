package approve

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fuseraft/fr/internal/audit"
)

// fullDisk is an audit file on a disk that takes left more bytes: the write that goes past
// it writes what fits and fails with ENOSPC, as a real full disk does. With truncFails the
// partial line cannot be cut back either; with syncFails every fsync fails.
type fullDisk struct {
	*os.File
	left       int
	truncFails bool
	syncFails  bool
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) <= d.left {
		d.left -= len(p)
		return d.File.Write(p)
	}
	n, _ := d.File.Write(p[:d.left])
	d.left = 0
	return n, &os.PathError{Op: "write", Path: d.Name(), Err: syscall.ENOSPC}
}

func (d *fullDisk) Truncate(size int64) error {
	if d.truncFails {
		return &os.PathError{Op: "truncate", Path: d.Name(), Err: syscall.EIO}
	}
	return d.File.Truncate(size)
}

func (d *fullDisk) Sync() error {
	if d.syncFails {
		return &os.PathError{Op: "sync", Path: d.Name(), Err: syscall.EIO}
	}
	return d.File.Sync()
}

// onFullDisk puts the audit logs fr-approve opens, until the test ends, on a disk that takes
// left more bytes.
func onFullDisk(t *testing.T, d fullDisk) {
	old := wrapAuditFile
	wrapAuditFile = func(f *os.File) audit.File { d := d; d.File = f; return &d }
	t.Cleanup(func() { wrapAuditFile = old })
}

const fullDiskPolicy = `version: 1
rules:
  - {name: ls, decision: allow, shell: [ls]}
questions:
  - {name: proceed, question: "go on?", option: "yes"}
`

// fullDiskStream is a recorded stream of prompts: allowed, denied and a question each.
func fullDiskStream(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"ready","protocolVersion":1,"sessionId":"s1","task":"t","config":null,"resumed":false,"agents":[]}` + "\n")
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, `{"type":"approval_request","kind":"shell_command","command":"ls %d"}`+"\n", i)
		case 1:
			fmt.Fprintf(&b, `{"type":"approval_request","kind":"shell_command","command":"rm %d"}`+"\n", i)
		case 2:
			b.WriteString(`{"type":"question","question":"go on?","options":["yes","no"],"allowOther":false}` + "\n")
		}
	}
	return b.String()
}

// answersOf parses fr-approve's responses: true/false for approvals, the answer or "null".
func answersOf(t *testing.T, stdout string) []string {
	t.Helper()
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if l == "" {
			continue
		}
		var r struct {
			Type     string          `json:"type"`
			Approved *bool           `json:"approved"`
			Answer   json.RawMessage `json:"answer"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("response %q: %v", l, err)
		}
		if r.Approved != nil {
			got = append(got, fmt.Sprint(*r.Approved))
		} else {
			got = append(got, string(r.Answer))
		}
	}
	return got
}

// answerOf is the response a record stands for, in answersOf's terms.
func answerOf(r audit.Record) string {
	switch {
	case r.Type == "approval_request":
		return fmt.Sprint(r.Decision == "allow")
	case r.Answer != nil:
		b, _ := json.Marshal(*r.Answer)
		return string(b)
	}
	return "null"
}

// A disk that fills up at any byte of any line: the log keeps whole lines and verifies, each
// answer sent is the one its line records, in order, the prompt whose line failed is denied
// (a question answered null), and fr-approve stops with exit 1. Once there is space again,
// fr-approve goes on with the same log.
func TestAuditFullDisk(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", fullDiskPolicy)
	const prompts = 30
	stream := fullDiskStream(prompts)
	// the size of each line, from a run on a disk with room
	ref := filepath.Join(dir, "ref.log")
	if code, _, stderr := runApprove(t, stream, "--policy", pol, "--audit", ref); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	refBytes, _ := os.ReadFile(ref)
	lineLen := len(refBytes) / prompts
	for _, c := range []struct {
		name  string
		left  int
		fsync bool
	}{
		{"full from the start", 0, false},
		{"one byte", 1, false},
		{"in the first line's hash", lineLen - 20, false},
		{"all but the line end", lineLen - 1, false},
		{"in the second line", lineLen + lineLen/2, false},
		{"in the eighth line", 7*lineLen + 100, false},
		{"in the twentieth line", 19*lineLen + 3, false},
		{"in the ninth line, with fsync", 8*lineLen + 50, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			onFullDisk(t, fullDisk{left: c.left})
			log := filepath.Join(t.TempDir(), "a.log")
			args := []string{"--policy", pol, "--audit", log}
			if c.fsync {
				args = append(args, "--audit-fsync")
			}
			code, stdout, stderr := runApprove(t, stream, args...)
			if code != 1 || !strings.Contains(stderr, "no space left on device") || !strings.Contains(stderr, "still verifies") {
				t.Fatalf("exit %d, stderr %q; want 1 and the disk named", code, stderr)
			}
			data, _ := os.ReadFile(log)
			f, _ := os.Open(log)
			recs, err := audit.Read(log, f)
			f.Close()
			if err != nil {
				t.Fatalf("the log does not verify after the failed write: %v\n%s", err, data)
			}
			got := answersOf(t, stdout)
			if len(got) != len(recs)+1 {
				t.Fatalf("%d answers for %d lines: each logged prompt and the one that failed get one answer\n%s", len(got), len(recs), stdout)
			}
			for i, r := range recs {
				if got[i] != answerOf(r) {
					t.Errorf("answer %d is %s, its line says %s", i+1, got[i], answerOf(r))
				}
			}
			if last := got[len(recs)]; last != "false" && last != "null" {
				t.Errorf("the prompt whose line could not be written got %s, want a denial or null", last)
			}
			// space again: the same log takes the rest
			wrapAuditFile = func(f *os.File) audit.File { return f }
			if code, stdout, stderr := runApprove(t, stream, args...); code != 0 || len(answersOf(t, stdout)) != prompts {
				t.Fatalf("after the disk has room: exit %d, %d answers: %s", code, len(answersOf(t, stdout)), stderr)
			}
			f, _ = os.Open(log)
			res, err := audit.Verify(log, f, "")
			f.Close()
			if err != nil || res.Lines != len(recs)+prompts {
				t.Errorf("after the disk has room: %+v %v", res, err)
			}
		})
	}
}

// With --audit-fsync, a line the disk would not flush is cut back too: its prompt is denied.
func TestAuditFsyncFails(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", fullDiskPolicy)
	onFullDisk(t, fullDisk{left: 1 << 30, syncFails: true})
	log := filepath.Join(dir, "a.log")
	code, stdout, stderr := runApprove(t, fullDiskStream(3), "--policy", pol, "--audit", log, "--audit-fsync")
	if code != 1 || !strings.Contains(stderr, "sync") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if got := answersOf(t, stdout); strings.Join(got, " ") != "false" {
		t.Errorf("answers %v, want the first prompt denied", got)
	}
	if data, _ := os.ReadFile(log); len(data) != 0 {
		t.Errorf("the line that was not flushed is still there:\n%s", data)
	}
}

// When even cutting the partial line back fails, the log ends torn: fr-approve says so and
// points at repair-audit, which makes the log whole again, its cut recorded.
func TestAuditTornThenRepaired(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", fullDiskPolicy)
	stream := fullDiskStream(9)
	log := filepath.Join(dir, "a.log")
	onFullDisk(t, fullDisk{left: 700, truncFails: true})
	code, stdout, stderr := runApprove(t, stream, "--policy", pol, "--audit", log)
	if code != 1 || !strings.Contains(stderr, "could not be cut back") || !strings.Contains(stderr, "hint: cut the torn line with 'fr-approve repair-audit "+log+"'") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	got := answersOf(t, stdout)
	if len(got) == 0 || (got[len(got)-1] != "false" && got[len(got)-1] != "null") {
		t.Fatalf("answers %v: the prompt whose line was torn must be refused", got)
	}
	wrapAuditFile = func(f *os.File) audit.File { return f }

	// the torn log is refused, with the way out
	code, stdout, stderr = runApprove(t, stream, "--policy", pol, "--audit", log)
	if code != 2 || stdout != "" || !strings.Contains(stderr, "the line is incomplete") || !strings.Contains(stderr, "repair-audit") {
		t.Fatalf("on the torn log: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	before, _ := os.ReadFile(log)
	code, stdout, stderr = runApprove(t, "", "repair-audit", log)
	if code != 0 {
		t.Fatalf("repair-audit: exit %d: %s", code, stderr)
	}
	var res audit.VerifyResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Cut == nil {
		t.Fatalf("repair-audit printed %q: %v", stdout, err)
	}
	cut := before[res.Cut.Offset:]
	if int64(len(cut)) != res.Cut.Bytes || audit.Hash(cut) != res.Cut.SHA256 || res.Cut.Line != len(got) {
		t.Errorf("cut %+v; the torn bytes are %d, %s, on line %d", res.Cut, len(cut), audit.Hash(cut), len(got))
	}
	if saved, err := os.ReadFile(res.Cut.Saved); err != nil || string(saved) != string(cut) {
		t.Errorf("the bytes saved in %s are not the ones cut: %q, %v", res.Cut.Saved, saved, err)
	}
	f, _ := os.Open(log)
	recs, err := audit.Read(log, f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if last.Type != audit.TypeRepair || last.Cut == nil || *last.Cut != *res.Cut || len(recs) != res.Lines {
		t.Errorf("the cut is not recorded in the chain: %+v", last)
	}
	// fr-approve works on the log again
	if code, stdout, stderr := runApprove(t, stream, "--policy", pol, "--audit", log); code != 0 || len(answersOf(t, stdout)) != 9 {
		t.Errorf("after repair-audit: exit %d: %s", code, stderr)
	}
}
