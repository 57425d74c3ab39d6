package ls

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/termsafetest"
	"github.com/fuseraft/fr/pkg/wire"
)

// asFuseraft makes the test binary play fuseraft (fr-sim) for the in-process tests below.
const asFuseraft = "FR_LS_TEST_AS_FUSERAFT"

// asFrLs makes the test binary run fr-ls, for the test on a real terminal.
const asFrLs = "FR_LS_TEST_AS_FRLS"

func TestMain(m *testing.M) {
	if os.Getenv(asFrLs) == "1" {
		os.Unsetenv(asFrLs)
		os.Setenv(asFuseraft, "1") // the fuseraft it starts is this binary again
		os.Exit(Run(context.Background(), scriptStreams(), append([]string{"fr-ls"}, os.Args[1:]...)))
	}
	if os.Getenv(asFuseraft) == "1" {
		os.Exit(sim.Run(context.Background(), cmdutil.OSStreams(), append([]string{"fr-sim"}, os.Args[1:]...)))
	}
	testscript.Main(m, map[string]func(){
		"fr-ls": func() { os.Exit(Run(context.Background(), scriptStreams(), os.Args)) },
		// fr-sim under fuseraft's name, so fr-ls finds it on PATH as it would find fuseraft.
		"fuseraft": func() { os.Exit(sim.Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
		"fr-sim":   func() { os.Exit(sim.Run(context.Background(), cmdutil.OSStreams(), os.Args)) },
	})
}

// scriptStreams are the real streams, with the facts a script sets in its environment:
// TEST_TERMINAL=1|0 says whether stdout is a terminal, TEST_NOW (RFC 3339) fixes the clock.
func scriptStreams() cmdutil.Streams {
	s := cmdutil.OSStreams()
	if v := os.Getenv("TEST_TERMINAL"); v != "" {
		s.OutTerminal = v == "1"
	}
	if v := os.Getenv("TEST_NOW"); v != "" {
		now, err := time.Parse(time.RFC3339, v)
		if err != nil {
			panic(err)
		}
		s.Now = func() time.Time { return now }
	}
	return s
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script", UpdateScripts: os.Getenv("FR_UPDATE_SCRIPTS") == "1",
		Setup: func(e *testscript.Env) error {
			// Under -race every command would otherwise wait a second before it exits.
			e.Setenv("GORACE", "atexit_sleep_ms=0")
			return termsafetest.Setup(e)
		},
		Cmds: termsafetest.Cmds(),
	})
}

// resourceArgs are fr-ls command lines for every resource, with what fuseraft's own answer to
// the same query is (to count the items).
func resourceArgs(t *testing.T) map[string][2][]string {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "team.yaml")
	if err := os.WriteFile(cfg, []byte("name: Team\nagents:\n  - name: A\n  - name: B\nselection:\n  type: llm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := "a3f9c2e1-5b7d-4e0a-9c11-2f6d8b4e7a01"
	return map[string][2][]string{
		"sessions":      {{"sessions", "--all"}, {"sessions", "--all", "--json"}},
		"session":       {{"session", id}, {"sessions", "--show", id, "--json"}},
		"repl-sessions": {{"repl-sessions"}, {"sessions", "--repl", "--json"}},
		"memory":        {{"memory", "--agent", "coder"}, {"memory", "list", "--agent", "coder", "--json"}},
		"memory-agents": {{"memory-agents"}, {"memory", "agents", "--json"}},
		"context":       {{"context"}, {"context", "list", "--json"}},
		"schedules":     {{"schedules"}, {"schedule", "list", "--json"}},
		"plugins":       {{"plugins"}, {"plugins", "--json"}},
		"models":        {{"models"}, {"models", "--json"}},
		"configs":       {{"configs", "--dir", dir}, {"config", "--list", "--dir", dir, "--json"}},
		"validate":      {{"validate", cfg}, {"validate", cfg, "--json"}},
		"templates":     {{"templates"}, {"init", "--list-templates", "--json"}},
	}
}

// fuseraftAnswer runs fr-sim's answer to args in process, saves the envelope, and returns a
// stand-in fuseraft that prints it (so each fr-ls run below starts a shell, not a test
// binary) and the number of items.
func fuseraftAnswer(t *testing.T, args []string) (bin string, items int) {
	var out, errb bytes.Buffer
	code := sim.Run(context.Background(), cmdutil.Streams{In: strings.NewReader(""), Out: &out, Err: &errb,
		Getenv: func(string) string { return "" }}, append([]string{"fr-sim"}, args...))
	if code != 0 {
		t.Fatalf("fr-sim %q: exit %d: %s", args, code, errb.String())
	}
	env, err := wire.DecodeEnvelope(out.Bytes())
	if err != nil {
		t.Fatalf("fr-sim %q: %v", args, err)
	}
	items = len(env.Items)
	if env.Item != nil {
		items = 1
	}
	dir := t.TempDir()
	envelope := filepath.Join(dir, "envelope.json")
	if err := os.WriteFile(envelope, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "fuseraft")
	script := "#!/bin/sh\nexec cat '" + envelope + "'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, items
}

// TestEveryResourceEveryFormat lists every resource in every format, with stdout a terminal
// and not, and checks what a user would: JSONL lines are the items, json is one array of
// them, TSV has a header and one row per item with the same number of cells, and a table
// has a header, one line per item, and fits the width.
func TestEveryResourceEveryFormat(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for name, a := range resourceArgs(t) {
		bin, want := fuseraftAnswer(t, a[1])
		if want == 0 {
			t.Fatalf("%s: the dataset has no items", name)
		}
		for _, terminal := range []bool{false, true} {
			for _, format := range []string{"", "jsonl", "json", "tsv", "table"} {
				args := append([]string{"fr-ls", "--fuseraft", bin}, a[0]...)
				if format != "" {
					args = append(args, "--format", format)
				}
				var out, errb bytes.Buffer
				env := map[string]string{}
				code := Run(context.Background(), cmdutil.Streams{In: strings.NewReader(""), Out: &out, Err: &errb,
					Getenv: func(k string) string { return env[k] }, OutTerminal: terminal, Width: 72, Now: func() time.Time { return now }}, args)
				label := strings.Join(args[3:], " ")
				if terminal {
					label += " (terminal)"
				}
				if code != 0 {
					t.Errorf("%s: exit %d: %s", label, code, errb.String())
					continue
				}
				effective := format
				if effective == "" {
					effective = "jsonl"
					if terminal {
						effective = "table"
					}
				}
				lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
				switch effective {
				case "jsonl":
					if len(lines) != want {
						t.Errorf("%s: %d lines, want %d items", label, len(lines), want)
					}
					for _, l := range lines {
						var m map[string]any
						if err := json.Unmarshal([]byte(l), &m); err != nil {
							t.Errorf("%s: line is not an object: %.80s", label, l)
						}
					}
				case "json":
					var arr []map[string]any
					if err := json.Unmarshal(out.Bytes(), &arr); err != nil || len(arr) != want {
						t.Errorf("%s: want an array of %d objects, got %d (%v)", label, want, len(arr), err)
					}
				case "tsv":
					if len(lines) != want+1 {
						t.Errorf("%s: %d lines, want header + %d", label, len(lines), want)
					}
					cells := strings.Count(lines[0], "\t")
					for _, l := range lines[1:] {
						if strings.Count(l, "\t") != cells {
							t.Errorf("%s: row has %d tabs, header %d: %q", label, strings.Count(l, "\t"), cells, l)
						}
					}
					if strings.Contains(out.String(), "\x1b") {
						t.Errorf("%s: colour in TSV", label)
					}
				case "table":
					if len(lines) != want+1 {
						t.Errorf("%s: %d lines, want header + %d", label, len(lines), want)
					}
					colored := strings.Contains(out.String(), "\x1b[")
					if colored != terminal {
						t.Errorf("%s: colour %v with terminal %v", label, colored, terminal)
					}
					for _, l := range lines {
						plain := stripANSI(l)
						if w := render.StringWidth(plain); w > 72 {
							t.Errorf("%s: line of %d columns: %q", label, w, plain)
						}
						if plain != strings.TrimRight(plain, " ") {
							t.Errorf("%s: trailing spaces: %q", label, plain)
						}
					}
					if h := stripANSI(lines[0]); h != strings.ToUpper(h) {
						t.Errorf("%s: header %q", label, h)
					}
				}
			}
		}
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestReorder(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"fr-ls sessions --format json --all", "fr-ls --format json sessions --all"},
		{"fr-ls session ID --fields a,b", "fr-ls --fields a,b session ID"},
		{"fr-ls --jq .x memory --agent coder", "fr-ls --jq .x memory --agent coder"},
		{"fr-ls validate cfg.yaml --format=tsv --any-version", "fr-ls --format=tsv --any-version validate cfg.yaml"},
		{"fr-ls sessions --project P --format table", "fr-ls --format table sessions --project P"},
		{"fr-ls sessions --help", "fr-ls sessions --help"},
		{"fr-ls - --format tsv", "fr-ls --format tsv -"},
		{"fr-ls validate -- --odd.yaml", "fr-ls validate -- --odd.yaml"},
		{"fr-ls", "fr-ls"},
	} {
		got := strings.Join(cmdutil.Intersperse(App(cmdutil.Streams{}), strings.Fields(tc.in)), " ")
		if got != tc.want {
			t.Errorf("reorder(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRelative(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{10 * time.Second, "just now"},
		{-10 * time.Second, "in under a minute"},
		{time.Minute, "1 minute ago"},
		{3*time.Hour + 5*time.Minute, "3 hours ago"},
		{-2 * 24 * time.Hour, "in 2 days"},
		{40 * 24 * time.Hour, "1 month ago"},
		{800 * 24 * time.Hour, "2 years ago"},
	} {
		if got := relative(now.Add(-tc.d), now); got != tc.want {
			t.Errorf("relative(-%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestTSVCell(t *testing.T) {
	for _, tc := range []struct{ key, raw, want string }{
		{"task", `"a\tb\nc\\d\re"`, `a\tb\nc\\d\re`},
		{"startedAt", `"2026-11-30T09:12:44.1234567+01:00"`, "2026-11-30T08:12:44Z"},
		{"lastRun", `"2026-11-30T09:12:44.123"`, "2026-11-30T09:12:44Z"},
		{"task", `"2026-11-30T09:12:44+01:00"`, "2026-11-30T09:12:44+01:00"},
		{"title", `null`, ""},
		{"turnCount", `12345678901234567890`, "12345678901234567890"},
		{"agents", `[ "a", "b" ]`, `["a","b"]`},
		{"isComplete", `false`, "false"},
		{"task", `"\u0022quoted\u0022 \u00E9"`, `"quoted" é`},
	} {
		if got := tsvCell(decodeValue(tc.key, []byte(tc.raw), true)); got != tc.want {
			t.Errorf("tsvCell(%s=%s) = %q, want %q", tc.key, tc.raw, got, tc.want)
		}
	}
}

func TestTableCell(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ key, raw, want string }{
		{"task", `"line1\nline2\u001b[31m"`, "line1␊line2␛[31m"},
		{"lastUpdatedAt", `"2026-11-30T09:00:00Z"`, "3 hours ago"},
		{"nextRun", `"2026-12-02T12:00:00Z"`, "in 2 days"},
		{"sizeBytes", `48213`, "47.1 KiB"},
		{"title", `null`, "-"},
		{"agents", `["Planner","Coder"]`, "Planner, Coder"},
		{"files", `[{"a":1},{"a":2}]`, "2 items"},
	} {
		if got, _ := tableCell(decodeValue(tc.key, []byte(tc.raw), true), now); got != tc.want {
			t.Errorf("tableCell(%s=%s) = %q, want %q", tc.key, tc.raw, got, tc.want)
		}
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s     string
		width int
		want  string
	}{
		{"hello", 5, "hello"},
		{"hello world", 6, "hello…"},
		{"日本語テキスト", 7, "日本語…"},
		{"abc", 1, "…"},
	} {
		if got := cut(tc.s, tc.width); got != tc.want || render.StringWidth(got) > tc.width {
			t.Errorf("cut(%q, %d) = %q, want %q", tc.s, tc.width, got, tc.want)
		}
	}
}

func TestCompileJQ(t *testing.T) {
	_, err := compileJQ(".a | )")
	if err == nil || cmdutil.CodeOf(err) != cmdutil.ExitUsage {
		t.Fatalf("want a usage error, got %v", err)
	}
	want := "    .a | )\n         ^"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("no caret under the token:\n%s\nwant:\n%s", err, want)
	}
	if _, err := compileJQ("nosuchfunc(1)"); err == nil || cmdutil.CodeOf(err) != cmdutil.ExitUsage {
		t.Errorf("undefined function: want a usage error, got %v", err)
	}
	j, err := compileJQ(".n, .big")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := j.run([]byte(`{"n":3,"big":123456789012345678901234567890}`), func(b []byte) error {
		got = append(got, string(b))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "3 123456789012345678901234567890" {
		t.Errorf("jq outputs %q", got)
	}
}

func TestGuess(t *testing.T) {
	for _, tc := range []struct {
		keys string
		want string
	}{
		{"sessionId task workingDirectory configPath startedAt lastUpdatedAt isComplete turnCount", "sessions"},
		{"sessionId task workingDirectory configPath startedAt lastUpdatedAt isComplete messages", "session"},
		{"template model endpoint configPath agentFiles", "init"},
		{"id current extra", "models"},
		{"whatever", ""},
	} {
		r := guess(strings.Fields(tc.keys))
		got := ""
		if r != nil {
			got = r.name
		}
		if got != tc.want {
			t.Errorf("guess(%s) = %q, want %q", tc.keys, got, tc.want)
		}
	}
}

// FuzzPrinter feeds any item to every format: nothing panics, jsonl prints the item's bytes
// unchanged, and TSV rows never hold a raw tab or newline inside a cell.
func FuzzPrinter(f *testing.F) {
	for _, s := range []string{`{"sessionId":"a","task":"x\ty\nz","turnCount":3}`, `{}`, `[1,2]`, `"s"`, `null`,
		`{"a":{"b":[1,{"c":null}]},"startedAt":"2026-11-30T09:12:44Z"}`, `{"a":"\u001b[2J\u0000"}`, `{"a":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		for _, format := range []string{"jsonl", "json", "tsv", "table"} {
			var out bytes.Buffer
			p := &printer{format: format, w: &out, width: 40, now: time.Now()}
			if err := p.add(&record{raw: raw}); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			if err := p.finish(); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			switch format {
			case "jsonl":
				if !bytes.Equal(out.Bytes(), append(append([]byte{}, raw...), '\n')) {
					t.Fatalf("jsonl changed the item: %q", out.Bytes())
				}
			case "tsv":
				lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
				if len(lines) != 2 || strings.Count(lines[0], "\t") != strings.Count(lines[1], "\t") {
					t.Fatalf("tsv: %q", out.String())
				}
			case "json":
				if !json.Valid(out.Bytes()) {
					t.Fatalf("json: invalid output %q", out.Bytes())
				}
			}
		}
	})
}

// TestTerminal runs fr-ls on a real terminal: a table by default, in colour, fitted to the
// terminal's width.
func TestTerminal(t *testing.T) {
	text := onTerminal(t, 70, true, "sessions", "--all")
	t.Logf("%d bytes from the terminal", len(text))
	if !strings.Contains(text, "\x1b[1mID") {
		t.Errorf("no bold table header:\n%s", text)
	}
	lines := strings.Split(strings.TrimSpace(stripANSI(text)), "\n")
	if len(lines) != 13 {
		t.Errorf("%d lines, want header + 12 sessions:\n%s", len(lines), text)
	}
	for _, l := range lines {
		if w := render.StringWidth(l); w > 70 {
			t.Errorf("line of %d columns on a 70-column terminal: %q", w, l)
		}
	}
}

// TestClosedStdout: a reader that goes away (| head -1) ends fr-ls quietly with status 0.
func TestClosedStdout(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asFuseraft, "1")
	t.Setenv("FRSIM_ITEMS", "200000")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	var errb bytes.Buffer
	start := time.Now()
	code := Run(context.Background(), cmdutil.Streams{In: strings.NewReader(""), Out: w, Err: &errb,
		Getenv: func(string) string { return "" }}, []string{"fr-ls", "--fuseraft", self, "sessions"})
	if code != 0 || errb.Len() != 0 {
		t.Errorf("exit %d, stderr %q; want a quiet 0", code, errb.String())
	}
	if d := time.Since(start); d > testkit.Bound(20*time.Second) {
		t.Errorf("took %v to notice the closed stdout", d)
	}
}

// FuzzSplitObject: the quick field splitter finds the same keys and values as encoding/json.
func FuzzSplitObject(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":"x\"}","c":[1,{"d":"]"}],"e":null}`, ` { "\u0061" : true } `, `{}`, `[1]`,
		`{"k":"caf\u00E9","n":-1.5e3,"o":{"p":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		got, ok := splitObject(raw)
		d := json.NewDecoder(bytes.NewReader(raw))
		tok, _ := d.Token()
		if tok != json.Delim('{') {
			if ok {
				t.Fatalf("%q: split a non-object", raw)
			}
			return
		}
		if !ok {
			t.Fatalf("%q: object not split", raw)
		}
		n := 0
		for i := 0; d.More(); i++ {
			n++
			k, _ := d.Token()
			var v json.RawMessage
			if err := d.Decode(&v); err != nil {
				t.Fatal(err)
			}
			if i >= len(got) || got[i].key != k.(string) || string(got[i].raw) != string(v) {
				t.Fatalf("%q: field %d: got %+v, want %q=%s", raw, i, got, k, v)
			}
		}
		if n != len(got) {
			t.Fatalf("%q: %d fields split, %d decoded", raw, len(got), n)
		}
	})
}
