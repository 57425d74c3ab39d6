package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestProjectSlug(t *testing.T) {
	tests := []struct{ dir, want string }{
		{"/home/scs/github/fuseraft/brewer", "home-scs-github-fuseraft-brewer"},
		{"/Users/Ann/Code/My-App", "users-ann-code-my-app"},
		{`C:\Users\ann\src\app`, "users-ann-src-app"},
		{`c:/work/x`, "work-x"},
		{"//server/share", "server-share"},
		{"/", ""},
	}
	for _, tt := range tests {
		if got := ProjectSlug(tt.dir); got != tt.want {
			t.Errorf("ProjectSlug(%q) = %q, want %q", tt.dir, got, tt.want)
		}
	}
}

func TestSocketPath(t *testing.T) {
	// sha256("home-scs-github-fuseraft-brewer") starts with these 16 hex digits.
	p, err := SocketPath("/home/scs/.fuseraft", "/home/scs/github/fuseraft/brewer")
	if err != nil {
		t.Fatal(err)
	}
	if p != "/home/scs/.fuseraft/run/ebd8b39dfed594e8.sock" {
		t.Errorf("got %s", p)
	}
	long := "/" + strings.Repeat("h", 120)
	p, err = SocketPath(long, "/x")
	var se *SocketPathError
	if !errors.As(err, &se) || se.Path != p || !strings.Contains(err.Error(), "longer than the 107 bytes AF_UNIX allows") {
		t.Errorf("long path: %v", err)
	}
}

func TestHome(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
		err  bool
	}{
		{map[string]string{"HOME": "/home/a"}, "/home/a/.fuseraft", false},
		{map[string]string{"HOME": "/home/a", "FUSERAFT_HOME": "/srv/fr"}, "/srv/fr", false},
		{map[string]string{"HOME": "/home/a", "FUSERAFT_HOME": "   "}, "/home/a/.fuseraft", false},
		{map[string]string{"HOME": "/home/a", "FUSERAFT_HOME": "~/alt"}, "/home/a/alt", false},
		{map[string]string{"HOME": "/home/a", "FUSERAFT_HOME": "~"}, "/home/a", false},
		{map[string]string{"USERPROFILE": "/u"}, "/u/.fuseraft", false},
		{map[string]string{}, "", true},
		{map[string]string{"FUSERAFT_HOME": "~/x"}, "", true},
	}
	for _, tt := range tests {
		got, err := Home(env(tt.env))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("Home(%v) = %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
}

func TestDefaultSocketPath(t *testing.T) {
	home := t.TempDir()
	wd, _ := WorkingDir()
	got, err := DefaultSocketPath(env(map[string]string{"FUSERAFT_HOME": home}))
	want, werr := SocketPath(home, wd)
	if got != want || (err == nil) != (werr == nil) {
		t.Errorf("DefaultSocketPath %q %v, want %q %v", got, err, want, werr)
	}
	if filepath.Dir(got) != filepath.Join(home, "run") {
		t.Errorf("socket not under FUSERAFT_HOME/run: %s", got)
	}
}

func TestValidClientID(t *testing.T) {
	for id, want := range map[string]bool{
		"ci-1": true, "A_b-9": true, strings.Repeat("x", 64): true,
		"": false, strings.Repeat("x", 65): false, "a b": false, "é": false, "a.b": false, "a/b": false,
	} {
		if ValidClientID(id) != want {
			t.Errorf("ValidClientID(%q) != %v", id, want)
		}
	}
}

func TestEncoders(t *testing.T) {
	if string(ApprovalResponse(true)) != `{"type":"approval_response","approved":true}` ||
		string(ApprovalResponse(false)) != `{"type":"approval_response","approved":false}` {
		t.Error("ApprovalResponse")
	}
	a := "b"
	if string(QuestionResponse(&a)) != `{"type":"question_response","answer":"b"}` ||
		string(QuestionResponse(nil)) != `{"type":"question_response","answer":null}` {
		t.Error("QuestionResponse")
	}
	if string(Interrupt()) != `{"type":"interrupt"}` {
		t.Error("Interrupt")
	}
	b, err := UserInput("hi")
	if err != nil || string(b) != `{"type":"user_input","text":"hi"}` {
		t.Errorf("UserInput: %s %v", b, err)
	}
	// Each encoded input is one line and parses back as its own type.
	for _, line := range [][]byte{ApprovalResponse(true), QuestionResponse(nil), Interrupt(), b} {
		if bytes.ContainsAny(line, "\r\n") {
			t.Errorf("%s spans lines", line)
		}
		if in, _ := ParseInput(line); in.Type == "" {
			t.Errorf("%s: no type", line)
		}
	}
	multi, _ := UserInput("line one\nline two")
	if bytes.Contains(multi, []byte("\n")) {
		t.Error("a newline in text must be escaped")
	}
}

var (
	pngBytes  = append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 16)...)
	gifBytes  = []byte("GIF89a......")
	jpegBytes = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00")
	webpBytes = []byte("RIFF\x00\x00\x00\x00WEBPVP8 ")
)

func TestNewImage(t *testing.T) {
	for _, tt := range []struct {
		data []byte
		mime string
	}{{pngBytes, "image/png"}, {gifBytes, "image/gif"}, {jpegBytes, "image/jpeg"}, {webpBytes, "image/webp"}} {
		img, err := NewImage("x", tt.data)
		if err != nil {
			t.Errorf("%s: %v", tt.mime, err)
			continue
		}
		if !strings.HasPrefix(img.Data, "data:"+tt.mime+";base64,") {
			t.Errorf("%s: data URL %.40s", tt.mime, img.Data)
		}
	}
	if _, err := NewImage("notes.txt", []byte("hello")); err == nil || !strings.Contains(err.Error(), "only PNG, JPEG, GIF and WebP") {
		t.Errorf("text file: %v", err)
	}
	big := append(append([]byte{}, pngBytes...), make([]byte, MaxImageSize)...)
	if _, err := NewImage("big.png", big); err == nil || !strings.Contains(err.Error(), "the limit is 20 MB") {
		t.Errorf("big image: %v", err)
	}
	img, _ := NewImage("a.png", pngBytes)
	imgs := make([]Image, MaxImages+1)
	for i := range imgs {
		imgs[i] = img
	}
	if _, err := UserInput("x", imgs...); err == nil {
		t.Error("9 images accepted")
	}
	b, err := UserInput("look", imgs[:MaxImages]...)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Images []Image `json:"images"`
	}
	if json.Unmarshal(b, &back) != nil || len(back.Images) != MaxImages || back.Images[0].Name != "a.png" {
		t.Errorf("images did not round-trip: %.80s", b)
	}
}

func TestDecodeApprovalRequest(t *testing.T) {
	tests := []struct {
		name, raw, summary string
		malformed          bool
	}{
		{"shell", `{"type":"approval_request","kind":"shell_command","command":"go test ./..."}`, "shell: go test ./...", false},
		{"tool", `{"type":"approval_request","kind":"tool_action","plugin":"git","action":"push","detail":"origin main"}`, "tool: git.push origin main", false},
		{"tool without detail", `{"type":"approval_request","kind":"tool_action","plugin":"git","action":"push"}`, "tool: git.push", false},
		{"write", `{"type":"approval_request","kind":"file_write","plugin":"fs","action":"write","path":"a.go","oldContent":"","newContent":"package a\n"}`, "write: a.go", false},
		{"route", `{"type":"approval_request","kind":"route_approval","keyword":"DEPLOY","sourceAgent":"Dev","targetAgent":"Ops"}`, "route: Dev -> Ops (DEPLOY)", false},
		{"route without keyword", `{"type":"approval_request","kind":"route_approval","keyword":null,"sourceAgent":"Dev","targetAgent":"Ops"}`, "route: Dev -> Ops", false},
		{"unknown kind is not malformed", `{"type":"approval_request","kind":"network_access","host":"x"}`, `unknown kind "network_access"`, false},
		{"no kind", `{"type":"approval_request","command":"rm -rf /"}`, "", true},
		{"kind not a string", `{"type":"approval_request","kind":1}`, "", true},
		{"shell without command", `{"type":"approval_request","kind":"shell_command"}`, "", true},
		{"shell with null command", `{"type":"approval_request","kind":"shell_command","command":null}`, "", true},
		{"command not a string", `{"type":"approval_request","kind":"shell_command","command":["rm"]}`, "", true},
		{"write with an empty path", `{"type":"approval_request","kind":"file_write","path":"","newContent":"x"}`, "", true},
		{"empty command", `{"type":"approval_request","kind":"shell_command","command":""}`, "", true},
		{"empty kind", `{"type":"approval_request","kind":""}`, "", true},
		{"write of an empty file is fine", `{"type":"approval_request","kind":"file_write","path":"a","newContent":""}`, "write: a", false},
		{"write without path", `{"type":"approval_request","kind":"file_write","newContent":"x"}`, "", true},
		{"route without target", `{"type":"approval_request","kind":"route_approval","sourceAgent":"a"}`, "", true},
		{"not JSON", `{"type":`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeApprovalRequest([]byte(tt.raw))
			if tt.malformed {
				if !errors.Is(err, ErrMalformedPrompt) {
					t.Fatalf("err %v, want ErrMalformedPrompt", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Summary() != tt.summary {
				t.Errorf("summary %q, want %q", r.Summary(), tt.summary)
			}
			if string(r.Raw) != tt.raw {
				t.Error("raw not kept")
			}
		})
	}
	if !KnownKind(KindFileWrite) || KnownKind("network_access") {
		t.Error("KnownKind")
	}
}

func TestTypedEventsDecode(t *testing.T) {
	// One line per event shape of the protocol page, decoded into its struct.
	cases := []struct {
		raw   string
		into  any
		check func(any) bool
	}{
		{`{"type":"ready","protocolVersion":1,"sessionId":"s","model":"m","title":null,"autoTitle":"Fix","midTurnCommands":["/stop"]}`,
			&Ready{}, func(v any) bool {
				r := v.(*Ready)
				return r.Title == nil && *r.AutoTitle == "Fix" && r.MidTurnCommands[0] == "/stop"
			}},
		{`{"type":"ready","protocolVersion":1,"sessionId":"s","task":"t","config":"c.yaml","resumed":true,"agents":["A","B"]}`,
			&Ready{}, func(v any) bool { r := v.(*Ready); return r.Resumed && len(r.Agents) == 2 && *r.Config == "c.yaml" }},
		{`{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":{"sessionId":"s","task":"t","status":"queued","position":null},"pendingResults":["p"]}`,
			&Hello{}, func(v any) bool {
				h := v.(*Hello)
				return h.ClientID == nil && h.InFlight.Position == nil && h.PendingResults[0] == "p"
			}},
		{`{"type":"tool_call","id":"1","name":"shell","summary":"ls","args":null,"agent":null}`,
			&ToolCall{}, func(v any) bool { c := v.(*ToolCall); return string(c.Args) == "null" && c.Agent == nil }},
		{`{"type":"tool_result","id":"1","name":"shell","ok":false,"output":"boom"}`,
			&ToolResult{}, func(v any) bool { return !v.(*ToolResult).OK }},
		{`{"type":"message_end","turnIndex":3,"toolCalls":[],"inputTokens":10}`,
			&MessageEnd{}, func(v any) bool { m := v.(*MessageEnd); return *m.InputTokens == 10 && m.OutputTokens == nil }},
		{`{"type":"agent_message","message":{"agentName":"Coder","role":"assistant","content":"done","turnIndex":1,"timestamp":"2026-11-30T10:00:00Z","inputTokens":null,"outputTokens":5,"isCompactionSummary":false,"toolCalls":[{"name":"shell","argsSummary":"ls","succeeded":true}]},"elapsedMs":1200}`,
			&AgentMessageEvent{}, func(v any) bool {
				m := v.(*AgentMessageEvent).Message
				return m.InputTokens == nil && *m.OutputTokens == 5 && m.ToolCalls[0].Succeeded
			}},
		{`{"type":"result","sessionId":null,"task":"t","config":null,"succeeded":false,"errorMessage":"no config","exitCode":1,"turns":0,"elapsedSeconds":0.1,"inputTokens":0,"outputTokens":0}`,
			&RunResult{}, func(v any) bool {
				r := v.(*RunResult)
				return r.SessionID == nil && r.ExitCode == 1 && *r.ErrorMessage == "no config"
			}},
		{`{"type":"result","sessionId":"s","task":"t","succeeded":true,"errorMessage":null,"lastAgent":"A","lastMessage":"ok"}`,
			&TaskResult{}, func(v any) bool {
				r := v.(*TaskResult)
				return r.Succeeded && r.ErrorMessage == nil && *r.LastAgent == "A"
			}},
		{`{"type":"question","question":"Which?","options":["a"],"allowOther":true}`,
			&Question{}, func(v any) bool { return v.(*Question).AllowOther }},
		{`{"type":"status","model":"m","turn":2,"context":0.42,"level":"ok","modes":["plan"],"input":1,"output":2,"cached":3}`,
			&Status{}, func(v any) bool { return v.(*Status).Context == 0.42 }},
	}
	for _, c := range cases {
		l := ParseLine([]byte(c.raw))
		ev, ok := l.Event()
		if !ok {
			t.Fatalf("%s: not an event", c.raw)
		}
		if err := ev.Decode(c.into); err != nil || !c.check(c.into) {
			t.Errorf("%s: %v %+v", c.raw, err, c.into)
		}
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteLine([]byte(`{"type":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("raw")); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Fatal("written before Flush: the writer must batch")
	}
	if err := w.Flush(); err != nil || buf.String() != "{\"type\":\"a\"}\nraw" {
		t.Fatalf("after Flush: %q %v", buf.String(), err)
	}
	if w.Err() != nil {
		t.Error(w.Err())
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

func TestWriterErrorsAreSticky(t *testing.T) {
	w := NewWriter(failWriter{syscall.EPIPE})
	_ = w.WriteLine(bytes.Repeat([]byte("x"), 100<<10)) // bigger than the buffer: writes through
	if err := w.Err(); !IsBrokenPipe(err) {
		t.Fatalf("err %v, want a broken pipe", err)
	}
	if err := w.WriteLine([]byte("y")); !IsBrokenPipe(err) {
		t.Errorf("WriteLine after failure: %v", err)
	}
	if _, err := w.Write([]byte("y")); !IsBrokenPipe(err) {
		t.Errorf("Write after failure: %v", err)
	}
	if err := w.Flush(); !IsBrokenPipe(err) {
		t.Errorf("Flush after failure: %v", err)
	}
	if IsBrokenPipe(errors.New("other")) || !IsBrokenPipe(io.ErrClosedPipe) {
		t.Error("IsBrokenPipe")
	}
}

func TestWriterBrokenPipeThroughRealPipe(t *testing.T) {
	r, wf, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	w := NewWriter(wf)
	defer wf.Close()
	_ = w.WriteLine([]byte("x"))
	if err := w.Flush(); !IsBrokenPipe(err) {
		t.Fatalf("flush to a closed pipe: %v", err)
	}
}
