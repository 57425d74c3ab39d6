package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fuseraft/fr/internal/testkit/golden"
)

// formatRecords are records with every field set, and with only the fields always written.
func formatRecords() []Record {
	sess, answer := "s-1", "yes <&> é"
	return []Record{
		{Time: "2026-12-03T22:00:00.123456789Z", Session: &sess, Type: "approval_request", Kind: "shell_command",
			Summary: "shell: go test ./... && echo \"<done>\"", Decision: "allow", Decider: "rule", Rule: "go", Part: "go test ./...",
			Reason: "r", Charged: []string{"go"}, Policy: "sha256:abc", Latency: 0.125},
		{Time: "2026-12-03T22:00:01Z", Type: "question", Summary: "question: go on?", Decision: "answer", Answer: &answer,
			Decider: "person", Typed: []string{"y", "yes"}, Policy: "sha256:abc", Latency: 1500},
		{Time: "2026-12-03T22:00:02Z", Type: TypeRepair, Summary: "cut 3 bytes at offset 10 (line 3)", Decision: "cut",
			Decider: "repair-audit", Reason: "torn", Cut: &Cut{Line: 3, Offset: 10, Bytes: 3, SHA256: "sha256:def", Saved: "a.log.torn-x", Reason: "torn"}},
		{},
	}
}

// The audit log's lines, byte for byte: the order of the fields, what is left out when empty,
// <, > and & unescaped, prev chaining each line to the one before, and hash at the end.
func TestLineFormat(t *testing.T) {
	name := filepath.Join(t.TempDir(), "a.log")
	a, _, err := Open(name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range formatRecords() {
		if err := a.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/format.jsonl", string(b))
	recs, err := Read(name, bytes.NewReader(b))
	if err != nil || len(recs) != len(formatRecords()) {
		t.Fatalf("the log does not read back: %d records, %v", len(recs), err)
	}
}
