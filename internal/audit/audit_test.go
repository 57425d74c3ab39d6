package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestVerifyChain(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a.log")
	a, recs, err := Open(name, Options{})
	if err != nil || len(recs) != 0 {
		t.Fatal(err, recs)
	}
	for i := 0; i < 3; i++ {
		if err := a.Append(Record{Time: "t", Type: "approval_request", Summary: "s", Decision: "allow", Decider: "rule", Policy: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	// a second writer is refused while the first holds the log
	if _, _, err := Open(name, Options{}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second open: %v", err)
	}
	a.Close()
	data, _ := os.ReadFile(name)
	lines := strings.SplitAfter(string(data), "\n")
	lines = lines[:len(lines)-1]
	check := func(text string) (int, string) {
		_, err := Verify("a.log", strings.NewReader(text), "")
		if err == nil {
			return 0, ""
		}
		ce, ok := err.(*ChainError)
		if !ok {
			t.Fatalf("%v", err)
		}
		return ce.Line, ce.Msg
	}
	if n, msg := check(string(data)); n != 0 {
		t.Fatalf("intact log broken at %d: %s", n, msg)
	}
	for _, c := range []struct {
		name string
		text string
		line int
	}{
		{"swapped", lines[0] + lines[2] + lines[1], 2},
		{"removed middle", lines[0] + lines[2], 2},
		{"removed first", lines[1] + lines[2], 1},
		{"edited", lines[0] + strings.Replace(lines[1], "allow", "deny", 1) + lines[2], 2},
		{"last edited", lines[0] + lines[1] + strings.Replace(lines[2], "allow", "deny", 1), 3},
		{"hash removed", lines[0] + strings.Replace(lines[1], `,"hash":`, `,"x":`, 1) + lines[2], 2},
		{"inserted", lines[0] + lines[0] + lines[1], 2},
		{"cut", lines[0] + strings.TrimSuffix(lines[1], "\n"), 2},
		{"garbage", lines[0] + "hello\n", 2},
	} {
		if n, msg := check(c.text); n != c.line {
			t.Errorf("%s: broken at line %d (%s), want %d", c.name, n, msg, c.line)
		}
	}
	// reopening continues the chain
	a, recs, err = Open(name, Options{})
	if err != nil || len(recs) != 3 {
		t.Fatal(err, len(recs))
	}
	a.Append(Record{Time: "t", Summary: "4"})
	a.Close()
	data, _ = os.ReadFile(name)
	if res, err := Verify(name, strings.NewReader(string(data)), ""); err != nil || res.Lines != 4 {
		t.Errorf("after reopening: %+v %v", res, err)
	}
}

// repair-audit waits for nobody: a log in use by an fr-approve is refused.
func TestRepairAuditInUse(t *testing.T) {
	name := filepath.Join(t.TempDir(), "a.log")
	a, _, err := Open(name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = Repair(name, RepairOptions{Now: time.Now()})
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("repair of a log in use: %v", err)
	}
}

// Whatever follows the lines that verify, repair-audit --force leaves a log that verifies and
// holds those lines unchanged, with the rest saved byte for byte and recorded; without
// --force it cuts only a last line without a line end, and otherwise changes nothing.
func FuzzRepairAudit(f *testing.F) {
	f.Add(3, []byte(`{"time":"t","session":null,"type":"approval_req`), false)
	f.Add(1, []byte("garbage\n"), true)
	f.Add(2, []byte("\x00\x00\x00"), false)
	f.Add(0, []byte("{}\n{\"a\":1}"), true)
	f.Fuzz(func(t *testing.T, lines int, tail []byte, force bool) {
		lines = max(0, lines%5)
		dir := t.TempDir()
		name := filepath.Join(dir, "a.log")
		a, _, err := Open(name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < lines; i++ {
			a.Append(Record{Time: "t", Type: "approval_request", Summary: fmt.Sprint(i), Decision: "allow", Decider: "rule", Policy: "p"})
		}
		a.Close()
		good, _ := os.ReadFile(name)
		before := append(append([]byte(nil), good...), tail...)
		os.WriteFile(name, before, 0o600)
		_, scanErr := Scan(name, strings.NewReader(string(before)), nil)
		var ce *ChainError
		errors.As(scanErr, &ce)

		res, err := Repair(name, RepairOptions{Force: force, Now: time.Unix(0, 0)})
		after, _ := os.ReadFile(name)
		if err != nil {
			if force || ce == nil || ce.Torn {
				t.Fatalf("repair failed: %v", err)
			}
			if string(after) != string(before) {
				t.Fatal("a refused repair changed the log")
			}
			return
		}
		if _, err := Verify(name, strings.NewReader(string(after)), ""); err != nil {
			t.Fatalf("the repaired log does not verify: %v", err)
		}
		if ce == nil {
			if res.Cut != nil || string(after) != string(before) {
				t.Fatalf("a log that verifies was changed: %+v", res.Cut)
			}
			return
		}
		if !strings.HasPrefix(string(after), string(before[:ce.Offset])) || int64(len(good)) > ce.Offset {
			t.Fatalf("lines that verified were cut: offset %d of %d good bytes", ce.Offset, len(good))
		}
		saved, err := os.ReadFile(res.Cut.Saved)
		if err != nil || string(saved) != string(before[ce.Offset:]) || Hash(saved) != res.Cut.SHA256 {
			t.Fatalf("the bytes saved are not the ones cut: %v", err)
		}
	})
}
