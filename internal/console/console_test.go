package console

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/testkit/screentest"
	"github.com/fuseraft/fr/pkg/wire"
)

func TestQuestionAnswer(t *testing.T) {
	branches := &wire.Question{Question: "Which branch?", Options: []string{"main", "dev"}}
	open := &wire.Question{Question: "Which branch?", Options: []string{"main", "dev"}, AllowOther: true}
	free := &wire.Question{Question: "Name?"}
	cases := []struct {
		q      *wire.Question
		in     string
		want   string // "<skip>" for nil
		wantOK bool
	}{
		{branches, "1", "main", true},
		{branches, " 2 ", "dev", true},
		{branches, "dev", "dev", true},
		{branches, "DEV", "dev", true},
		{branches, "", "<skip>", true},
		{branches, "   ", "<skip>", true},
		{branches, "3", "", false},
		{branches, "0", "", false},
		{branches, "-1", "", false},
		{branches, "release", "", false},
		{open, "release/1.2", "release/1.2", true},
		{open, "2", "dev", true},
		{open, "3", "3", true},
		{open, "", "<skip>", true},
		{free, "Ada", "Ada", true},
		{free, "1", "1", true},
		{free, "", "<skip>", true},
	}
	for _, tc := range cases {
		got, ok := questionAnswer(tc.q, tc.in)
		if ok != tc.wantOK {
			t.Errorf("questionAnswer(%v, %q) ok = %v, want %v", tc.q.Options, tc.in, ok, tc.wantOK)
			continue
		}
		if !ok {
			continue
		}
		s := "<skip>"
		if got != nil {
			s = *got
		}
		if s != tc.want {
			t.Errorf("questionAnswer(%v, %q) = %q, want %q", tc.q.Options, tc.in, s, tc.want)
		}
	}
}

func TestQuestionPrompt(t *testing.T) {
	cases := []struct {
		q    wire.Question
		want string
	}{
		{wire.Question{Options: []string{"a", "b", "c"}}, "answer 1-3 (empty skips): "},
		{wire.Question{Options: []string{"a", "b"}, AllowOther: true}, "answer 1-2 or your own (empty skips): "},
		{wire.Question{Options: []string{"a"}}, "answer 1 (empty skips): "},
		{wire.Question{AllowOther: true}, "answer (empty skips): "},
		{wire.Question{}, "answer (empty skips): "},
	}
	for _, tc := range cases {
		if got := questionPrompt(&tc.q); got != tc.want {
			t.Errorf("questionPrompt(%+v) = %q, want %q", tc.q, got, tc.want)
		}
	}
}

// feedAll feeds the chunks to a console and returns the lines finished and whether Ctrl-D
// ended the input.
func feedAll(c *Console, chunks ...string) (lines []string, eof bool) {
	for _, ch := range chunks {
		ls, e := c.Feed([]byte(ch))
		for _, l := range ls {
			lines = append(lines, l.Text)
		}
		if e {
			return lines, true
		}
	}
	return lines, false
}

func TestConsoleEditing(t *testing.T) {
	cases := []struct {
		name   string
		chunks []string
		want   []string
		eof    bool
	}{
		{"plain", []string{"run the tests\r"}, []string{"run the tests"}, false},
		{"newline ends a line too", []string{"a\nb\n"}, []string{"a", "b"}, false},
		{"crlf is one enter", []string{"a\r\nb\r\n"}, []string{"a", "b"}, false},
		{"crlf split across reads", []string{"a\r", "\nb\r"}, []string{"a", "b"}, false},
		{"backspace", []string{"abc\x7fd\r"}, []string{"abd"}, false},
		{"ctrl-h", []string{"abc\x08\x08x\r"}, []string{"ax"}, false},
		{"home inserts at the start", []string{"hello\x01X\r"}, []string{"Xhello"}, false},
		{"arrows", []string{"abc\x1b[D\x1b[DZ\r"}, []string{"aZbc"}, false},
		{"ss3 arrows", []string{"abc\x1bOD\x1bODZ\x1bOC!\r"}, []string{"aZb!c"}, false},
		{"home and delete", []string{"abc\x1b[H\x1b[3~\r"}, []string{"bc"}, false},
		{"end", []string{"abc\x01\x05d\r"}, []string{"abcd"}, false},
		{"ctrl-u kills to the start", []string{"abc def\x1b[D\x1b[D\x15\r"}, []string{"ef"}, false},
		{"ctrl-k kills to the end", []string{"abc def\x01\x1b[C\x0b\r"}, []string{"a"}, false},
		{"ctrl-w kills a word", []string{"one two  \x17\r"}, []string{"one "}, false},
		{"escape sequence split across reads", []string{"ab\x1b", "[D", "X\r"}, []string{"aXb"}, false},
		{"utf-8 split across reads", []string{"caf\xc3", "\xa9\r"}, []string{"café"}, false},
		{"wide runes", []string{"日本\x7f語\r"}, []string{"日語"}, false},
		{"tab is a space", []string{"a\tb\r"}, []string{"a b"}, false},
		{"other control keys are ignored", []string{"a\x07\x00b\x1b[5~c\r"}, []string{"abc"}, false},
		{"ctrl-d on an empty line ends input", []string{"\x04"}, nil, true},
		{"ctrl-d after a line", []string{"x\r\x04"}, []string{"x"}, true},
		{"ctrl-d in a line deletes", []string{"abc\x01\x04\r"}, []string{"bc"}, false},
		{"history", []string{"first\r", "second\r", "\x1b[A\x1b[A\r"}, []string{"first", "second", "first"}, false},
		{"history down returns to the draft", []string{"first\r", "dra\x1b[A\x1b[Bft\r"}, []string{"first", "draft"}, false},
		{"empty line", []string{"\r"}, []string{""}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			c := New(&out, 80, true)
			c.SetPrompt("› ", 2, 0)
			got, eof := feedAll(c, tc.chunks...)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || eof != tc.eof {
				t.Errorf("lines %q eof %v, want %q eof %v", got, eof, tc.want, tc.eof)
			}
		})
	}
}

func TestConsoleLongLineScrolls(t *testing.T) {
	var out bytes.Buffer
	c := New(&out, 20, true)
	c.SetPrompt("› ", 2, 0)
	long := strings.Repeat("abcdefghij", 5)
	feedAll(c, long)
	out.Reset()
	c.Redraw()
	// What is drawn fits the width: the end of the line, where the cursor is.
	drawn := ansiSeq.ReplaceAllString(out.String(), "")
	drawn = strings.ReplaceAll(drawn, "\r", "")
	if render.StringWidth(drawn) > 19 || !strings.HasPrefix(drawn, "› ") || !strings.HasSuffix(drawn, "hij") {
		t.Errorf("drawn %q at width 20", drawn)
	}
	if got, _ := feedAll(c, "\r"); len(got) != 1 || got[0] != long {
		t.Errorf("line %q, want %q", got, long)
	}
}

func TestConsolePromptSetsTheLineAside(t *testing.T) {
	var out bytes.Buffer
	c := New(&out, 80, true)
	c.SetPrompt("› ", 2, 0)
	feedAll(c, "half a ta")
	if aside := c.SetPrompt("allow? [y/N] ", 13, 1); !aside {
		t.Fatal("the line typed so far was not set aside")
	}
	if s, _ := c.Text(); s != "" {
		t.Fatalf("the answer starts with %q", s)
	}
	lines, _ := c.Feed([]byte("y\r"))
	if len(lines) != 1 || lines[0] != (Line{Text: "y", PromptID: 1}) {
		t.Fatalf("lines %+v", lines)
	}
	// A second prompt right after: its own answer.
	c.SetPrompt("allow? [y/N] ", 13, 2)
	lines, _ = c.Feed([]byte("\r"))
	if len(lines) != 1 || lines[0] != (Line{Text: "", PromptID: 2}) {
		t.Fatalf("lines %+v", lines)
	}
	c.SetPrompt("› ", 2, 0)
	if s, pos := c.Text(); s != "half a ta" || pos != len([]rune(s)) {
		t.Fatalf("after the answers the line is %q (cursor %d), want the draft back", s, pos)
	}
	lines, _ = c.Feed([]byte("sk\r"))
	if len(lines) != 1 || lines[0] != (Line{Text: "half a task"}) {
		t.Fatalf("lines %+v", lines)
	}
	// Answers are not kept in the history.
	if len(c.hist) != 1 || c.hist[0] != "half a task" {
		t.Errorf("history %q", c.hist)
	}
}

func TestConsoleShowsAnOpenLineAboveTheInputLine(t *testing.T) {
	screen := screentest.NewScreen(40, 10)
	screen.OutputCR = true
	c := New(screen, 40, true)
	c.SetPrompt("› ", 2, 0)
	c.Settle()
	feedAll(c, "draft")
	step := func(what, want string) {
		t.Helper()
		if got := screen.Text(false); got != want {
			t.Errorf("%s: the screen is\n%s\nwant\n%s", what, got, want)
		}
	}
	c.Write([]byte("\x1b[1mstreamed\x1b[0m"))
	step("an open line", "streamed\n› draft\n")
	c.Write([]byte(" reply\nnext"))
	step("the line ended", "streamed reply\nnext\n› draft\n")
	c.SetStatus("daemon unreachable")
	step("with a status", "streamed reply\nnext\ndaemon unreachable\n› draft\n")
	c.Write([]byte(" one\n"))
	step("the next line ended", "streamed reply\nnext one\ndaemon unreachable\n› draft\n")
	c.SetStatus("")
	// An open line longer than maxOpenRows rows shows once it ends.
	c.Write([]byte(strings.Repeat("x", 40*maxOpenRows+1)))
	step("a long open line", "streamed reply\nnext one\n› draft\n")
	c.Write([]byte("\n"))
	step("the long line ended", "streamed reply\nnext one\n"+strings.Repeat(strings.Repeat("x", 40)+"\n", maxOpenRows)+"x\n› draft\n")
	c.Write([]byte("last"))
	c.Close()
	step("closed", "streamed reply\nnext one\n"+strings.Repeat(strings.Repeat("x", 40)+"\n", maxOpenRows)+"x\nlast\n")
}

// Lines finished while lines are held stay off the screen, the input line still edited, and
// show after the output written before ReleaseLines, in the order typed.
func TestConsoleHoldLines(t *testing.T) {
	screen := screentest.NewScreen(40, 10)
	screen.OutputCR = true
	c := New(screen, 40, true)
	c.SetPrompt("› ", 2, 0)
	c.Settle()
	c.HoldLines()
	lines, _ := c.Feed([]byte("one\rtwo\rdra"))
	if len(lines) != 2 || lines[0].Text != "one" || lines[1].Text != "two" {
		t.Fatalf("lines %v", lines)
	}
	step := func(what, want string) {
		t.Helper()
		if got := screen.Text(false); got != want {
			t.Errorf("%s: the screen is\n%s\nwant\n%s", what, got, want)
		}
	}
	step("held", "› dra\n")
	c.Write([]byte("header\n"))
	step("output", "header\n› dra\n")
	c.ReleaseLines()
	step("released", "header\n› one\n› two\n› dra\n")
	c.Feed([]byte("ft\r"))
	step("after", "header\n› one\n› two\n› draft\n›\n")
}

var ansiSeq = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// FuzzConsoleFeed feeds a terminal's bytes in two reads split anywhere: the lines typed are
// the same as in one read, hold no control characters, and the cursor stays in the line.
func FuzzConsoleFeed(f *testing.F) {
	for _, s := range []string{"run the tests\r", "a\r\nb\n", "ab\x1b[D\x1b[3~c\r", "caf\xc3\xa9\r", "\x1b[200~paste\x1b[201~\r",
		"x\x04", "\x04", "one two\x17\x15\x0b\r", "\x1bOA\x1b[1;5D\x1bb\x1bf\r", "\x1b[999999999999999999999999999~\r", "\xff\xfe\r"} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, at uint8) {
		split := int(at) % (len(b) + 1)
		whole := New(io.Discard, 40, true)
		parts := New(io.Discard, 40, true)
		l1, e1 := feedAll(whole, string(b))
		l2, e2 := feedAll(parts, string(b[:split]), string(b[split:]))
		if e1 != e2 || strings.Join(l1, "\x00") != strings.Join(l2, "\x00") {
			t.Fatalf("split at %d: %q %v, whole: %q %v", split, l2, e2, l1, e1)
		}
		for _, l := range l1 {
			for _, r := range l {
				if unicode.IsControl(r) {
					t.Fatalf("line %q holds a control character", l)
				}
			}
		}
		if s, pos := whole.Text(); pos < 0 || pos > len([]rune(s)) {
			t.Fatalf("cursor %d in %q", pos, s)
		}
	})
}

func FuzzQuestionAnswer(f *testing.F) {
	f.Add("2", "main\ndev", false)
	f.Add("DEV", "main\ndev", false)
	f.Add("other", "main\ndev", true)
	f.Add("", "", false)
	f.Fuzz(func(t *testing.T, in, opts string, other bool) {
		q := &wire.Question{AllowOther: other}
		if opts != "" {
			q.Options = strings.Split(opts, "\n")
		}
		ans, ok := questionAnswer(q, in)
		if !ok {
			if len(q.Options) == 0 || other {
				t.Fatalf("%q refused though any answer goes", in)
			}
			return
		}
		if ans == nil {
			if strings.TrimSpace(in) != "" {
				t.Fatalf("%q read as a skip", in)
			}
			return
		}
		if slices.Contains(q.Options, *ans) {
			return
		}
		if (len(q.Options) > 0 && !other) || *ans != strings.TrimSpace(in) {
			t.Fatalf("%q read as %q, options %q", in, *ans, q.Options)
		}
	})
}

func TestCookedLines(t *testing.T) {
	var screen bytes.Buffer
	con := New(&screen, 80, false)
	con.SetPrompt("allow? [y/N] ", 13, 3)
	term := &Terminal{Console: con, in: strings.NewReader("y\r\nrun it\nlast"), fd: -1}
	var got []string
	term.Read(context.Background(), func(l Line, eof bool) bool {
		if eof {
			got = append(got, "EOF")
		} else {
			got = append(got, fmt.Sprintf("%s@%d", l.Text, l.PromptID))
		}
		return true
	})
	if want := "y@3|run it@3|last@3|EOF"; strings.Join(got, "|") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestConsoleStderrKeepsTheInputLine(t *testing.T) {
	var out, errOut bytes.Buffer
	c := New(&out, 80, true)
	c.SetPrompt("› ", 2, 0)
	feedAll(c, "draft")
	out.Reset()
	w := c.Stderr(&errOut)
	fmt.Fprintf(w, "fr-attach: reconnecting to d.sock in 100ms (attempt 1)\n")
	if errOut.String() != "fr-attach: reconnecting to d.sock in 100ms (attempt 1)\n" {
		t.Errorf("stderr got %q", errOut.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "\r\x1b[K") || !strings.Contains(got, "› draft") {
		t.Errorf("the terminal got %q: want the input line cleared, then drawn again", got)
	}
}

func TestConsoleLetsAVeryLongOpenLineOut(t *testing.T) {
	var out bytes.Buffer
	c := New(&out, 80, true)
	c.Write(bytes.Repeat([]byte("x"), maxHeld-1))
	if out.Len() != 0 {
		t.Fatal("written before the bound")
	}
	c.Write([]byte("xx"))
	if !strings.Contains(out.String(), strings.Repeat("x", maxHeld+1)+"\n") {
		t.Errorf("the open line was not let out at the bound (%d bytes written)", out.Len())
	}
}

// With no pager and no terminal file to run one on, the page is printed above the input
// line, made safe for the terminal.
func TestPagePrintsSafely(t *testing.T) {
	var out bytes.Buffer
	term := &Terminal{Console: New(&out, 80, true), in: strings.NewReader(""), out: &out, fd: -1,
		getenv: func(string) string { return "" }}
	term.SetPrompt("› ", 2, 0)
	term.Settle()
	out.Reset()
	term.Write([]byte("held while paging?\n"))
	before := out.Len()
	term.Page("+evil \x1b]0;title\x07\x1b[2Jline\n")
	got := out.String()[before:]
	if strings.Contains(got, "\x1b]") || strings.Contains(got, "\x1b[2J") || !strings.Contains(got, "+evil ") {
		t.Errorf("the page was written as %q", got)
	}
	if !strings.HasSuffix(strings.ReplaceAll(ansiSeq.ReplaceAllString(got, ""), "\r", ""), "› ") {
		t.Errorf("the input line is not drawn again after the page: %q", got)
	}
}

// d at a prompt that is not a file write says so and asks again.
func TestAskerDiffOnlyForFileWrites(t *testing.T) {
	c := New(io.Discard, 80, true)
	a := NewAsker(c, false)
	ev, _ := wire.ParseLine([]byte(`{"type":"approval_request","kind":"shell_command","command":"make"}`)).Event()
	a.Observe(ev)
	a.Refresh("› ")
	_, id := c.Prompt()
	if c.pageFor(id) != nil {
		t.Error("a shell command has a page")
	}
	r := a.Read(Line{Text: "d", PromptID: id})
	if r.Answer != nil || !strings.Contains(r.Note, "not one") || a.Waiting() != 1 {
		t.Errorf("d at a shell command: %+v, %d waiting", r, a.Waiting())
	}
	ev, _ = wire.ParseLine([]byte(`{"type":"approval_request","kind":"file_write","path":"a","oldContent":"x\n","newContent":"y\n"}`)).Event()
	a.Read(Line{Text: "y", PromptID: id})
	a.Observe(ev)
	a.Refresh("› ")
	_, id = c.Prompt()
	page := c.pageFor(id)
	if page == nil || !strings.Contains(page(), "+y") {
		t.Error("a file write has no page of its diff")
	}
}

// What an approval asks about is said again above the input line where the prompt printed
// more than a few rows, and only there.
func TestSubject(t *testing.T) {
	long := strings.Repeat("echo word && ", 80)
	for _, c := range []struct {
		event, want string
	}{
		{`{"type":"approval_request","kind":"shell_command","command":"make"}`, ""},
		{`{"type":"approval_request","kind":"shell_command","command":"cat <<EOF\nx\nEOF"}`, "approval: shell: cat <<EOF x EOF"},
		{`{"type":"approval_request","kind":"shell_command","command":"` + long + `"}`, "approval: shell: " + strings.TrimSpace(long)},
		{`{"type":"approval_request","kind":"file_write","path":"a.txt","oldContent":"","newContent":"x\n"}`, "approval: write: a.txt"},
		{`{"type":"approval_request","kind":"tool_action","plugin":"fs","action":"read"}`, ""},
		{`{"type":"approval_request","kind":"browser","url":"x"}`, `approval: unknown kind "browser"`},
		{`{"type":"approval_request","kind":"file_write"}`, "approval: a malformed request (deny it)"},
		{`{"type":"approval_request","kind":"shell_command","command":"ls\u001b[2J"}`, ""},
		{`{"type":"approval_request","kind":"file_write","path":"a\u001b[2J","oldContent":"","newContent":"x\n"}`, "approval: write: a␛[2J"},
	} {
		ev, _ := wire.ParseLine([]byte(c.event)).Event()
		req, err := wire.DecodeApprovalRequest(ev.Raw)
		var raw []byte
		if err != nil {
			req, raw = nil, ev.Raw
		}
		if got := Subject(req, raw, 60); got != c.want {
			t.Errorf("%s: got %q, want %q", c.event, got, c.want)
		}
	}
}
