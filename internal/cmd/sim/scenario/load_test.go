package scenario

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"empty", "", "s.yaml: empty scenario"},
		{"no version", "model: x\n", `s.yaml:1: missing "version: 1"`},
		{"version 2", "version: 2\n", "s.yaml:1: unsupported scenario version 2"},
		{"unknown top key", "version: 1\nmodle: x\n", `s.yaml:2: unknown key "modle" (known: version, model, repl, run, serve, faults)`},
		{"unknown repl key", "version: 1\nrepl:\n  sesionId: x\n", `s.yaml:3: unknown key "sesionId" in repl`},
		{"unknown step key", "version: 1\nrepl:\n  turns:\n    - steps:\n        - emit: {type: token}\n          colour: red\n", `s.yaml:6: unknown key "colour" in step`},
		{"two actions", "version: 1\nrun:\n  steps:\n    - emit: {type: x}\n      delay: 5ms\n", "s.yaml:4: step has 2 actions (emit, delay)"},
		{"no action", "version: 1\nrun:\n  steps:\n    - {}\n", "s.yaml:4: step has no action"},
		{"allow without approval", "version: 1\nrun:\n  steps:\n    - emit: {type: x}\n      allow: []\n", `s.yaml:5: "allow" does not go with "emit"`},
		{"emit without type", "version: 1\nrun:\n  steps:\n    - emit: {text: hi}\n", `s.yaml:4: an emitted event needs a string "type"`},
		{"approval without kind", "version: 1\nrun:\n  steps:\n    - approval: {command: ls}\n", `s.yaml:4: an approval needs a string "kind"`},
		{"bad duration", "version: 1\nrun:\n  steps:\n    - delay: soon\n", `s.yaml:4: bad duration "soon"`},
		{"nested unknown in allow", "version: 1\nrun:\n  steps:\n    - approval: {kind: shell_command, command: ls}\n      allow:\n        - tokenz: hi\n", `s.yaml:6: unknown key "tokenz" in step`},
		{"unknown fault", "version: 1\nfaults: {dotnett: true}\n", `s.yaml:2: unknown key "dotnett" in faults`},
		{"bad yaml", "version: 1\nrepl: [\n", "s.yaml:2: did not find expected node content"},
		{"wrong type", "version: 1\nfaults: {flood: lots}\n", "s.yaml:2: cannot unmarshal !!str `lots` into int"},
		{"bad regexp", "version: 1\nserve:\n  tasks:\n    - match: \"(\"\n", "s.yaml:3: task 1: bad match expression"},
		{"bad afterTurns", "version: 1\nrepl: {afterTurns: stop}\n", "s.yaml:2: afterTurns must be wrap or echo"},
		{"big event", "version: 1\nrun:\n  steps:\n    - big: {event: token, bytes: 5}\n", "s.yaml:4: big.event must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadJSON(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.json")
	src := `{"version": 1, "model": "m", "run": {"steps": [{"emit": {"type": "agent_starting", "agent": "a", "n": 1.5}}]}}`
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(s.Run.Steps[0].Emit.Bytes()); got != `{"type":"agent_starting","agent":"a","n":1.5}` {
		t.Errorf("got %s", got)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file loaded")
	}
}

// fakePeer answers prompts from a list of lines; io.EOF when they run out.
type fakePeer struct {
	lines   []string
	answers []string
	hung    bool
}

func (p *fakePeer) Emit(line []byte) error { p.lines = append(p.lines, string(line)); return nil }
func (p *fakePeer) Ask(ctx context.Context, prompt []byte) ([]byte, error) {
	p.lines = append(p.lines, string(prompt))
	if len(p.answers) == 0 {
		return nil, io.EOF
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	return []byte(a), nil
}
func (p *fakePeer) Hangup() error { p.hung = true; return nil }

const approvalScript = `version: 1
run:
  steps:
    - approval: {kind: shell_command, command: "rm -rf /tmp/x"}
      allow:
        - emit: {type: text, text: allowed}
      deny:
        - emit: {type: text, text: denied}
        - fail: "command denied"
    - emit: {type: text, text: after}
`

func TestApprovalAnswers(t *testing.T) {
	s, err := Parse("", []byte(approvalScript))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		answer string
		last   string
		failed bool
	}{
		{`{"type":"approval_response","approved":true}`, `{"type":"text","text":"after"}`, false},
		{`{"approved":true,"type":"approval_response"}`, `{"type":"text","text":"after"}`, false},
		{`{"type":"approval_response","approved":false}`, `{"type":"text","text":"denied"}`, true},
		{`{"type":"approval_response","Approved":true}`, `{"type":"text","text":"denied"}`, true},
		{`{"type":"approval_response","approved":"true"}`, `{"type":"text","text":"denied"}`, true},
		{`{"type":"user_input","text":"yes"}`, `{"type":"text","text":"denied"}`, true},
		{`yes`, `{"type":"text","text":"denied"}`, true},
		{"", `{"type":"text","text":"denied"}`, true}, // EOF: the client is gone
	} {
		p := &fakePeer{}
		if tc.answer != "" {
			p.answers = []string{tc.answer}
		}
		out, err := Play(context.Background(), s.Run.Steps, p)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.lines[len(p.lines)-1]; got != tc.last || (out.Failed != nil) != tc.failed {
			t.Errorf("answer %q: last line %s failed=%v", tc.answer, got, out.Failed != nil)
		}
		if p.lines[0] != `{"type":"approval_request","kind":"shell_command","command":"rm -rf /tmp/x"}` {
			t.Errorf("prompt %s", p.lines[0])
		}
	}
}

func TestPlayerFaults(t *testing.T) {
	s := Default()
	p := &fakePeer{answers: []string{`{"type":"approval_response","approved":true}`}}
	pl := &Player{Peer: p, Faults: Faults{DotNet: true, UnknownKind: "ssh_key_upload", Big: 1000, Flood: 3}, NoDelays: true}
	out, err := pl.Play(context.Background(), s.Repl.Turns[0].Steps)
	if err != nil {
		t.Fatal(err)
	}
	if out.Events != len(p.lines) || p.lines[0] != `{"type":"token","text":"x"}` || p.lines[3][:22] != `{"type":"thinking","te` {
		t.Fatalf("flood first: %v", p.lines[:4])
	}
	if strings.Join(out.ToolCalls, ",") != "read_file" || !strings.Contains(out.Text, "Hello!") {
		t.Errorf("outcome %+v", out)
	}
	for _, l := range p.lines {
		if strings.Contains(l, `"type":"tool_result"`) && len(l) < 1000 {
			t.Errorf("big not applied: %s", l)
		}
		if strings.Contains(l, `"`) && strings.Contains(l, "`parser.go`") {
			t.Errorf("not .NET escaped: %s", l)
		}
	}
	p = &fakePeer{answers: []string{`x`}}
	pl = &Player{Peer: p, Faults: Faults{UnknownKind: "ssh_key_upload"}, NoDelays: true}
	if _, err := pl.Play(context.Background(), s.Repl.Turns[1].Steps); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range p.lines {
		found = found || strings.Contains(l, `"kind":"ssh_key_upload"`)
	}
	if !found {
		t.Error("unknownKind not applied")
	}
	p = &fakePeer{}
	pl = &Player{Peer: p, Faults: Faults{CrashAfter: 2}, NoDelays: true}
	out, _ = pl.Play(context.Background(), s.Repl.Turns[0].Steps)
	if out.Crash == nil || out.Crash.ExitCode != 134 || len(p.lines) != 2 || out.Crash.Partial == "" {
		t.Errorf("crash after 2: %+v %d lines", out.Crash, len(p.lines))
	}
}

func TestQuestionsAndCancel(t *testing.T) {
	s := Default()
	turn := s.Repl.Turns[2].Steps
	allow := `{"type":"approval_response","approved":true}`
	p := &fakePeer{answers: []string{allow, `{"type":"question_response","answer":"no"}`, allow}}
	out, _ := (&Player{Peer: p, Questions: true, NoDelays: true}).Play(context.Background(), turn)
	if !strings.Contains(out.Text, "Leaving it uncommitted") || out.Approved != 2 || strings.Contains(strings.Join(p.lines, "\n"), "git_commit") {
		t.Errorf("question branch: %+v", out)
	}
	// Without questions the question is not asked, and nothing is committed.
	p = &fakePeer{answers: []string{allow, allow}}
	out, _ = (&Player{Peer: p, NoDelays: true}).Play(context.Background(), turn)
	if strings.Contains(strings.Join(p.lines, "\n"), `"type":"question"`) || out.Approved != 1 || strings.Contains(strings.Join(p.lines, "\n"), "git_commit") {
		t.Errorf("question asked without Questions, or a commit made: %v", p.lines)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := (&Player{Peer: &fakePeer{}}).Play(ctx, turn)
	if err != nil || !out.Cancelled {
		t.Errorf("cancel: %+v %v", out, err)
	}
	hang, _ := Parse("", []byte("version: 1\nrun:\n  steps:\n    - hangup: true\n    - emit: {type: x}\n"))
	hp := &fakePeer{}
	out, _ = Play(context.Background(), hang.Run.Steps, hp)
	if !hp.hung || !out.Hangup || len(hp.lines) != 0 {
		t.Errorf("hangup: %+v", out)
	}
}

func TestLineWriter(t *testing.T) {
	var b strings.Builder
	w := NewLineWriter(&b, Faults{CRLF: true, Noise: []string{"n1", "n2"}, NoiseEvery: 2, Split: &Split{Bytes: 3}})
	for _, l := range []string{`{"a":1}`, `{"b":2}`, `{"c":3}`} {
		if err := w.WriteLine([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	want := "n1\r\n{\"a\":1}\r\n{\"b\":2}\r\nn2\r\n{\"c\":3}\r\n"
	if b.String() != want {
		t.Errorf("got %q want %q", b.String(), want)
	}
}

// writes records each Write call separately.
type writes struct{ calls []string }

func (w *writes) Write(b []byte) (int, error) {
	w.calls = append(w.calls, string(b))
	return len(b), nil
}

func TestLineWriterSplitsWrites(t *testing.T) {
	w := &writes{}
	lw := NewLineWriter(w, Faults{Split: &Split{Bytes: 4, Pause: Duration(time.Millisecond)}})
	start := time.Now()
	if err := lw.WriteLine([]byte(`{"a":12}`)); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.calls, "|"); got != `{"a"|:12}|`+"\n" {
		t.Errorf("writes %q", w.calls)
	}
	if time.Since(start) < 2*time.Millisecond {
		t.Error("no pauses between pieces")
	}
	// A batch (a flood) is written in blocks.
	w.calls = nil
	lw = NewLineWriter(w, Faults{})
	lw.BeginBatch()
	for i := 0; i < 1000; i++ {
		_ = lw.WriteLine([]byte(`{"type":"token","text":"x"}`))
	}
	if len(w.calls) > 1 {
		t.Errorf("batch written in %d writes before EndBatch", len(w.calls))
	}
	if err := lw.EndBatch(); err != nil || len(w.calls) == 0 {
		t.Errorf("EndBatch: %v, %d writes", err, len(w.calls))
	}
}

func TestAliases(t *testing.T) {
	if _, err := Parse("a.yaml", []byte("version: 1\nrepl: {turns: [{steps: [{emit: {type: x, a: &a [1, *a]}}]}]}\n")); err == nil || !strings.Contains(err.Error(), "a.yaml:2: alias *a refers to a value that contains it") {
		t.Errorf("recursive alias: %v", err)
	}
	laughs := "version: 1\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 9; i++ {
		laughs += fmt.Sprintf("a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	if _, err := Parse("l.yaml", []byte(laughs)); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("alias bomb: %v", err)
	}
	s, err := Parse("ok.yaml", []byte("version: 1\nrun:\n  steps:\n    - emit: &e {type: agent_starting, agent: a}\n    - emit: *e\n"))
	if err != nil || len(s.Run.Steps) != 2 || string(s.Run.Steps[1].Emit.Bytes()) != `{"type":"agent_starting","agent":"a"}` {
		t.Errorf("plain alias: %v", err)
	}
}

// TestDocExample keeps the example in docs/fr-sim.md loadable.
func TestDocExample(t *testing.T) {
	b, err := os.ReadFile("../../../../docs/fr-sim.md")
	if err != nil {
		t.Skip("docs not found:", err)
	}
	doc := string(b)
	start := strings.Index(doc, "```yaml\nversion: 1\n")
	if start < 0 {
		t.Fatal("no scenario example in docs/fr-sim.md")
	}
	body := doc[start+len("```yaml\n"):]
	body = body[:strings.Index(body, "```")]
	s, err := Parse("docs/fr-sim.md", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Repl.Turns) != 2 || len(s.Run.Steps) != 2 || s.Serve.TaskFor("please deploy it") == nil || s.Serve.TaskFor("other") != nil {
		t.Errorf("example parsed oddly: %+v", s)
	}
}
