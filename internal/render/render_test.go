package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/golden"
	"github.com/fuseraft/fr/internal/testkit/tty"
	"github.com/fuseraft/fr/pkg/wire"
)

// renderStream renders every event line of a recorded stream, as a command would.
func renderStream(t *testing.T, path string, opts Options) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	r := New(&out, opts)
	rd := wire.NewReader(f, wire.ReaderOptions{})
	for {
		l, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev, ok := l.Event(); ok {
			if err := r.Event(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// offTerminal is how a command renders to a pipe or a file with $COLUMNS set to columns.
func offTerminal(columns int, color bool) Options {
	return OutputOptions(tty.Terminal(cmdutil.Streams{Getenv: testkit.Env("COLUMNS", strconv.Itoa(columns))}, 0), color)
}

func fixedClock() time.Time { return time.Date(2026, 11, 30, 20, 15, 4, 0, time.UTC) }

func TestGolden(t *testing.T) {
	cases := []struct {
		golden string
		opts   Options
	}{
		{"all-events.w60.golden", offTerminal(60, false)},
		{"all-events.w120.golden", offTerminal(120, false)},
		{"all-events.w60.color.golden", offTerminal(60, true)},
		{"all-events.w120.color.golden", offTerminal(120, true)},
		{"all-events.w80.timestamps.golden", Options{Timestamps: true, Now: fixedClock}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			got := renderStream(t, filepath.Join("testdata", "all-events.jsonl"), c.opts)
			golden.Check(t, filepath.Join("testdata", c.golden), got)
		})
	}
}

// The golden output honours the width: no line is wider than asked, escape sequences aside.
func TestGoldenWidths(t *testing.T) {
	for _, width := range []int{60, 120} {
		out := renderStream(t, filepath.Join("testdata", "all-events.jsonl"), offTerminal(width, false))
		for i, l := range strings.Split(out, "\n") {
			if w := StringWidth(l); w > width && !isStreamedLine(l) {
				t.Errorf("width %d: line %d is %d columns: %q", width, i+1, w, l)
			}
		}
		if strings.ContainsRune(out, 0x1b) {
			t.Errorf("width %d: escape character in uncoloured output", width)
		}
	}
}

// isStreamedLine reports lines of streamed reply text and prose blocks, which wrap naturally
// instead of being cut. The recorded stream keeps those short except for these.
func isStreamedLine(l string) bool {
	return strings.HasPrefix(l, "The bug is on line 4") || strings.HasPrefix(l, "  Coder: Added") ||
		strings.HasPrefix(l, "✗ error:") || strings.HasPrefix(l, "⚠ warning:") || strings.HasPrefix(l, "› fix the")
}

func render(t *testing.T, opts Options, lines ...string) string {
	t.Helper()
	var out bytes.Buffer
	r := New(&out, opts)
	for _, l := range lines {
		pl := wire.ParseLine([]byte(l))
		ev, ok := pl.Event()
		if !ok {
			ev = wire.Event{Raw: []byte(l)}
		}
		if err := r.Event(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestRenderTable(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		lines []string
		want  string
	}{
		{
			name: "tokens join without newlines and are ended before the next event",
			lines: []string{
				`{"type":"token","text":"Hel"}`,
				`{"type":"token","text":"lo, "}`,
				`{"type":"token","text":"world"}`,
				`{"type":"tool_call","id":"1","name":"ls","summary":"."}`,
			},
			want: "Hello, world\n→ ls .\n",
		},
		{
			name:  "a reply ending in a newline gets no extra one",
			lines: []string{`{"type":"token","text":"done\n"}`, `{"type":"cancelled"}`},
			want:  "done\n✗ cancelled\n",
		},
		{
			name:  "Close ends an open reply",
			lines: []string{`{"type":"token","text":"no newline"}`},
			want:  "no newline\n",
		},
		{
			name: "thinking then reply",
			lines: []string{
				`{"type":"thinking","text":"hmm\nok"}`,
				`{"type":"token","text":"Answer"}`,
			},
			want: "┊ hmm\n┊ ok\nAnswer\n",
		},
		{
			name:  "escape sequences in a token are shown, not sent",
			lines: []string{`{"type":"token","text":"\u001b[2J\u001b]52;c;ZXZpbA==\u0007x\r\n"}`},
			want:  "␛[2J␛]52;c;ZXZpbA==␇x\n",
		},
		{
			name:  "escape split over two tokens stays harmless",
			lines: []string{`{"type":"token","text":"a\u001b"}`, `{"type":"token","text":"[31mb"}`},
			want:  "a␛[31mb\n",
		},
		{
			name:  "bidi overrides and C1 controls",
			lines: []string{`{"type":"info","text":"x\u202Eevil\u0085y"}`},
			want:  "ℹ x\uFFFDevil\uFFFDy\n",
		},
		{
			name:  "one-liners are cut with an ellipsis",
			opts:  Options{Width: 20},
			lines: []string{`{"type":"tool_call","id":"1","name":"read_file","summary":"a/very/long/path/to/a/file.go"}`},
			want:  "→ read_file a/very/…\n",
		},
		{
			name:  "wide characters count two columns",
			opts:  Options{Width: 12},
			lines: []string{`{"type":"copy","text":"日本語のテキスト"}`},
			want:  "⧉ to copy: …\n",
		},
		{
			name:  "a line that fits exactly is not cut",
			opts:  Options{Width: 10},
			lines: []string{`{"type":"shell_start","command":"make all"}`},
			want:  "$ make all\n",
		},
		{
			name:  "text under a prompt's bar wraps under it, as the prompt does",
			opts:  Options{Width: 24},
			lines: []string{`{"type":"text","text":"┃ ✗ denied · rule no-network on: curl -s https://x.example/install.sh"}`},
			want:  "┃ ✗ denied · rule\n┃   no-network on: curl\n┃   -s https://x.example\n┃   /install.sh\n",
		},
		{
			name:  "unknown event in the neutral form",
			lines: []string{`{"type":"future_thing","a": [1, 2],  "b":"x"}`},
			want:  "· future_thing {\"type\":\"future_thing\",\"a\":[1,2],\"b\":\"x\"}\n",
		},
		{
			name:  "the neutral form reads .NET escapes as text, control escapes stay escaped",
			opts:  Options{Width: 200},
			lines: []string{`{"type":"x","s":"\u003Cb\u003E \u0022q\u0022 \u002B \u001B \uD83D\uDE00 \uD83D \\u0041"}`},
			want:  "· x {\"type\":\"x\",\"s\":\"<b> \\\"q\\\" + \\u001B 😀 \\uD83D \\\\u0041\"}\n",
		},
		{
			name:  "a field of the wrong type shows the event neutrally",
			opts:  Options{Width: 200},
			lines: []string{`{"type":"file_changed","path":"a.go","sigil":"~","added":"one","removed":1}`},
			want:  "· file_changed {\"type\":\"file_changed\",\"path\":\"a.go\",\"sigil\":\"~\",\"added\":\"one\",\"removed\":1}\n",
		},
		{
			name:  "a token that is not a string",
			lines: []string{`{"type":"token","text":{"x":1}}`},
			want:  "· token {\"type\":\"token\",\"text\":{\"x\":1}}\n",
		},
		{
			name:  "missing fields read as empty",
			lines: []string{`{"type":"tool_result"}`},
			want:  "✗  no output\n",
		},
		{
			name:  "not an object",
			lines: []string{`[1,2]`},
			want:  "· event [1,2]\n",
		},
		{
			name:  "file_changed with counts",
			lines: []string{`{"type":"file_changed","path":"src/a.go","sigil":"~","added":12,"removed":3}`},
			want:  "✎ ~ src/a.go +12 -3\n",
		},
		{
			name:  "queued with its position",
			lines: []string{`{"type":"queued","sessionId":"s1","position":3}`},
			want:  "⋯ queued · 3 ahead · session s1\n",
		},
		{
			name:  "serve result with the last message",
			lines: []string{`{"type":"result","sessionId":"s1","task":"t","succeeded":false,"errorMessage":"boom","lastAgent":"Coder","lastMessage":"gave up"}`},
			want:  "✗ failed “t” · session s1\n  boom\n  Coder: gave up\n",
		},
		{
			name:  "run result with exit code, turns and elapsed time",
			lines: []string{`{"type":"result","sessionId":"r1","task":"t","config":null,"succeeded":true,"errorMessage":null,"exitCode":0,"turns":4,"elapsedSeconds":125.2,"inputTokens":1000,"outputTokens":20}`},
			want:  "✓ run succeeded · exit 0 · 4 turns · 2m05s · 1,000 in / 20 out · session r1\n",
		},
		{
			name:  "message_end without token counts",
			lines: []string{`{"type":"message_end","turnIndex":2,"toolCalls":[]}`},
			want:  "— turn 2\n",
		},
		{
			name:  "unknown approval kind is shown whole and never as approvable",
			opts:  Options{Width: 200},
			lines: []string{`{"type":"approval_request","kind":"teleport","where":"mars"}`},
			want:  "┃ approve? unknown kind “teleport” (deny unless you know it)\n┃ {\"type\":\"approval_request\",\"kind\":\"teleport\",\"where\":\"mars\"}\n",
		},
		{
			name:  "malformed approval",
			opts:  Options{Width: 200},
			lines: []string{`{"type":"approval_request","kind":"shell_command","command":7}`},
			want:  "┃ approve? malformed request (deny it)\n┃ {\"type\":\"approval_request\",\"kind\":\"shell_command\",\"command\":7}\n",
		},
		{
			name:  "status without a model",
			lines: []string{`{"type":"status","turn":3,"context":0.9,"level":"high","modes":[],"input":1,"output":2,"cached":0}`},
			want:  "◦ turn 3 · context 90% high · 1 in · 2 out · 0 cached\n",
		},
		{
			name:  "malformed question stays highlighted",
			opts:  Options{Width: 200},
			lines: []string{`{"type":"question","question":"pick","options":"a,b"}`},
			want:  "┃ question: malformed (skip it)\n┃ {\"type\":\"question\",\"question\":\"pick\",\"options\":\"a,b\"}\n",
		},
		{
			name:  "file_write diff is cut for huge files",
			opts:  Options{DiffLines: 6},
			lines: []string{`{"type":"approval_request","kind":"file_write","plugin":"fs","action":"write","path":"big.txt","oldContent":"","newContent":"` + strings.Repeat(`x\n`, 5000) + `"}`},
			want:  "┃ approve? new file big.txt +5000 -0 via fs.write\n┃ --- /dev/null\n┃ +++ b/big.txt\n┃ @@ -0,0 +1,5000 @@\n┃ +x\n┃ +x\n┃ +x\n┃ … 4,997 more lines\n",
		},
		{
			name:  "timestamps on line events and at the start of a reply",
			opts:  Options{Timestamps: true, Now: fixedClock},
			lines: []string{`{"type":"token","text":"a\nb"}`, `{"type":"compacted"}`},
			want:  "20:15:04 a\n         b\n20:15:04 ⟲ history compacted into a summary\n",
		},
		{
			name:  "colour only when asked",
			opts:  Options{Color: true},
			lines: []string{`{"type":"tool_result","id":"1","name":"x","ok":true,"output":""}`},
			want:  "\x1b[32m✓ \x1b[0m\x1b[1mx\x1b[0m\x1b[2m no output\x1b[0m\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, tt.opts, tt.lines...)
			if got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s\n(%q)", got, tt.want, got)
			}
		})
	}
}

func TestNote(t *testing.T) {
	var out bytes.Buffer
	r := New(&out, Options{Width: 20})
	r.Event(wire.Event{Type: "token", Raw: []byte(`{"type":"token","text":"partial"}`)})
	if err := r.Note("detached from the daemon\x1b[2J"); err != nil {
		t.Fatal(err)
	}
	if want := "partial\n· detached from the…\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

// A stray line is printed whole (not cut to the width), dim where there is colour, made safe,
// after the open streamed text.
func TestAside(t *testing.T) {
	for _, tc := range []struct {
		color bool
		want  string
	}{
		{false, "partial\nLoading plugins... done␛[2J, and more\n"},
		{true, "partial\n\x1b[2mLoading plugins... done␛[2J, and more\x1b[0m\n"},
	} {
		var out bytes.Buffer
		r := New(&out, Options{Width: 20, Color: tc.color})
		r.Event(wire.Event{Type: "token", Raw: []byte(`{"type":"token","text":"partial"}`)})
		if err := r.Aside("Loading plugins... done\x1b[2J, and more"); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != tc.want {
			t.Errorf("color %v: got %q, want %q", tc.color, got, tc.want)
		}
	}
}

// A write error is returned, not swallowed.
func TestWriteError(t *testing.T) {
	r := New(failWriter{}, Options{})
	if err := r.Event(wire.Event{Type: "info", Raw: []byte(`{"type":"info","text":"x"}`)}); err == nil {
		t.Error("no error from a failing writer")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

func TestCut(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello!", 5, "hell…"},
		{"日本語", 6, "日本語"},
		{"日本語", 5, "日本…"},
		{"日本語", 4, "日…"},
		{"x", 0, ""},
	}
	for _, tt := range tests {
		if got := cut(tt.in, tt.width); got != tt.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}

func TestStripSGR(t *testing.T) {
	if got := stripSGR("\x1b[1;31mred\x1b[0m \x1b[2J"); got != "red \x1b[2J" {
		t.Errorf("stripSGR = %q", got)
	}
}

// What is rendered follows the terminal facts of the command's Streams: on a terminal, at its
// width, with a streamed reply wrapped at spaces to fit it; to a pipe or a file, at $COLUMNS
// (else 80), the reply left whole on its line, for grep.
func TestOutputOptions(t *testing.T) {
	reply := strings.Repeat("word ", 30) // 150 columns
	for _, tc := range []struct {
		name  string
		s     cmdutil.Streams
		width int
		wraps bool
	}{
		{"terminal 60", tty.Terminal(cmdutil.Streams{}, 60), 60, true},
		{"terminal 120, COLUMNS ignored", tty.Terminal(cmdutil.Streams{Getenv: testkit.Env("COLUMNS", "40")}, 120), 120, true},
		{"no terminal", tty.Terminal(cmdutil.Streams{}, 0), 80, false},
		{"no terminal, COLUMNS=132", tty.Terminal(cmdutil.Streams{Getenv: testkit.Env("COLUMNS", "132")}, 0), 132, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := OutputOptions(tc.s, false)
			if opts.Width != tc.width || opts.WrapStream != tc.wraps {
				t.Fatalf("Width %d, WrapStream %v; want %d, %v", opts.Width, opts.WrapStream, tc.width, tc.wraps)
			}
			var out bytes.Buffer
			r := New(&out, opts)
			raw, _ := json.Marshal(map[string]string{"type": "token", "text": reply})
			if err := r.Event(wire.Event{Type: "token", Raw: raw}); err != nil {
				t.Fatal(err)
			}
			r.Close()
			longest := 0
			for _, l := range strings.Split(out.String(), "\n") {
				longest = max(longest, StringWidth(stripSGR(l)))
			}
			if fits := longest <= tc.width; fits != tc.wraps {
				t.Errorf("the longest line is %d columns at width %d; want it wrapped: %v\n%s", longest, tc.width, tc.wraps, out.String())
			}
		})
	}
}

func TestWidth(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	if w := Width(&bytes.Buffer{}, env("132")); w != 132 {
		t.Errorf("Width with COLUMNS=132 = %d", w)
	}
	if w := Width(&bytes.Buffer{}, env("junk")); w != 80 {
		t.Errorf("Width with COLUMNS=junk = %d", w)
	}
	if w := Width(&bytes.Buffer{}, nil); w != 80 {
		t.Errorf("Width without env = %d", w)
	}
}

func FuzzEvent(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "all-events.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		f.Add(l, 40, false)
	}
	f.Add([]byte(`{"type":"agent_message","message":7}`), 80, true)
	f.Add([]byte(`{"type":"hello","inFlight":{"position":"x"}}`), 80, true)
	f.Add([]byte(`{"type":"file_changes","changes":[null,{"path":3}]}`), 1, false)
	f.Fuzz(func(t *testing.T, line []byte, width int, color bool) {
		var out bytes.Buffer
		r := New(&out, Options{Width: width % 400, Color: color, Timestamps: width%3 == 0, Now: fixedClock})
		ev := wire.Event{Raw: line}
		if l := wire.ParseLine(line); l.Kind == wire.EventLine {
			ev, _ = l.Event()
		}
		if err := r.Event(ev); err != nil {
			t.Fatal(err)
		}
		if err := r.Event(wire.Event{Type: "token", Raw: line}); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if !color && bytes.IndexByte(out.Bytes(), 0x1b) >= 0 {
			t.Fatalf("escape in uncoloured output: %q", out.String())
		}
	})
}

func BenchmarkTokens(b *testing.B) {
	ev := wire.Event{Type: "token", Raw: []byte(`{"type":"token","text":"Hello, world \u2014 a chunk of a reply "}`)}
	r := New(io.Discard, Options{Color: true})
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Event(ev); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToolResult100K(b *testing.B) {
	raw := []byte(`{"type":"tool_result","id":"1","name":"read_file","ok":true,"output":"` + strings.Repeat(`line of output\n`, 6700) + `"}`)
	ev := wire.Event{Type: "tool_result", Raw: raw}
	r := New(io.Discard, Options{Color: true})
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Event(ev); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFileWrite5MB(b *testing.B) {
	var old, new strings.Builder
	for i := range 100_000 {
		line := "some line of a large generated file " + commas(i) + "\n"
		old.WriteString(line)
		if i%1000 == 0 {
			new.WriteString("changed " + line)
		} else {
			new.WriteString(line)
		}
	}
	raw, _ := json.Marshal(map[string]string{"type": "approval_request", "kind": "file_write", "path": "big.txt", "oldContent": old.String(), "newContent": new.String()})
	ev := wire.Event{Type: "approval_request", Raw: raw}
	r := New(io.Discard, Options{Color: true})
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if err := r.Event(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// Prompts are shown whole at any width: goldens at 20, 60 and 120 columns, with and without
// colour, with DiffLines small enough that the write's diff is cut with its note.
func TestGoldenPrompts(t *testing.T) {
	for _, c := range []struct {
		golden string
		opts   Options
	}{
		{"prompts.w20.golden", Options{Width: 20, DiffLines: 12}},
		{"prompts.w60.golden", Options{Width: 60, DiffLines: 12, DiffMore: "d shows it all"}},
		{"prompts.w120.golden", Options{Width: 120, DiffLines: 12}},
		{"prompts.w60.color.golden", Options{Width: 60, DiffLines: 12, Color: true}},
		{"prompts.w120.color.golden", Options{Width: 120, DiffLines: 12, Color: true, DiffMore: "d shows it all"}},
		{"prompts.w60.timestamps.golden", Options{Width: 60, DiffLines: 12, Timestamps: true, Now: fixedClock}},
	} {
		t.Run(c.golden, func(t *testing.T) {
			got := renderStream(t, filepath.Join("testdata", "prompts.jsonl"), c.opts)
			golden.Check(t, filepath.Join("testdata", c.golden), got)
		})
	}
}

// promptSubjects are what each prompt of testdata/prompts.jsonl asks about.
var promptSubjects = []string{
	"go test ./... && go vet ./... && git add -A && git commit -m 'lexer: keep quoted words together when a quote is escaped' && git push origin HEAD:main --force",
	"curl -s https://x.example/install.sh | sh",
	"curl -fsSL https://downloads.example.com/releases/v1.2.3/installer-linux-amd64-with-a-very-long-name.sh -o /tmp/i.sh",
	"sh /tmp/i.sh --prefix /usr/local --yes",
	"github.create_pull_request_with_reviewers",
	`title: "Fix lexer bounds on quoted words that end a line" base: main head: fix/lexer-bounds reviewers: alice,bob,carol`,
	"internal/some/deeply/nested/package/directory/with/a/long/name/lexer_quoted_words_test.go",
	"PlannerWithAVeryLongAgentName → SecurityReviewerAgent on “HANDOFF TO THE REVIEWER WITH THE FULL CONTEXT”",
	"Which branch should the fix go to? The release branch is frozen until Friday.",
	"main, and cherry-pick it to release/1.2 after the freeze",
}

// At every width from 20 columns up, no line of a prompt is wider than the terminal, nothing
// is cut with "…" but the diff, and every character of what a prompt asks about is on the
// screen, in order, once the wrapped lines are joined.
func TestPromptsWrapWhole(t *testing.T) {
	for width := 20; width <= 130; width++ {
		for _, ts := range []bool{false, true} {
			out := renderStream(t, filepath.Join("testdata", "prompts.jsonl"), Options{Width: width, DiffLines: -1, Timestamps: ts, Now: fixedClock})
			var joined strings.Builder
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if w := StringWidth(l); w > width && !strings.Contains(l, "┃ @@ ") { // a hunk's header is never cut
					t.Errorf("width %d: a line is %d wide: %q", width, w, l)
				}
				_, text, ok := strings.Cut(l, "┃ ")
				if !ok {
					t.Errorf("width %d: a line of a prompt without its bar: %q", width, l)
				}
				diff := false
				for _, p := range []string{"--- ", "+++ ", "@@ ", "+", "… ", " package"} { // the diff
					diff = diff || strings.HasPrefix(text, p)
				}
				if !diff && strings.Contains(text, "…") {
					t.Errorf("width %d: a prompt is cut: %q", width, l)
				}
				joined.WriteString(text)
			}
			all := strings.Join(strings.Fields(joined.String()), "")
			for _, want := range promptSubjects {
				if !strings.Contains(all, strings.Join(strings.Fields(want), "")) {
					t.Errorf("width %d (timestamps %v): %q is not shown whole:\n%s", width, ts, want, out)
				}
			}
		}
	}
}

// Every event type of the protocol has a handler of its own (an unknown type is shown raw).
func TestEveryEventTypeHasAHandler(t *testing.T) {
	for _, typ := range wire.EventTypes() {
		if handlers[typ] == nil {
			t.Errorf("no handler for %q", typ)
		}
	}
}
