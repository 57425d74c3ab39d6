package report

import (
	"encoding/json"
	"strings"
	"testing"
)

const ciPolicy = "../../../examples/ci-go.yaml"

// sessions are the fr-sim sessions every format is checked over.
var sessions = []struct {
	name     string
	env      map[string]string
	args     []string
	messages []string
}{
	// a chat: a reply, tools, a file changed, a refused push, a question, token counts
	{"chat", map[string]string{"FUSERAFT_VSCODE_QUESTIONS": "1"}, []string{"--scenario", "testdata/chat.yaml", "repl", "--vscode", "--no-banner"}, []string{"fix the parser"}},
	// allowed test run and file write, a refused installer, a question, an unknown event type, noise
	{"run", nil, []string{"--scenario", "testdata/run.yaml", "run", "--bridge", "-c", "ci.yaml", "fix the parser"}, nil},
	// a refused hand-off fails the run
	{"fail", nil, []string{"--scenario", "testdata/fail.yaml", "run", "--bridge", "-c", "ci.yaml", "ship it"}, nil},
}

// stable drops what changes from one recording to the next: the audit log's times and hashes.
func stable(t *testing.T, js string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("--format json is not one JSON object: %v\n%s", err, js)
	}
	for _, a := range m["approvals"].([]any) {
		delete(a.(map[string]any), "time")
	}
	if au, ok := m["audit"].(map[string]any); ok {
		delete(au, "last")
		au["file"] = "approvals.jsonl"
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return string(b) + "\n"
}

func TestGolden(t *testing.T) {
	for _, s := range sessions {
		t.Run(s.name, func(t *testing.T) {
			session, audit := recordChat(t, ciPolicy, s.env, s.messages, s.args...)
			for _, f := range []struct{ format, ext string }{{"markdown", "md"}, {"github", "github"}, {"junit", "xml"}, {"html", "html"}, {"json", "json"}} {
				out, errs, code := report(t, session, nil, "--audit", audit, "--format", f.format, "--prices", "testdata/prices.yaml")
				if code != 0 {
					t.Fatalf("--format %s: exit %d: %s", f.format, code, errs)
				}
				out = strings.ReplaceAll(out, audit, "approvals.jsonl")
				if f.format == "json" {
					out = stable(t, out)
				}
				golden(t, s.name+"."+f.ext, out)
			}
			// without the audit log, decisions are unknown, never guessed
			out, _, _ := report(t, session, nil, "--format", "json")
			var r Report
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			for _, a := range r.Approvals {
				if a.Decision != Unknown || a.Decider != "" {
					t.Errorf("without --audit, prompt %q decided %q by %q", a.Summary, a.Decision, a.Decider)
				}
			}
		})
	}
}
