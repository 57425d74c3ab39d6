package attach

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/console"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/pkg/wire"
)

// testUI is a ui over a gate and a renderer writing to a buffer, as in a session.
func testUI() (*ui, *bytes.Buffer) {
	var screen bytes.Buffer
	con := console.New(&screen, 80, true)
	a := &attacher{gate: wire.NewGate(wire.Serve)}
	a.out = wire.NewWriter(con)
	a.rend = render.New(a.out, render.Options{Width: 80})
	u := &ui{a: a, con: con, ask: console.NewAsker(con, false)}
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
	u.line(console.Line{Text: "deploy it"})
	if got := sent(u); len(got) != 1 || !strings.Contains(got[0], `"text":"deploy it"`) {
		t.Fatalf("sent %q", got)
	}
	observe(u, `{"type":"queued","sessionId":"s1","position":0}`)
	observe(u, `{"type":"approval_request","kind":"shell_command","command":"make deploy"}`)
	id := promptID(u)
	if id == 0 {
		t.Fatal("no prompt on the input line")
	}
	// A line typed before the prompt appeared is not its answer: "y" is not sent at all,
	// a task waits.
	u.line(console.Line{Text: "y"})
	u.line(console.Line{Text: "run the tests"})
	if got := sent(u); len(got) != 0 {
		t.Fatalf("sent %q before the answer", got)
	}
	if !strings.Contains(screen.String(), `"y" was typed before the prompt appeared`) {
		t.Errorf("no note for the early y:\n%s", screen.String())
	}
	u.line(console.Line{Text: "yes", PromptID: id})
	if got := sent(u); len(got) != 1 || got[0] != `{"type":"approval_response","approved":true}` {
		t.Fatalf("sent %q, want one approval", got)
	}
	if !strings.Contains(screen.String(), "✓ approved") {
		t.Errorf("the answer is not shown:\n%s", screen.String())
	}
	// The same prompt answered twice: the second never goes out.
	u.line(console.Line{Text: "y", PromptID: id})
	if got := sent(u); len(got) != 0 {
		t.Fatalf("a second answer went out: %q", got)
	}
	if !strings.Contains(screen.String(), "no longer waits") {
		t.Errorf("no note for the stale answer:\n%s", screen.String())
	}
	// The next prompt, denied by an empty line.
	observe(u, `{"type":"approval_request","kind":"file_write","plugin":"fs","action":"write","path":"a.txt","oldContent":"x\n","newContent":"y\n"}`)
	u.line(console.Line{Text: "", PromptID: promptID(u)})
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
	if promptID(u) != 0 {
		t.Error("the input line still asks for an answer")
	}
}

func TestUIApprovalAsksAgain(t *testing.T) {
	u, screen := testUI()
	observe(u, `{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}`)
	u.line(console.Line{Text: "deploy it"})
	if got := sent(u); len(got) != 1 {
		t.Fatalf("sent %q", got)
	}
	observe(u, `{"type":"approval_request","kind":"shell_command","command":"make deploy"}`)
	id := promptID(u)
	if id == 0 {
		t.Fatal("no prompt on the input line")
	}
	// A task typed at the prompt by mistake neither answers it nor goes out as a task.
	u.line(console.Line{Text: "second task", PromptID: id})
	if got := sent(u); len(got) != 0 {
		t.Fatalf("sent %q for a line that is no answer", got)
	}
	if !strings.Contains(screen.String(), `answer y or n (an empty line is no): "second task" was not sent as a task`) {
		t.Errorf("no note:\n%s", screen.String())
	}
	if strings.Contains(screen.String(), "denied") {
		t.Errorf("the approval was taken as denied:\n%s", screen.String())
	}
	if promptID(u) != id || u.ask.Waiting() != 1 || !strings.Contains(promptText(u), "allow? [y/N]") {
		t.Fatalf("the approval is not asked again: prompt %q (%d), %d waiting", promptText(u), promptID(u), u.ask.Waiting())
	}
	u.line(console.Line{Text: " Y ", PromptID: id})
	if got := sent(u); len(got) != 1 || got[0] != `{"type":"approval_response","approved":true}` {
		t.Fatalf("sent %q, want one approval", got)
	}
	if promptID(u) != 0 {
		t.Error("the input line still asks for an answer")
	}
	// n and no deny, whatever their case.
	for _, no := range []string{"N", " no "} {
		observe(u, `{"type":"approval_request","kind":"shell_command","command":"make deploy"}`)
		u.line(console.Line{Text: no, PromptID: promptID(u)})
		if got := sent(u); len(got) != 1 || got[0] != `{"type":"approval_response","approved":false}` {
			t.Fatalf("sent %q for %q, want one denial", got, no)
		}
	}
}

func TestUIQuestion(t *testing.T) {
	u, screen := testUI()
	observe(u, `{"type":"question","question":"Which branch?","options":["main","dev"],"allowOther":false}`)
	id := promptID(u)
	if !strings.Contains(promptText(u), "answer 1-2 (empty skips)") {
		t.Errorf("prompt %q", promptText(u))
	}
	u.line(console.Line{Text: "3", PromptID: id})
	if got := sent(u); len(got) != 0 {
		t.Fatalf("sent %q for an answer that is no option", got)
	}
	if !strings.Contains(screen.String(), `"3" is not an option: pick 1-2`) {
		t.Errorf("no note:\n%s", screen.String())
	}
	u.line(console.Line{Text: "2", PromptID: id})
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
	u.line(console.Line{Text: "", PromptID: promptID(u)})
	if got := sent(u); len(got) != 1 || got[0] != `{"type":"question_response","answer":null}` {
		t.Errorf("sent %q, want a skip", got)
	}
}

func TestUIBareAnswerWithNoPrompt(t *testing.T) {
	u, screen := testUI()
	observe(u, `{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}`)
	for _, s := range []string{"y", "no", "  ", ""} {
		u.line(console.Line{Text: s})
	}
	if got := sent(u); len(got) != 0 {
		t.Fatalf("sent %q", got)
	}
	if !strings.Contains(screen.String(), `no prompt waits for an answer: "y" was not sent`) {
		t.Errorf("no note:\n%s", screen.String())
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
						u.line(console.Line{Text: s})
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

func TestUIReadOnlyToken(t *testing.T) {
	u, screen := testUI()
	l := connectForTest(t, u.a)
	observe(u, `{"type":"hello","protocolVersion":1,"clientId":"me","readOnly":true,"inFlight":null,"pendingResults":[]}`)
	u.line(console.Line{Text: "build it"})
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

// promptID is the prompt the input line answers (0: it takes tasks).
func promptID(u *ui) int {
	_, id := u.con.Prompt()
	return id
}

// promptText is the input line's prompt.
func promptText(u *ui) string {
	s, _ := u.con.Prompt()
	return s
}

func TestInterruptedMessage(t *testing.T) {
	cases := []struct {
		name   string
		target target
		tasks  []*ourTask
		want   string
	}{
		{"nothing of ours", target{socket: "/run/d.sock"}, nil, ""},
		{"over the websocket", target{url: "ws://127.0.0.1:8787/attach", clientID: "ci-nightly"}, []*ourTask{{sessionID: "s-7"}},
			"interrupted; the daemon keeps running task s-7; collect its result with: fr-attach --url ws://127.0.0.1:8787/attach --client-id ci-nightly --exit-on-result"},
		{"with a token", target{url: "ws://h:1/attach", clientID: "x", token: "secret"}, []*ourTask{{text: "build it"}},
			`interrupted; the daemon keeps running task "build it"; collect its result with: fr-attach --url ws://h:1/attach --client-id x --exit-on-result (with the same token)`},
		{"over the socket", target{socket: "/tmp/my dir/d.sock"}, []*ourTask{{sessionID: "s-7"}},
			"interrupted; the daemon keeps running task s-7; over the Unix socket only this connection could take its result, so it cannot be collected now; its progress shows in: fr-attach --socket '/tmp/my dir/d.sock' (over --url with a --client-id a result waits to be collected)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &attacher{gate: wire.NewGate(wire.Serve), tasks: tc.tasks}
			a.o.target = tc.target
			if got := a.interruptedMessage(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			if strings.Contains(a.interruptedMessage(), "secret") {
				t.Error("the token is printed")
			}
		})
	}
}
