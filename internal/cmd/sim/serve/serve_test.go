package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/pkg/wire"
)

// testTimeout bounds every wait of these tests: only a hang reaches it.
var testTimeout = testkit.Bound(testkit.Hang)

type daemonT struct {
	dir, socket, url string
	record           string
	stderr           *testkit.SyncBuffer
	stop             func() int
}

// startDaemon runs fr-sim serve in process with a WebSocket, in a short temporary home.
func startDaemon(t *testing.T, dir string, env map[string]string, args ...string) *daemonT {
	t.Helper()
	if dir == "" {
		var err error
		dir, err = os.MkdirTemp("/tmp", "frs")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	ready := filepath.Join(dir, fmt.Sprintf("ready-%d.json", time.Now().UnixNano()))
	d := &daemonT{dir: dir, record: filepath.Join(dir, "rec.jsonl"), stderr: &testkit.SyncBuffer{}}
	vars := map[string]string{
		"FUSERAFT_HOME":  filepath.Join(dir, "home"),
		"FRSIM_SCENARIO": "testdata/serve.yaml",
		"FRSIM_RECORD":   d.record,
	}
	for k, v := range env {
		vars[k] = v
	}
	s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: d.stderr,
		Getenv: func(k string) string { return vars[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	all := append([]string{"--socket", filepath.Join(dir, "d.sock"), "--state-dir", filepath.Join(dir, "state"),
		"--port", "0", "--ready-file", ready}, args...)
	go func() { code <- Run(ctx, s, all) }()
	deadline := time.Now().Add(testTimeout)
	for {
		b, err := os.ReadFile(ready)
		if err == nil {
			var r struct{ Socket, URL string }
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			d.socket, d.url = r.Socket, r.URL
			break
		}
		select {
		case c := <-code:
			t.Fatalf("serve exited with %d before it was ready: %s", c, d.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready: %s", d.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var once sync.Once
	var exit int
	d.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case exit = <-code:
			case <-time.After(testTimeout):
				t.Errorf("serve did not stop")
			}
		})
		return exit
	}
	t.Cleanup(func() { d.stop() })
	return d
}

// testClient is a test client on either transport.
type testClient struct {
	t      *testing.T
	ws     *websocket.Conn
	nc     net.Conn
	r      *wire.Reader
	events chan wire.Event
	closed chan error
}

func (c *testClient) start() {
	c.events = make(chan wire.Event, 1024)
	c.closed = make(chan error, 1)
	go func() {
		for {
			var line []byte
			var err error
			if c.ws != nil {
				_, line, err = c.ws.Read(context.Background())
			} else {
				line, err = c.r.ReadLine()
				line = append([]byte(nil), line...)
			}
			if err != nil {
				c.closed <- err
				close(c.events)
				return
			}
			l := ParseLineForTest(line)
			c.events <- l
		}
	}()
}

func ParseLineForTest(b []byte) wire.Event {
	l := wire.ParseLine(b)
	ev, _ := l.Event()
	if ev.Raw == nil {
		ev.Raw = b
	}
	return ev
}

func dialWS(t *testing.T, url string, h http.Header) *testClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	c := &testClient{t: t, ws: ws}
	c.start()
	t.Cleanup(func() { ws.CloseNow() })
	return c
}

func dialSocket(t *testing.T, path string) *testClient {
	t.Helper()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c := &testClient{t: t, nc: nc, r: wire.NewReader(nc, wire.ReaderOptions{})}
	c.start()
	t.Cleanup(func() { nc.Close() })
	return c
}

func (c *testClient) send(line string) {
	c.t.Helper()
	var err error
	if c.ws != nil {
		err = c.ws.Write(context.Background(), websocket.MessageText, []byte(line))
	} else {
		_, err = c.nc.Write([]byte(line + "\n"))
	}
	if err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next event of type typ, failing on any event in forbid seen first.
func (c *testClient) next(typ string, forbid ...string) wire.Event {
	c.t.Helper()
	timer := time.NewTimer(testTimeout)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				c.t.Fatalf("connection closed waiting for %s: %v", typ, <-c.closed)
			}
			for _, f := range forbid {
				if ev.Type == f {
					c.t.Fatalf("got %s while waiting for %s: %s", f, typ, ev.Raw)
				}
			}
			if ev.Type == typ {
				return ev
			}
		case <-timer.C:
			c.t.Fatalf("timed out waiting for %s", typ)
		}
	}
}

func fieldOf[T any](t *testing.T, ev wire.Event, name string) T {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(ev.Raw, &m); err != nil {
		t.Fatal(err)
	}
	var v T
	raw, ok := m[name]
	if !ok {
		t.Fatalf("%s has no %s: %s", ev.Type, name, ev.Raw)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s.%s: %v", ev.Type, name, err)
	}
	return v
}

func TestHandshakeRules(t *testing.T) {
	d := startDaemon(t, "", map[string]string{"FUSERAFT_SERVE_TOKEN": "envtok"}, "--tokens-file", "testdata/tokens")
	cases := []struct {
		name   string
		header map[string]string
		status int
	}{
		{"an Origin header is refused", map[string]string{"Authorization": "Bearer envtok", "Origin": "http://127.0.0.1"}, 403},
		{"no token", nil, 401},
		{"a bad token", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"not a bearer token", map[string]string{"Authorization": "Basic envtok"}, 401},
		{"an invalid client id", map[string]string{"Authorization": "Bearer envtok", "Fuseraft-Client-Id": "a b"}, 400},
		{"a client id too long", map[string]string{"Authorization": "Bearer envtok", "Fuseraft-Client-Id": strings.Repeat("a", 65)}, 400},
		{"the env token", map[string]string{"Authorization": "Bearer envtok"}, 101},
		{"a file token", map[string]string{"Authorization": "Bearer filetok"}, 101},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			ws, resp, err := websocket.Dial(ctx, d.url, &websocket.DialOptions{HTTPHeader: h})
			if tc.status == 101 {
				if err != nil {
					t.Fatal(err)
				}
				ws.CloseNow()
				return
			}
			if err == nil {
				ws.CloseNow()
				t.Fatalf("handshake accepted, want %d", tc.status)
			}
			if resp == nil || resp.StatusCode != tc.status {
				t.Fatalf("got %v, want status %d", resp, tc.status)
			}
		})
	}
}

func TestHello(t *testing.T) {
	d := startDaemon(t, "", nil, "--tokens-file", "testdata/tokens")
	c := dialWS(t, d.url, http.Header{"Authorization": {"Bearer filetok"}, "Fuseraft-Client-Id": {"ci-7"}})
	hello := c.next("hello")
	want := `{"type":"hello","protocolVersion":1,"clientId":"ci-7","readOnly":false,"inFlight":null,"pendingResults":[]}`
	if string(hello.Raw) != want {
		t.Errorf("hello\n got %s\nwant %s", hello.Raw, want)
	}
	s := dialSocket(t, d.socket)
	hello = s.next("hello")
	want = `{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}`
	if string(hello.Raw) != want {
		t.Errorf("socket hello\n got %s\nwant %s", hello.Raw, want)
	}
}

func TestReadOnlyTokenGetsAnError(t *testing.T) {
	d := startDaemon(t, "", nil, "--tokens-file", "testdata/tokens")
	c := dialWS(t, d.url, http.Header{"Authorization": {"Bearer readtok"}})
	if !fieldOf[bool](t, c.next("hello"), "readOnly") {
		t.Fatal("hello.readOnly is false for a read token")
	}
	c.send(`{"type":"user_input","text":"quick one"}`)
	c.next("error", "queued")
	c.send("quick two")
	c.next("error", "queued")
}

func TestQueueBroadcastAndPrivatePrompts(t *testing.T) {
	d := startDaemon(t, "", nil)
	a := dialWS(t, d.url, http.Header{"Fuseraft-Client-Id": {"a"}})
	b := dialSocket(t, d.socket)
	a.next("hello")
	b.next("hello")
	a.send("deploy it")
	if pos := fieldOf[int](t, a.next("queued"), "position"); pos != 0 {
		t.Errorf("first task's position = %d, want 0", pos)
	}
	a.next("approval_request")
	b.next("agent_starting", "approval_request") // progress is broadcast, the prompt is not
	b.send("quick then")
	if pos := fieldOf[int](t, b.next("queued", "approval_request"), "position"); pos != 1 {
		t.Errorf("second task's position = %d, want 1", pos)
	}
	a.send(`{"type":"approval_response","approved":true}`)
	r := a.next("result")
	if !fieldOf[bool](t, r, "succeeded") || fieldOf[string](t, r, "task") != "deploy it" {
		t.Errorf("a's result: %s", r.Raw)
	}
	r = b.next("result", "approval_request")
	if fieldOf[string](t, r, "task") != "quick then" {
		t.Errorf("b got another client's result: %s", r.Raw)
	}
}

func TestStrayLineIsADenial(t *testing.T) {
	d := startDaemon(t, "", nil)
	c := dialSocket(t, d.socket)
	c.next("hello")
	c.send("deploy it")
	c.next("queued")
	c.send("this is not an answer")
	c.next("approval_request")
	r := c.next("result")
	if fieldOf[bool](t, r, "succeeded") || fieldOf[string](t, r, "errorMessage") != "approval denied" {
		t.Errorf("result: %s", r.Raw)
	}
	rec, _ := os.ReadFile(d.record)
	if !bytes.Contains(rec, []byte(`"text":"this is not an answer"`)) || !bytes.Contains(rec, []byte(`"transport":"socket"`)) {
		t.Errorf("record:\n%s", rec)
	}
}

func TestInterrupt(t *testing.T) {
	d := startDaemon(t, "", nil)
	c := dialSocket(t, d.socket)
	c.next("hello")
	c.send(`{"type":"interrupt"}`) // nothing runs: dropped
	c.send("deploy it")
	c.next("queued")
	c.next("approval_request")
	c.send(`{"type":"interrupt"}`)
	r := c.next("result")
	if fieldOf[bool](t, r, "succeeded") || !strings.Contains(fieldOf[string](t, r, "errorMessage"), "cancelled") {
		t.Errorf("result: %s", r.Raw)
	}
}

func TestNewerConnectionClosesTheOlder(t *testing.T) {
	d := startDaemon(t, "", nil, "--tokens-file", "testdata/tokens")
	h := http.Header{"Authorization": {"Bearer filetok"}, "Fuseraft-Client-Id": {"twin"}}
	old := dialWS(t, d.url, h)
	old.next("hello")
	other := dialWS(t, d.url, http.Header{"Authorization": {"Bearer readtok"}, "Fuseraft-Client-Id": {"twin"}})
	other.next("hello")
	newer := dialWS(t, d.url, h)
	newer.next("hello")
	old.next("error")
	for range old.events {
	}
	if err := <-old.closed; websocket.CloseStatus(err) != CloseReplaced {
		t.Errorf("older connection closed with %v, want status %d", err, CloseReplaced)
	}
	// the same id under another token is another client: still there
	other.send("quick")
	other.next("error") // read-only, but it was read: the connection lives
}

func TestGraceAndPendingResults(t *testing.T) {
	d := startDaemon(t, "", nil, "--reconnect-grace", "50ms")
	c := dialWS(t, d.url, http.Header{"Fuseraft-Client-Id": {"gone"}})
	c.next("hello")
	c.send("deploy it")
	id := fieldOf[string](t, c.next("queued"), "sessionId")
	c.next("approval_request")
	c.ws.CloseNow()
	// Nobody comes back within the grace: denied; the result waits for the client.
	deadline := time.Now().Add(testTimeout)
	for {
		b, _ := os.ReadFile(filepath.Join(d.dir, "state", stateFile))
		if bytes.Contains(b, []byte(`"sessionId":"`+id+`","event"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pending result in the state: %s", b)
		}
		time.Sleep(5 * time.Millisecond)
	}
	c = dialWS(t, d.url, http.Header{"Fuseraft-Client-Id": {"gone"}})
	hello := c.next("hello")
	if got := fieldOf[[]string](t, hello, "pendingResults"); len(got) != 1 || got[0] != id {
		t.Errorf("pendingResults = %v, want [%s]", got, id)
	}
	r := c.next("result")
	if fieldOf[bool](t, r, "succeeded") {
		t.Errorf("an approval nobody answered was approved: %s", r.Raw)
	}
}

func TestRestartResumesAndKeepsResults(t *testing.T) {
	d := startDaemon(t, "", nil)
	c := dialWS(t, d.url, http.Header{"Fuseraft-Client-Id": {"keeper"}})
	c.next("hello")
	c.send("deploy it")
	id := fieldOf[string](t, c.next("queued"), "sessionId")
	c.next("approval_request")
	if code := d.stop(); code != 0 {
		t.Fatalf("stop: exit %d: %s", code, d.stderr)
	}
	if _, err := os.Stat(filepath.Join(d.dir, "state", "serve.pid")); err == nil {
		t.Error("the pidfile is left after a clean stop")
	}
	d2 := startDaemon(t, d.dir, nil)
	c = dialWS(t, d2.url, http.Header{"Fuseraft-Client-Id": {"keeper"}})
	hello := c.next("hello")
	var h wire.Hello
	hello.Decode(&h)
	if h.InFlight == nil || h.InFlight.SessionID != id || h.InFlight.Task != "deploy it" {
		t.Fatalf("hello.inFlight: %s", hello.Raw)
	}
	if tr := c.next("task_resumed"); fieldOf[string](t, tr, "sessionId") != id {
		t.Errorf("task_resumed: %s", tr.Raw)
	}
	c.next("approval_request")
	c.send(`{"type":"approval_response","approved":true}`)
	if r := c.next("result"); !fieldOf[bool](t, r, "succeeded") {
		t.Errorf("result: %s", r.Raw)
	}
	pid, err := os.ReadFile(filepath.Join(d.dir, "state", "serve.pid"))
	if err != nil || strings.TrimSpace(string(pid)) != fmt.Sprint(os.Getpid()) {
		t.Errorf("pidfile: %q %v", pid, err)
	}
}

func TestDotnetFault(t *testing.T) {
	t.Run("env", func(t *testing.T) { testDotnet(t, map[string]string{"FRSIM_FAULTS": "dotnet"}) })
	t.Run("flag", func(t *testing.T) { testDotnet(t, nil, "--faults", "dotnet") })
}

func testDotnet(t *testing.T, env map[string]string, args ...string) {
	d := startDaemon(t, "", env, args...)
	c := dialSocket(t, d.socket)
	c.next("hello")
	c.send("quick \"café\" + <b>")
	r := c.next("result")
	if !bytes.Contains(r.Raw, []byte(`"task":"quick \u0022caf\u00E9\u0022 \u002B \u003Cb\u003E"`)) {
		t.Errorf("result not as .NET writes it: %s", r.Raw)
	}
	if fieldOf[string](t, r, "task") != "quick \"café\" + <b>" {
		t.Errorf("task: %s", r.Raw)
	}
}

func TestSocketPathTooLong(t *testing.T) {
	var errb bytes.Buffer
	home := "/tmp/" + strings.Repeat("x", 120)
	s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb,
		Getenv: func(k string) string {
			if k == "FUSERAFT_HOME" {
				return home
			}
			return ""
		}}
	if code := Run(context.Background(), s, nil); code != cmdutil.ExitFailed {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(errb.String(), "longer than the 107 bytes AF_UNIX allows") ||
		!strings.Contains(errb.String(), "fr-sim: hint: pass a shorter --socket PATH") {
		t.Errorf("stderr: %s", errb.String())
	}
}

func TestTokensFile(t *testing.T) {
	toks := tokens{}
	if err := readTokens("testdata/tokens", toks); err != nil {
		t.Fatal(err)
	}
	if len(toks) != 2 || toks["filetok"] || !toks["readtok"] {
		t.Errorf("tokens: %v", toks)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("admin secret\n"), 0o600)
	err := readTokens(bad, tokens{})
	if err == nil || cmdutil.CodeOf(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad tokens file: %v", err)
	}
}

func TestTaskText(t *testing.T) {
	cases := []struct {
		line string
		text string
		ok   bool
	}{
		{`plain words`, "plain words", true},
		{`{"type":"user_input","text":"hi"}`, "hi", true},
		{`{"text":null}`, "", false},
		{`{"type":"approval_response","approved":true}`, `{"type":"approval_response","approved":true}`, true},
		{`{"text":5}`, `{"text":5}`, true},
		{`[1,2]`, `[1,2]`, true},
	}
	for _, tc := range cases {
		text, ok := taskText([]byte(tc.line))
		if text != tc.text || ok != tc.ok {
			t.Errorf("taskText(%s) = %q, %v; want %q, %v", tc.line, text, ok, tc.text, tc.ok)
		}
	}
}

func FuzzTaskText(f *testing.F) {
	f.Add([]byte(`{"type":"user_input","text":"hi"}`))
	f.Add([]byte(`{"text":null}`))
	f.Add([]byte(`plain`))
	f.Add([]byte(`{"text":"\u0022"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		text, ok := taskText(b)
		if !json.Valid(b) && (!ok || text != string(b)) {
			t.Errorf("a line that is not JSON must be the task verbatim: %q -> %q %v", b, text, ok)
		}
	})
}

func FuzzReadTokens(f *testing.F) {
	f.Add("write a\nread b\n# c\n\n")
	f.Add("read\n")
	f.Add("write  spaced  \n")
	f.Fuzz(func(t *testing.T, content string) {
		p := filepath.Join(t.TempDir(), "tokens")
		os.WriteFile(p, []byte(content), 0o600)
		toks := tokens{}
		if err := readTokens(p, toks); err == nil {
			for tok := range toks {
				if tok == "" || strings.TrimSpace(tok) != tok {
					t.Errorf("token %q accepted from %q", tok, content)
				}
			}
		}
	})
}

// A task sent over the socket (no client id) is resumed after a restart, but nobody can be
// its client again: a new connection is not asked its approval, which is denied.
func TestResumedSocketTaskHasNoClient(t *testing.T) {
	d := startDaemon(t, "", nil)
	c := dialSocket(t, d.socket)
	c.next("hello")
	c.send("deploy it")
	c.next("approval_request")
	d.stop()
	d2 := startDaemon(t, d.dir, nil)
	c = dialSocket(t, d2.socket)
	if h := c.next("hello"); !bytes.Contains(h.Raw, []byte(`"inFlight":null`)) {
		t.Errorf("a new socket client got another's task: %s", h.Raw)
	}
	deadline := time.Now().Add(testTimeout)
	for {
		b, _ := os.ReadFile(filepath.Join(d.dir, "state", stateFile))
		if string(b) == `{"tasks":[],"results":[]}`+"\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resumed task did not end: %s", b)
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.send("quick after")
	c.next("result", "approval_request")
}

// The scenario's hangup step drops the dispatching client's connection; the task goes on and
// its approval waits for the client to come back.
func TestHangupStep(t *testing.T) {
	d := startDaemon(t, "", map[string]string{"FRSIM_SCENARIO": "testdata/hangup.yaml"})
	c := dialWS(t, d.url, http.Header{"Fuseraft-Client-Id": {"hung"}})
	c.next("hello")
	c.send("deploy")
	c.next("agent_starting")
	for range c.events {
	}
	c = dialWS(t, d.url, http.Header{"Fuseraft-Client-Id": {"hung"}})
	c.next("hello")
	c.next("approval_request")
	c.send(`{"type":"approval_response","approved":true}`)
	if r := c.next("result"); !fieldOf[bool](t, r, "succeeded") {
		t.Errorf("result: %s", r.Raw)
	}
}

// The crash fault kills the daemon mid-task: exit 134, the message on stderr, the state, the
// pidfile and the socket file left behind; the next start resumes the task.
func TestCrashFaultKeepsState(t *testing.T) {
	d := startDaemon(t, "", map[string]string{"FRSIM_FAULTS": "crash=1"})
	c := dialWS(t, d.url, http.Header{"Fuseraft-Client-Id": {"crashy"}})
	c.next("hello")
	c.send("deploy it")
	c.next("agent_starting")
	for range c.events {
	}
	if code := d.stop(); code != 134 {
		t.Errorf("exit %d, want 134", code)
	}
	if !strings.Contains(d.stderr.String(), "Unhandled exception") {
		t.Errorf("stderr: %s", d.stderr)
	}
	for _, f := range []string{"state/serve.pid", "d.sock"} {
		if _, err := os.Stat(filepath.Join(d.dir, f)); err != nil {
			t.Errorf("%s not left behind: %v", f, err)
		}
	}
	d2 := startDaemon(t, d.dir, nil)
	c = dialWS(t, d2.url, http.Header{"Fuseraft-Client-Id": {"crashy"}})
	c.next("hello")
	c.next("task_resumed")
	c.next("approval_request")
	c.send(`{"type":"approval_response","approved":false}`)
	if r := c.next("result"); fieldOf[bool](t, r, "succeeded") {
		t.Errorf("a denied task succeeded: %s", r.Raw)
	}
}

// --auto-objective: once the first client is attached, the daemon dispatches each objective's
// task by itself and tells every client with auto_dispatched; the tasks play with their
// progress broadcast, their approvals denied and their results sent to nobody.
func TestAutoObjective(t *testing.T) {
	d := startDaemon(t, "", nil, "--auto-objective", "OBJ-1:quick, tidy the imports",
		"--auto-objective", "OBJ-2: deploy it")
	a := dialWS(t, d.url, http.Header{"Fuseraft-Client-Id": {"a"}})
	a.next("hello")
	var ids []string
	for _, want := range []struct{ obj, task string }{{"OBJ-1", "quick, tidy the imports"}, {"OBJ-2", "deploy it"}} {
		ev := a.next("auto_dispatched", "queued", "result")
		if got := fieldOf[string](t, ev, "objectiveId"); got != want.obj {
			t.Errorf("objectiveId = %q, want %q", got, want.obj)
		}
		if got := fieldOf[string](t, ev, "task"); got != want.task {
			t.Errorf("task = %q, want %q", got, want.task)
		}
		ids = append(ids, fieldOf[string](t, ev, "sessionId"))
	}
	if ids[0] == "" || ids[0] == ids[1] {
		t.Errorf("session ids %q", ids)
	}
	if got := fieldOf[string](t, a.next("agent_starting"), "agent"); got != "Worker" {
		t.Errorf("first progress from %q, want the first objective's Worker", got)
	}
	if got := fieldOf[string](t, a.next("agent_starting"), "agent"); got != "Developer" {
		t.Errorf("second progress from %q, want the second objective's Developer", got)
	}

	// A later client dispatches nothing more; neither client is asked or told a result
	// of the daemon's own tasks.
	b := dialSocket(t, d.socket)
	b.next("hello")
	a.send("quick one")
	queued := fieldOf[string](t, a.next("queued", "approval_request"), "sessionId")
	r := a.next("result", "approval_request", "auto_dispatched")
	if got := fieldOf[string](t, r, "sessionId"); got != queued {
		t.Errorf("a got the result of %s, want its own %s: %s", got, queued, r.Raw)
	}
	b.send("quick two")
	b.next("queued", "auto_dispatched")
	r = b.next("result", "approval_request", "auto_dispatched")
	if got := fieldOf[string](t, r, "task"); got != "quick two" {
		t.Errorf("b's result: %s", r.Raw)
	}
	rec, _ := os.ReadFile(d.record)
	if bytes.Contains(rec, []byte("approval_response")) {
		t.Errorf("somebody answered an objective's approval: %s", rec)
	}
}

func TestAutoObjectiveUsage(t *testing.T) {
	for _, v := range []string{"no-colon", ":task", "ID:", " : "} {
		var errb bytes.Buffer
		s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb,
			Getenv: func(string) string { return "" }}
		if code := Run(context.Background(), s, []string{"--auto-objective", v}); code != 2 {
			t.Errorf("--auto-objective %q: exit %d, want 2 (%s)", v, code, errb.String())
		}
	}
}

// --a2a: POST /a2a/AGENT is a call to a hosted agent, announced to every client with
// a2a_call and played as a task nobody owns.
func TestA2ACall(t *testing.T) {
	d := startDaemon(t, "", nil, "--a2a", "--tokens-file", "testdata/tokens")
	a := dialWS(t, d.url, http.Header{"Authorization": {"Bearer filetok"}})
	b := dialSocket(t, d.socket)
	a.next("hello")
	b.next("hello")
	base := "http" + strings.TrimSuffix(strings.TrimPrefix(d.url, "ws"), "/attach") + "/a2a/"
	post := func(agent, token, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+agent, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		return resp.StatusCode, buf.Bytes()
	}
	for _, tc := range []struct {
		agent, token, body string
		status             int
	}{
		{"reviewer", "", "quick", 401},
		{"reviewer", "readtok", "quick", 403},
		{"reviewer", "filetok", "", 400},
		{"not an agent", "filetok", "quick", 404},
	} {
		if code, body := post(tc.agent, tc.token, tc.body); code != tc.status {
			t.Errorf("POST /a2a/%s (token %q, body %q): %d %s, want %d", tc.agent, tc.token, tc.body, code, body, tc.status)
		}
	}
	if resp, err := http.Get(base + "reviewer"); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v %v, want 405", resp, err)
	}

	code, body := post("reviewer", "filetok", `{"type":"user_input","text":"quick review of #12"}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST: %d %s", code, body)
	}
	var resp struct{ SessionID string }
	if err := json.Unmarshal(body, &resp); err != nil || resp.SessionID == "" {
		t.Fatalf("POST answered %s (%v)", body, err)
	}
	for _, c := range []*testClient{a, b} {
		ev := c.next("a2a_call", "agent_starting")
		if fieldOf[string](t, ev, "agent") != "reviewer" || fieldOf[string](t, ev, "sessionId") != resp.SessionID {
			t.Errorf("a2a_call %s, want agent reviewer and session %s", ev.Raw, resp.SessionID)
		}
		c.next("agent_starting", "result")
	}
	// The call's result goes to no client: the next result a sees is of its own task.
	a.send("quick mine")
	r := a.next("result", "approval_request")
	if fieldOf[string](t, r, "task") != "quick mine" {
		t.Errorf("a's result: %s", r.Raw)
	}
}

func TestA2ANeedsPort(t *testing.T) {
	var errb bytes.Buffer
	s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb,
		Getenv: func(string) string { return "" }}
	if code := Run(context.Background(), s, []string{"--a2a"}); code != 2 || !strings.Contains(errb.String(), "--port") {
		t.Errorf("--a2a without --port: exit %d, %s", code, errb.String())
	}
}

// TestDefaultTaskDenials plays the embedded scenario's task with the answers a policy like
// the demo's gives: a denied write to parser.go makes the coder write a test instead, and the
// result says what came of it, not that Parse was fixed. A denied go test is reported too.
func TestDefaultTaskDenials(t *testing.T) {
	const (
		yes = `{"type":"approval_response","approved":true}`
		no  = `{"type":"approval_response","approved":false}`
	)
	for _, tc := range []struct {
		name    string
		answers []string
		paths   []string // the file_write prompts, in order
		last    string
	}{
		{"all allowed", []string{yes, yes, yes}, []string{"parser.go"}, "Parse keeps quoted words together; tests pass."},
		{"curl denied", []string{yes, yes, no}, []string{"parser.go"}, "Parse keeps quoted words together; tests pass."},
		{"write denied", []string{yes, no, yes, no}, []string{"parser.go", "parser_test.go"},
			"parser.go is unchanged (the write was denied); TestParseQuoted in parser_test.go records the bug for whoever may change it."},
		{"both writes denied", []string{yes, no, no, no}, []string{"parser.go", "parser_test.go"},
			"Nothing changed: the writes to parser.go and parser_test.go were denied."},
		{"tests denied", []string{no, yes, yes}, []string{"parser.go"},
			"Parse keeps quoted words together; the tests were not run (go test was denied)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := startDaemon(t, "", map[string]string{"FRSIM_SCENARIO": ""})
			c := dialSocket(t, d.socket)
			c.next("hello")
			c.send("make Parse keep quoted words together")
			var paths []string
			for _, a := range tc.answers {
				ev := c.next("approval_request", "result")
				if fieldOf[string](t, ev, "kind") == "file_write" {
					paths = append(paths, fieldOf[string](t, ev, "path"))
				}
				c.send(a)
			}
			r := c.next("result", "approval_request")
			if strings.Join(paths, " ") != strings.Join(tc.paths, " ") {
				t.Errorf("file_write prompts %q, want %q", paths, tc.paths)
			}
			// No denial here fails the task: each is reported to the coder, which goes on.
			if !fieldOf[bool](t, r, "succeeded") || fieldOf[string](t, r, "lastMessage") != tc.last {
				t.Errorf("result: %s\nwant lastMessage %q", r.Raw, tc.last)
			}
		})
	}
}
