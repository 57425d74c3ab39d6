package sim

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fr-sim": func() { os.Exit(Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			for _, k := range []string{"FRSIM_SCENARIO", "FRSIM_RECORD", "FRSIM_FAULTS", "FRSIM_PACE", "FUSERAFT_VSCODE_QUESTIONS"} {
				e.Setenv(k, "")
			}
			// Under -race every process would otherwise sleep 1s at exit.
			e.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfor": testkit.WaitFor,
		},
		Condition: testkit.Condition,
	})
}

func TestReorder(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"fr-sim repl --vscode --no-banner", "fr-sim repl --vscode --no-banner"},
		{"fr-sim run task words --bridge -c cfg.yaml", "fr-sim run --bridge -c cfg.yaml task words"},
		{"fr-sim run --bridge fix -c cfg.yaml --dotnet", "fr-sim --dotnet run --bridge -c cfg.yaml fix"},
		{"fr-sim --scenario s.yaml run -c=x t --record r.jsonl", "fr-sim --scenario s.yaml --record r.jsonl run -c=x t"},
		{"fr-sim repl --model m --vscode --split 5/1ms", "fr-sim --split 5/1ms repl --model m --vscode"},
		{"fr-sim run --bridge -c c -- --odd-task", "fr-sim run --bridge -c c -- --odd-task"},
		{"fr-sim sessions --json --all", "fr-sim sessions --json --all"},
		{"fr-sim --faults dotnet serve --socket x", "fr-sim --faults dotnet serve --socket x"},
		{"fr-sim", "fr-sim"},
	} {
		if got := strings.Join(cmdutil.Intersperse(App(cmdutil.Streams{}), strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("reorder(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		in   string
		text string
		end  bool
	}{
		{`hello`, "hello", false},
		{`{"type":"user_input","text":"hi there"}`, "hi there", false},
		{`{"text":"no type"}`, "no type", false},
		{`{"text":null}`, "", true},
		{` {"text" : null } `, "", true},
		{`{"type":"approval_response","approved":true}`, `{"type":"approval_response","approved":true}`, false},
		{`{"text":5}`, `{"text":5}`, false},
		{"crlf\r", "crlf", false},
		{`{broken`, `{broken`, false},
	} {
		text, end := message([]byte(tc.in))
		if text != tc.text || end != tc.end {
			t.Errorf("message(%q) = %q, %v; want %q, %v", tc.in, text, end, tc.text, tc.end)
		}
	}
}

func FuzzMessage(f *testing.F) {
	for _, s := range []string{`hi`, `{"text":null}`, `{"text":"x"}`, `{"type":"interrupt"}`, "{\"text\":\"\\u0000\"}\r"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		text, end := message(b)
		if end && text != "" {
			t.Fatalf("end of input with text %q", text)
		}
		_ = isInterrupt(b)
	})
}

// TestRunInProcess drives Run with buffers, as the other commands' tests do.
func TestRunInProcess(t *testing.T) {
	var out, errb bytes.Buffer
	env := map[string]string{"FRSIM_PACE": "0"}
	s := cmdutil.Streams{In: strings.NewReader("hello\n"), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }}
	if code := Run(context.Background(), s, []string{"fr-sim", "repl", "--vscode", "--no-banner"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.HasPrefix(lines[0], `{"type":"ready","protocolVersion":1,`) || lines[len(lines)-1] != `{"type":"session_end"}` {
		t.Fatalf("unexpected session:\n%s", out.String())
	}
}
