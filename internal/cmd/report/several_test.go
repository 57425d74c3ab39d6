package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// severalSessions records two chats and a run, each with its own fr-approve and audit log, as
// a CI job running them side by side would: one stream with all three, three logs, and the
// lines the chats were sent (fr-stream --record-input).
func severalSessions(t *testing.T) (stream []byte, audits []string, inputLog string) {
	t.Helper()
	type rec struct {
		env      map[string]string
		messages []string
		args     []string
	}
	var all []byte
	for _, r := range []rec{
		{map[string]string{"FUSERAFT_VSCODE_QUESTIONS": "1"}, []string{"fix the parser"}, []string{"--scenario", "testdata/chat.yaml", "repl", "--vscode", "--no-banner"}},
		{nil, nil, []string{"--scenario", "testdata/run.yaml", "run", "--bridge", "-c", "ci.yaml", "fix the parser"}},
		{nil, []string{"run the tests", "now push it"}, []string{"--scenario", "testdata/chat2.yaml", "repl", "--vscode", "--no-banner"}},
	} {
		s, a := recordChat(t, ciPolicy, r.env, r.messages, r.args...)
		all = append(all, s...)
		audits = append(audits, a)
	}
	// What fr-stream --record-input writes for the two chats, in order: the messages, the
	// answers to prompts (left out of the report), a slash command (no turn of its own).
	inputLog = filepath.Join(t.TempDir(), "sent.jsonl")
	writeFile2(t, inputLog, `{"type":"user_input","text":"fix the parser"}`+"\n"+
		`{"type":"approval_response","approved":false}`+"\n"+
		`{"type":"question_response","answer":null}`+"\n"+
		`{"type":"user_input","text":"/status"}`+"\n"+
		`{"type":"user_input","text":"run the tests"}`+"\n"+
		`{"type":"approval_response","approved":true}`+"\n"+
		`{"type":"user_input","text":"now push it"}`+"\n"+
		`{"type":"approval_response","approved":false}`+"\n")
	return all, audits, inputLog
}

// stableMany is stable for a report over several audit logs.
func stableMany(t *testing.T, js string, audits []string) string {
	t.Helper()
	for i, a := range audits {
		js = strings.ReplaceAll(js, a, "approvals-"+string(rune('1'+i))+".jsonl")
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("--format json is not one JSON object: %v\n%s", err, js)
	}
	for _, a := range m["approvals"].([]any) {
		delete(a.(map[string]any), "time")
	}
	if list, ok := m["audits"].([]any); ok {
		for _, a := range list {
			delete(a.(map[string]any), "last")
		}
	}
	if au, ok := m["audit"].(map[string]any); ok {
		delete(au, "last")
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return string(b) + "\n"
}

func TestGoldenSeveralSessions(t *testing.T) {
	stream, audits, inputLog := severalSessions(t)
	args := []string{"--prices", "testdata/prices.yaml", "--input-log", inputLog}
	for _, a := range audits {
		args = append(args, "--audit", a)
	}
	for _, f := range []struct{ format, ext string }{{"markdown", "md"}, {"github", "github"}, {"junit", "xml"}, {"html", "html"}, {"json", "json"}} {
		out, errs, code := report(t, stream, nil, append(args, "--format", f.format)...)
		if code != 0 {
			t.Fatalf("--format %s: exit %d: %s", f.format, code, errs)
		}
		out = strings.ReplaceAll(out, inputLog, "sent.jsonl")
		if f.format == "json" {
			out = stableMany(t, out, audits)
		} else {
			for i, a := range audits {
				out = strings.ReplaceAll(out, a, "approvals-"+string(rune('1'+i))+".jsonl")
			}
		}
		golden(t, "several."+f.ext, out)
	}

	// What a person checks: every prompt has its decision from its own session's log, each
	// log matched all its records, the chats' own messages are shown in their transcripts, and
	// the titled chat is named by its title.
	out, _, _ := report(t, stream, nil, append(args, "--format", "json")...)
	var r Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Sessions) != 3 {
		t.Fatalf("%d sessions, want 3", len(r.Sessions))
	}
	for _, a := range r.Approvals {
		if a.Decision == Unknown {
			t.Errorf("prompt %q of %s: decision unknown with every audit log given", a.Summary, a.Session)
		}
		if a.Session == "8a1d-sim-repl-0043" && strings.HasPrefix(a.Summary, "shell: go test") && a.Decision != Allow {
			t.Errorf("the second chat's go test: %s, want allow", a.Decision)
		}
	}
	if len(r.Audits) != 3 {
		t.Fatalf("audits: %+v, want one for each of the 3 logs", r.Audits)
	}
	for _, a := range r.Audits {
		if a.Matched != a.Records {
			t.Errorf("audit log %s: %d of %d records matched", a.File, a.Matched, a.Records)
		}
	}
	users := map[int][]string{}
	for _, e := range r.Transcript {
		if e.Kind == "user" {
			users[e.Session] = append(users[e.Session], e.Text)
		}
	}
	if got := strings.Join(users[0], "|"); got != "fix the parser" {
		t.Errorf("first chat's messages: %q", got)
	}
	if got := strings.Join(users[2], "|"); got != "run the tests|now push it" {
		t.Errorf("second chat's messages: %q", got)
	}
	if r.Sessions[2].Title != "Tidy the README" {
		t.Errorf("second chat's title: %q", r.Sessions[2].Title)
	}

	// The page has a section for each session, in which its own transcript is.
	page, _, _ := report(t, stream, nil, append(args, "--format", "html")...)
	heads := regexp.MustCompile(`<h3[^>]*>([^<]*)`).FindAllStringSubmatch(page, -1)
	var names []string
	for _, h := range heads {
		names = append(names, h[1])
	}
	if got := strings.Join(names, "|"); got != "chat |run: fix the parser |chat: Tidy the README " {
		t.Errorf("the page's session headings: %q", got)
	}
	if i, j := strings.Index(page, "<pre>now push it</pre>"), strings.Index(page, "Tidy the README"); i < 0 || i < j {
		t.Errorf("the second chat's message is not in its section")
	}

	// The same logs joined into one file read the same: each chain is verified on its own.
	joined := filepath.Join(t.TempDir(), "all.jsonl")
	var cat []byte
	for _, a := range audits {
		cat = append(cat, []byte(readFile2(t, a))...)
	}
	if err := os.WriteFile(joined, cat, 0o600); err != nil {
		t.Fatal(err)
	}
	one, errs, code := report(t, stream, nil, "--format", "json", "--input-log", inputLog, "--prices", "testdata/prices.yaml", "--audit", joined)
	if code != 0 {
		t.Fatalf("joined logs: exit %d: %s", code, errs)
	}
	var r2 Report
	if err := json.Unmarshal([]byte(one), &r2); err != nil {
		t.Fatal(err)
	}
	for i := range r.Approvals {
		if a, b := r.Approvals[i], r2.Approvals[i]; a.Decision != b.Decision || a.Rule != b.Rule || a.Summary != b.Summary {
			t.Errorf("prompt %d: %s by %s from separate logs, %s by %s from the joined one", a.Seq, a.Decision, a.Rule, b.Decision, b.Rule)
		}
	}
	if len(r2.Audits) != 3 || r2.Audits[1].Chain != 2 || r2.Audits[1].FromLine < 2 {
		t.Errorf("joined log's chains: %+v", r2.Audits)
	}
	golden(t, "several-joined.json", stableMany(t, strings.ReplaceAll(one, joined, "all.jsonl"), nil))

	// A chain of the joined file that is changed refuses the report, naming the line in the
	// file and the chain.
	lines := strings.SplitAfter(string(cat), "\n")
	broken := regexp.MustCompile(`"decision":"deny"`)
	for i := len(lines) - 1; i >= 0; i-- {
		if broken.MatchString(lines[i]) {
			lines[i] = broken.ReplaceAllString(lines[i], `"decision":"allow"`)
			break
		}
	}
	if err := os.WriteFile(joined, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs, code = report(t, stream, nil, "--format", "json", "--audit", joined)
	if code != 2 || !regexp.MustCompile(`audit log .*all\.jsonl:\d+: the line does not match its hash: it was changed \(chain 3 of 3, from line \d+\)`).MatchString(errs) {
		t.Errorf("a changed line in a joined log: exit %d: %s", code, errs)
	}
}

// Splitting an audit log into chains loses nothing and moves nothing: the chains joined are
// the log, and each but the first starts at a line with prev null.
func FuzzSplitChains(f *testing.F) {
	f.Add([]byte("{\"prev\":null}\n{\"prev\":\"a\"}\n{\"prev\":null}\n"))
	f.Add([]byte("not json\n{\"prev\":null}"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, log []byte) {
		chains, first, err := splitChains(strings.NewReader(string(log)))
		if err != nil {
			t.Fatal(err)
		}
		if len(chains) != len(first) {
			t.Fatalf("%d chains, %d first lines", len(chains), len(first))
		}
		var joined []byte
		for i, c := range chains {
			if i > 0 {
				line, _, _ := strings.Cut(string(c), "\n")
				if !genesis([]byte(line)) {
					t.Fatalf("chain %d starts at %q, not a first line", i+1, line)
				}
				if first[i] <= first[i-1] {
					t.Fatalf("first lines out of order: %v", first)
				}
			}
			joined = append(joined, c...)
		}
		if string(joined) != string(log) {
			t.Fatalf("joined chains differ from the log")
		}
	})
}

// An input log that cannot be read is a usage error, as an audit log is.
func TestInputLogUnreadable(t *testing.T) {
	_, errs, code := report(t, nil, nil, "--input-log", filepath.Join(t.TempDir(), "none.jsonl"))
	if code != 2 || !strings.Contains(errs, "fr-report: error: input log: open ") {
		t.Errorf("exit %d: %s", code, errs)
	}
}
