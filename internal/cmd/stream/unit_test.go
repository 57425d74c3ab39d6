package stream

import (
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/cmdutil"
)

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		in          string
		rest, extra string
	}{
		{"fr-stream --help", "fr-stream --help", ""},
		{"fr-stream repl", "fr-stream repl", ""},
		{"fr-stream repl --model m", "fr-stream repl --model m", ""},
		{"fr-stream run -c team.yaml task --grace 5s", "fr-stream run -c team.yaml --grace 5s task", ""},
		{"fr-stream run task -c=team.yaml --any-version", "fr-stream run -c=team.yaml --any-version task", ""},
		{"fr-stream run -c team.yaml task -- --max-turns 3", "fr-stream run -c team.yaml task", "--max-turns 3"},
		{"fr-stream repl -- --flag -- x", "fr-stream repl", "--flag -- x"},
		{"fr-stream run -c team.yaml - --input in", "fr-stream run -c team.yaml --input in -", ""},
		{"fr-stream run task -f pretty -r x", "fr-stream run -f pretty -r x task", ""},
		{"fr-stream other a --b", "fr-stream --b other a", ""},
		// the command's flags before it
		{"fr-stream --model m repl -- --flag", "fr-stream repl --model m", "--flag"},
		{"fr-stream --fuseraft run run -c x t -- a", "fr-stream run --fuseraft run -c x t", "a"},
		{"fr-stream --fuseraft repl -- a", "fr-stream --fuseraft repl -- a", ""}, // no command named
	}
	for _, tt := range tests {
		rest, extra := splitArgs(App(cmdutil.Streams{}), strings.Fields(tt.in))
		app := App(cmdutil.Streams{})
		if got := strings.Join(cmdutil.Intersperse(app, rest), " "); got != tt.rest {
			t.Errorf("splitArgs(%q) rest = %q, want %q", tt.in, got, tt.rest)
		}
		if got := strings.Join(extra, " "); got != tt.extra {
			t.Errorf("splitArgs(%q) extra = %q, want %q", tt.in, got, tt.extra)
		}
	}
}

func TestIsEndOfInput(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{`{"text":null}`, true},
		{` {"type":"user_input","text":null} `, true},
		{`{"type":"user_input","text":null,"images":[]}`, true},
		{`{"type":"user_input","text":"null"}`, false},
		{`{"type":"user_input"}`, false},
		{`{"type":"question_response","text":null}`, false},
		{`{"text":null`, false},
		{`null`, false},
		{`text null`, false},
		{``, false},
	}
	for _, tt := range tests {
		if got := isEndOfInput([]byte(tt.line)); got != tt.want {
			t.Errorf("isEndOfInput(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func FuzzIsEndOfInput(f *testing.F) {
	for _, s := range []string{`{"text":null}`, `{"type":"user_input","text":null}`, `hello`, `{"text":"x"}`, `{"text":nul}`, "\x00{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if isEndOfInput([]byte(s)) && !strings.Contains(s, "null") {
			t.Fatalf("%q taken as end of input", s)
		}
	})
}

func TestFormatDefault(t *testing.T) {
	for _, tc := range []struct {
		terminal bool
		args     []string
		pretty   bool
	}{
		{false, nil, false},
		{true, nil, true},
		{true, []string{"--format", "jsonl"}, false},
		{false, []string{"--format", "pretty"}, true},
	} {
		var got *options
		s := cmdutil.Streams{Out: io.Discard, Err: io.Discard, OutTerminal: tc.terminal, Getenv: func(k string) string {
			if k == "FUSERAFT_BIN" {
				return "sh"
			}
			return ""
		}}
		app := App(s)
		app.Commands[0].Action = func(c *cli.Context) error {
			o, err := optionsFrom(c, s, "repl", nil)
			got = o
			return err
		}
		if err := app.Run(append([]string{"fr-stream", "repl"}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		if got.pretty != tc.pretty {
			t.Errorf("terminal=%v %v: pretty = %v, want %v", tc.terminal, tc.args, got.pretty, tc.pretty)
		}
	}
}
