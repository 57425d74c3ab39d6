package attach

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/fuseraft/fr/internal/render"
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
func feedAll(c *console, chunks ...string) (lines []string, eof bool) {
	for _, ch := range chunks {
		ls, e := c.feed([]byte(ch))
		for _, l := range ls {
			lines = append(lines, l.text)
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
			c := newConsole(&out, 80, true)
			c.setPrompt("› ", 2, 0)
			got, eof := feedAll(c, tc.chunks...)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || eof != tc.eof {
				t.Errorf("lines %q eof %v, want %q eof %v", got, eof, tc.want, tc.eof)
			}
		})
	}
}

func TestConsoleLongLineScrolls(t *testing.T) {
	var out bytes.Buffer
	c := newConsole(&out, 20, true)
	c.setPrompt("› ", 2, 0)
	long := strings.Repeat("abcdefghij", 5)
	feedAll(c, long)
	out.Reset()
	c.redraw()
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
	c := newConsole(&out, 80, true)
	c.setPrompt("› ", 2, 0)
	feedAll(c, "half a ta")
	if aside := c.setPrompt("allow? [y/N] ", 13, 1); !aside {
		t.Fatal("the line typed so far was not set aside")
	}
	if s, _ := c.text(); s != "" {
		t.Fatalf("the answer starts with %q", s)
	}
	lines, _ := c.feed([]byte("y\r"))
	if len(lines) != 1 || lines[0] != (typedLine{text: "y", promptID: 1}) {
		t.Fatalf("lines %+v", lines)
	}
	// A second prompt right after: its own answer.
	c.setPrompt("allow? [y/N] ", 13, 2)
	lines, _ = c.feed([]byte("\r"))
	if len(lines) != 1 || lines[0] != (typedLine{text: "", promptID: 2}) {
		t.Fatalf("lines %+v", lines)
	}
	c.setPrompt("› ", 2, 0)
	if s, pos := c.text(); s != "half a ta" || pos != len([]rune(s)) {
		t.Fatalf("after the answers the line is %q (cursor %d), want the draft back", s, pos)
	}
	lines, _ = c.feed([]byte("sk\r"))
	if len(lines) != 1 || lines[0] != (typedLine{text: "half a task"}) {
		t.Fatalf("lines %+v", lines)
	}
	// Answers are not kept in the history.
	if len(c.hist) != 1 || c.hist[0] != "half a task" {
		t.Errorf("history %q", c.hist)
	}
}

func TestConsoleHoldsAnOpenLine(t *testing.T) {
	var out bytes.Buffer
	c := newConsole(&out, 80, true)
	c.setPrompt("› ", 2, 0)
	c.settle()
	out.Reset()
	c.Write([]byte("streamed"))
	if out.Len() != 0 {
		t.Fatalf("an open line was written: %q", out.String())
	}
	c.Write([]byte(" reply\nnext"))
	got := out.String()
	if !strings.HasPrefix(got, "\r\x1b[K") || !strings.Contains(got, "streamed reply\n") || strings.Contains(got, "next") ||
		!strings.HasSuffix(strings.ReplaceAll(ansiSeq.ReplaceAllString(got, ""), "\r", ""), "› ") {
		t.Errorf("wrote %q: want the input line cleared, the whole line, the input line again", got)
	}
	out.Reset()
	c.close()
	if got := out.String(); got != "\r\x1b[Knext\n" {
		t.Errorf("close wrote %q", got)
	}
	out.Reset()
	c.Write([]byte("after"))
	if out.String() != "after" {
		t.Errorf("after close: %q", out.String())
	}
}

// testUI is a ui over a gate and a renderer writing to a buffer, as in a session.
func testUI() (*ui, *bytes.Buffer) {
	var screen bytes.Buffer
	con := newConsole(&screen, 80, true)
	a := &attacher{gate: wire.NewGate(wire.Serve)}
	a.out = wire.NewWriter(con)
	a.rend = render.New(a.out, render.Options{Width: 80})
	u := &ui{a: a, con: con}
	a.ui = u
	u.refresh()
	return u, &screen
}

func observe(u *ui, line string) {
	ev, ok := wire.ParseLine([]byte(line)).Event()
	if !ok {
		panic("not an event: " + line)
	}
	u.a.rend.Event(ev)
	u.a.gate.Observe(ev)
	u.event(ev)
	u.a.out.Flush()
}

// sent returns what the gate lets out now.
func sent(u *ui) []string {
	var out []string
	for {
		d, ok := u.a.gate.Next()
		if !ok {
			return out
		}
		if d.Action == wire.Send {
			out = append(out, string(d.Input.Line))
		}
	}
}

func TestUIAnswersOnlyTheirPrompt(t *testing.T) {
	u, screen := testUI()
	observe(u, `{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}`)
	u.line(typedLine{text: "deploy it"})
	if got := sent(u); len(got) != 1 || !strings.Contains(got[0], `"text":"deploy it"`) {
		t.Fatalf("sent %q", got)
	}
	observe(u, `{"type":"queued","sessionId":"s1","position":0}`)
	observe(u, `{"type":"approval_request","kind":"shell_command","command":"make deploy"}`)
	id := u.con.promptID
	if id == 0 {
		t.Fatal("no prompt on the input line")
	}
	// A line typed before the prompt appeared is not its answer: "y" is not sent at all,
	// a task waits.
	u.line(typedLine{text: "y"})
	u.line(typedLine{text: "run the tests"})
	if got := sent(u); len(got) != 0 {
		t.Fatalf("sent %q before the answer", got)
	}
	if !strings.Contains(screen.String(), `"y" was typed before the prompt appeared`) {
		t.Errorf("no note for the early y:\n%s", screen.String())
	}
	u.line(typedLine{text: "yes", promptID: id})
	if got := sent(u); len(got) != 1 || got[0] != `{"type":"approval_response","approved":true}` {
		t.Fatalf("sent %q, want one approval", got)
	}
	if !strings.Contains(screen.String(), "✓ approved") {
		t.Errorf("the answer is not shown:\n%s", screen.String())
	}
	// The same prompt answered twice: the second never goes out.
	u.line(typedLine{text: "y", promptID: id})
	if got := sent(u); len(got) != 0 {
		t.Fatalf("a second answer went out: %q", got)
	}
	if !strings.Contains(screen.String(), "no longer waits") {
		t.Errorf("no note for the stale answer:\n%s", screen.String())
	}
	// The next prompt, denied by an empty line.
	observe(u, `{"type":"approval_request","kind":"file_write","plugin":"fs","action":"write","path":"a.txt","oldContent":"x\n","newContent":"y\n"}`)
	u.line(typedLine{text: "", promptID: u.con.promptID})
	if got := sent(u); len(got) != 1 || got[0] != `{"type":"approval_response","approved":false}` {
		t.Fatalf("sent %q, want one denial", got)
	}
	if !strings.Contains(screen.String(), "-x") || !strings.Contains(screen.String(), "+y") {
		t.Errorf("the file write's diff is not shown:\n%s", screen.String())
	}
	// The result frees the held task.
	observe(u, `{"type":"result","sessionId":"s1","task":"deploy it","succeeded":true,"errorMessage":null,"lastAgent":"D","lastMessage":"ok"}`)
	if got := sent(u); len(got) != 1 || !strings.Contains(got[0], "run the tests") {
		t.Fatalf("sent %q, want the held task", got)
	}
	if u.con.promptID != 0 {
		t.Error("the input line still asks for an answer")
	}
}

func TestUIApprovalAsksAgain(t *testing.T) {
	u, screen := testUI()
	observe(u, `{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}`)
	u.line(typedLine{text: "deploy it"})
	if got := sent(u); len(got) != 1 {
		t.Fatalf("sent %q", got)
	}
	observe(u, `{"type":"approval_request","kind":"shell_command","command":"make deploy"}`)
	id := u.con.promptID
	if id == 0 {
		t.Fatal("no prompt on the input line")
	}
	// A task typed at the prompt by mistake neither answers it nor goes out as a task.
	u.line(typedLine{text: "second task", promptID: id})
	if got := sent(u); len(got) != 0 {
		t.Fatalf("sent %q for a line that is no answer", got)
	}
	if !strings.Contains(screen.String(), `answer y or n (an empty line is no): "second task" was not sent as a task`) {
		t.Errorf("no note:\n%s", screen.String())
	}
	if strings.Contains(screen.String(), "denied") {
		t.Errorf("the approval was taken as denied:\n%s", screen.String())
	}
	if u.con.promptID != id || len(u.prompts) != 1 || !strings.Contains(u.con.prompt, "allow? [y/N]") {
		t.Fatalf("the approval is not asked again: prompt %q (%d), %d waiting", u.con.prompt, u.con.promptID, len(u.prompts))
	}
	u.line(typedLine{text: " Y ", promptID: id})
	if got := sent(u); len(got) != 1 || got[0] != `{"type":"approval_response","approved":true}` {
		t.Fatalf("sent %q, want one approval", got)
	}
	if u.con.promptID != 0 {
		t.Error("the input line still asks for an answer")
	}
	// n and no deny, whatever their case.
	for _, no := range []string{"N", " no "} {
		observe(u, `{"type":"approval_request","kind":"shell_command","command":"make deploy"}`)
		u.line(typedLine{text: no, promptID: u.con.promptID})
		if got := sent(u); len(got) != 1 || got[0] != `{"type":"approval_response","approved":false}` {
			t.Fatalf("sent %q for %q, want one denial", got, no)
		}
	}
}

func TestUIQuestion(t *testing.T) {
	u, screen := testUI()
	observe(u, `{"type":"question","question":"Which branch?","options":["main","dev"],"allowOther":false}`)
	id := u.con.promptID
	if !strings.Contains(u.con.prompt, "answer 1-2 (empty skips)") {
		t.Errorf("prompt %q", u.con.prompt)
	}
	u.line(typedLine{text: "3", promptID: id})
	if got := sent(u); len(got) != 0 {
		t.Fatalf("sent %q for an answer that is no option", got)
	}
	if !strings.Contains(screen.String(), `"3" is not an option: pick 1-2`) {
		t.Errorf("no note:\n%s", screen.String())
	}
	u.line(typedLine{text: "2", promptID: id})
	got := sent(u)
	if len(got) != 1 {
		t.Fatalf("sent %q", got)
	}
	var r struct {
		Type   string  `json:"type"`
		Answer *string `json:"answer"`
	}
	if json.Unmarshal([]byte(got[0]), &r) != nil || r.Type != "question_response" || r.Answer == nil || *r.Answer != "dev" {
		t.Errorf("sent %s, want the answer dev", got[0])
	}
	observe(u, `{"type":"question","question":"Anything else?","options":[],"allowOther":true}`)
	u.line(typedLine{text: "", promptID: u.con.promptID})
	if got := sent(u); len(got) != 1 || got[0] != `{"type":"question_response","answer":null}` {
		t.Errorf("sent %q, want a skip", got)
	}
}

func TestUIBareAnswerWithNoPrompt(t *testing.T) {
	u, screen := testUI()
	observe(u, `{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}`)
	for _, s := range []string{"y", "no", "  ", ""} {
		u.line(typedLine{text: s})
	}
	if got := sent(u); len(got) != 0 {
		t.Fatalf("sent %q", got)
	}
	if !strings.Contains(screen.String(), `no prompt waits for an answer: "y" was not sent`) {
		t.Errorf("no note:\n%s", screen.String())
	}
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
		whole := newConsole(io.Discard, 40, true)
		parts := newConsole(io.Discard, 40, true)
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
		if s, pos := whole.text(); pos < 0 || pos > len([]rune(s)) {
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
	con := newConsole(&screen, 80, false)
	con.setPrompt("allow? [y/N] ", 13, 3)
	ch := make(chan inputMsg, 8)
	readTerminal(context.Background(), strings.NewReader("y\r\nrun it\nlast"), con, ch)
	var got []string
	for len(ch) > 0 {
		m := <-ch
		switch {
		case m.typed != nil:
			got = append(got, fmt.Sprintf("%s@%d", m.typed.text, m.typed.promptID))
		case m.eof:
			got = append(got, "EOF")
		}
	}
	if want := "y@3|run it@3|last@3|EOF"; strings.Join(got, "|") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestDetachMessage(t *testing.T) {
	hello := `{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}`
	cases := []struct {
		name     string
		clientID string
		events   []string
		typed    []string
		want     []string
		not      []string
	}{
		{"idle", "", []string{hello}, nil, []string{"detached"}, []string{"keeps"}},
		{"a task running", "", []string{hello, `{"type":"queued","sessionId":"s-7","position":0}`}, []string{"build it"},
			[]string{"detached; the daemon keeps running task s-7"}, []string{"reattach", "prompt"}},
		{"a prompt waiting on the socket", "",
			[]string{hello, `{"type":"queued","sessionId":"s-7","position":0}`, `{"type":"approval_request","kind":"shell_command","command":"make"}`},
			[]string{"build it"}, []string{"task s-7 and takes its pending prompt as denied"}, []string{"reattach"}},
		{"a prompt waiting over the websocket", "fr-attach-abc",
			[]string{hello, `{"type":"queued","sessionId":"s-7","position":0}`, `{"type":"approval_request","kind":"shell_command","command":"make"}`},
			[]string{"build it"}, []string{"asks its pending prompt again", "reattach with --client-id fr-attach-abc to collect its result"}, nil},
		{"held tasks", "", []string{hello, `{"type":"queued","sessionId":"s-7","position":0}`}, []string{"build it", "test it", "ship it"},
			[]string{"; 2 held tasks were not sent"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := testUI()
			u.a.o.target.clientID = tc.clientID
			for i, ev := range tc.events {
				if i == 1 {
					for _, s := range tc.typed {
						u.line(typedLine{text: s})
					}
					sent(u)
				}
				observe(u, ev)
			}
			msg := u.detachMessage()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(msg, w) {
					t.Errorf("%q says %q", msg, w)
				}
			}
		})
	}
}

func TestConsoleStderrKeepsTheInputLine(t *testing.T) {
	var out, errOut bytes.Buffer
	c := newConsole(&out, 80, true)
	c.setPrompt("› ", 2, 0)
	feedAll(c, "draft")
	out.Reset()
	w := c.stderr(&errOut)
	fmt.Fprintf(w, "fr-attach: reconnecting to d.sock in 100ms (attempt 1)\n")
	if errOut.String() != "fr-attach: reconnecting to d.sock in 100ms (attempt 1)\n" {
		t.Errorf("stderr got %q", errOut.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "\r\x1b[K") || !strings.Contains(got, "› draft") {
		t.Errorf("the terminal got %q: want the input line cleared, then drawn again", got)
	}
}

func TestUIReadOnlyToken(t *testing.T) {
	u, screen := testUI()
	l := connectForTest(t, u.a)
	observe(u, `{"type":"hello","protocolVersion":1,"clientId":"me","readOnly":true,"inFlight":null,"pendingResults":[]}`)
	u.line(typedLine{text: "build it"})
	if err := u.a.pump(); err != nil {
		t.Fatalf("a task typed with a read-only token stops fr-attach: %v", err)
	}
	u.a.out.Flush()
	if len(l.lines) != 0 {
		t.Errorf("sent %q", l.lines)
	}
	for _, want := range []string{"the token is read-only: you can watch, but typed tasks are not sent",
		"not sent: the token is read-only, so the daemon takes no tasks from it"} {
		if !strings.Contains(screen.String(), want) {
			t.Errorf("the terminal does not say %q:\n%s", want, screen.String())
		}
	}
}

func TestConsoleLetsAVeryLongOpenLineOut(t *testing.T) {
	var out bytes.Buffer
	c := newConsole(&out, 80, true)
	c.Write(bytes.Repeat([]byte("x"), maxHeld-1))
	if out.Len() != 0 {
		t.Fatal("written before the bound")
	}
	c.Write([]byte("xx"))
	if !strings.Contains(out.String(), strings.Repeat("x", maxHeld+1)+"\n") {
		t.Errorf("the open line was not let out at the bound (%d bytes written)", out.Len())
	}
}
