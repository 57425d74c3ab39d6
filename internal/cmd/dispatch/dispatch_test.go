package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

// fakeDaemon serves the three MCP tools as fuseraft serve documents them, over the SDK's own
// server: each task completes after `after` status polls, a task whose text says "fail"
// fails.
type fakeDaemon struct {
	mu    sync.Mutex
	tasks map[string]*fakeTask
	seq   int
	after int
	token string
	polls int
	srv   *httptest.Server
}

type fakeTask struct {
	text  string
	polls int
}

type dispatchIn struct {
	Task        string `json:"task"`
	ObjectiveID string `json:"objectiveId,omitempty"`
}
type idIn struct {
	SessionID string `json:"sessionId"`
}

func newFake(t *testing.T, after int, token string) *fakeDaemon {
	f := &fakeDaemon{tasks: map[string]*fakeTask{}, after: after, token: token}
	s := mcp.NewServer(&mcp.Implementation{Name: "fake-serve"}, nil)
	text := func(v string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: v}}}
	}
	mcp.AddTool(s, &mcp.Tool{Name: toolDispatch}, func(_ context.Context, _ *mcp.CallToolRequest, in dispatchIn) (*mcp.CallToolResult, any, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.seq++
		id := fmt.Sprintf("sim-%04d", f.seq)
		f.tasks[id] = &fakeTask{text: in.Task}
		return text(fmt.Sprintf(`{"sessionId":%q,"status":"queued","position":%d}`, id, len(f.tasks)-1)), nil, nil
	})
	state := func(id string, poll bool) (string, *fakeTask) {
		f.mu.Lock()
		defer f.mu.Unlock()
		tk := f.tasks[id]
		if tk == nil {
			return "unknown", nil
		}
		if poll {
			tk.polls++
			f.polls++
		}
		switch {
		case tk.polls < f.after:
			return "running", tk
		case strings.Contains(tk.text, "fail"):
			return "failed", tk
		}
		return "completed", tk
	}
	mcp.AddTool(s, &mcp.Tool{Name: toolStatus}, func(_ context.Context, _ *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, any, error) {
		st, _ := state(in.SessionID, true)
		if st == "unknown" {
			return text(fmt.Sprintf(`{"status":"unknown","error":"No task found for session '%s'."}`, in.SessionID)), nil, nil
		}
		return text(fmt.Sprintf(`{"status":%q,"position":null,"turnCount":1,"lastAgent":"coder","lastMessage":"ok"}`, st)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: toolResult}, func(_ context.Context, _ *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, any, error) {
		st, tk := state(in.SessionID, false)
		switch st {
		case "unknown":
			return text(fmt.Sprintf(`{"status":"unknown","error":"No task found for session '%s'."}`, in.SessionID)), nil, nil
		case "running":
			return text(`{"status":"running"}`), nil, nil
		}
		ok := st == "completed"
		em := "null"
		if !ok {
			em = `"it failed"`
		}
		return text(fmt.Sprintf(`{"status":%q,"succeeded":%v,"errorMessage":%s,"messages":[{"agent":"coder","role":"assistant","content":%q}]}`, st, ok, em, "did "+tk.text)), nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeDaemon) url() string { return f.srv.URL + "/mcp" }

type result struct {
	code           int
	stdout, stderr string
}

func runDispatch(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	s := cmdutil.Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }}
	code := Run(context.Background(), s, append([]string{prog}, args...))
	return result{code, out.String(), errb.String()}
}

func lines(s string) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			m = map[string]any{"unparsed": l}
		}
		out = append(out, m)
	}
	return out
}

func TestDispatchThenCollect(t *testing.T) {
	f := newFake(t, 2, "")
	r := runDispatch(t, nil, "", "--url", f.url(), "task", "fix the build", "update deps")
	if r.code != 0 {
		t.Fatalf("task: exit %d: %s", r.code, r.stderr)
	}
	got := lines(r.stdout)
	if len(got) != 2 || got[0]["sessionId"] != "sim-0001" || got[0]["status"] != "queued" || got[1]["position"] != 1.0 {
		t.Fatalf("task printed %q", r.stdout)
	}
	if !strings.HasPrefix(r.stdout, `{"sessionId":"sim-0001","status":"queued","position":0}`+"\n") {
		t.Errorf("the daemon's line is not passed on as it was: %q", r.stdout)
	}
	// flags after the ids work too
	r = runDispatch(t, nil, "", "wait", "sim-0001", "sim-0002", "--url", f.url(), "--poll", "5ms")
	if r.code != 0 {
		t.Fatalf("wait: exit %d: %s", r.code, r.stderr)
	}
	got = lines(r.stdout)
	if len(got) != 2 {
		t.Fatalf("wait printed %q", r.stdout)
	}
	for _, m := range got {
		if m["status"] != "completed" || m["succeeded"] != true || !strings.HasPrefix(fmt.Sprint(m["sessionId"]), "sim-") {
			t.Errorf("wait line %v", m)
		}
	}
	r = runDispatch(t, nil, "", "--url", f.url(), "status", "sim-0002")
	if r.code != 0 || !strings.HasPrefix(r.stdout, `{"sessionId":"sim-0002","status":"completed",`) {
		t.Errorf("status: %d %q %s", r.code, r.stdout, r.stderr)
	}
}

func TestTasksFromStdinAndFailures(t *testing.T) {
	f := newFake(t, 0, "")
	env := map[string]string{"FUSERAFT_MCP_URL": f.url()}
	r := runDispatch(t, env, "one\n\n  \ntwo fail\n", "run", "--poll", "5ms")
	if r.code != 1 {
		t.Fatalf("run with a failing task: exit %d, want 1; %s", r.code, r.stderr)
	}
	got := lines(r.stdout)
	if len(got) != 2 {
		t.Fatalf("run printed %q", r.stdout)
	}
	tasks := map[any]any{}
	for _, m := range got {
		tasks[m["task"]] = m["succeeded"]
	}
	if tasks["one"] != true || tasks["two fail"] != false {
		t.Errorf("run lines %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "it failed") || !strings.Contains(r.stderr, "1 of 2 tasks") {
		t.Errorf("stderr %q", r.stderr)
	}
}

func TestUnknownID(t *testing.T) {
	f := newFake(t, 0, "")
	for _, cmd := range []string{"status", "result", "wait"} {
		r := runDispatch(t, nil, "", "--url", f.url(), cmd, "sim-nope")
		if r.code != 1 || !strings.Contains(r.stdout, `"status":"unknown"`) || !strings.Contains(r.stdout, `"sessionId":"sim-nope"`) {
			t.Errorf("%s of an unknown id: exit %d stdout %q stderr %q", cmd, r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "No task found") {
			t.Errorf("%s: stderr %q does not say why", cmd, r.stderr)
		}
	}
}

func TestParallel(t *testing.T) {
	f := newFake(t, 3, "")
	var in strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&in, "task %d\n", i)
	}
	r := runDispatch(t, nil, in.String(), "--url", f.url(), "run", "--parallel", "8", "--poll", "2ms", "--max-poll", "10ms")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	seen := map[string]int{}
	for _, m := range lines(r.stdout) {
		seen[fmt.Sprint(m["task"])]++
		if m["succeeded"] != true {
			t.Errorf("line %v", m)
		}
	}
	for i := 0; i < 50; i++ {
		if n := seen[fmt.Sprintf("task %d", i)]; n != 1 {
			t.Errorf("task %d reported %d times", i, n)
		}
	}
}

func TestTimeout(t *testing.T) {
	f := newFake(t, 1<<30, "")
	runDispatch(t, nil, "", "--url", f.url(), "task", "slow")
	start := time.Now()
	r := runDispatch(t, nil, "", "--url", f.url(), "wait", "--timeout", "200ms", "--poll", "10ms", "sim-0001")
	if r.code != 1 || !strings.Contains(r.stderr, "did not finish within --timeout") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if time.Since(start) > testkit.Bound(5*time.Second) {
		t.Errorf("--timeout 200ms took %s", time.Since(start))
	}
}

func TestRefusedAndUnavailable(t *testing.T) {
	f := newFake(t, 0, "s3cret")
	r := runDispatch(t, nil, "", "--url", f.url(), "task", "x")
	if r.code != cmdutil.ExitRefused || !strings.Contains(r.stderr, "401") {
		t.Errorf("no token: exit %d %q", r.code, r.stderr)
	}
	r = runDispatch(t, map[string]string{"FUSERAFT_SERVE_TOKEN": "wrong"}, "", "--url", f.url(), "task", "x")
	if r.code != cmdutil.ExitRefused {
		t.Errorf("wrong token: exit %d %q", r.code, r.stderr)
	}
	r = runDispatch(t, map[string]string{"FUSERAFT_SERVE_TOKEN": "s3cret"}, "", "--url", f.url(), "task", "x")
	if r.code != 0 {
		t.Errorf("right token: exit %d %q", r.code, r.stderr)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	r = runDispatch(t, nil, "", "--url", "http://"+addr+"/mcp", "task", "x")
	if r.code != cmdutil.ExitUnavailable || !strings.Contains(r.stderr, "nothing answers") {
		t.Errorf("closed port: exit %d %q", r.code, r.stderr)
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"task", "x"}, nil, "pass --url or set FUSERAFT_MCP_URL"},
		{[]string{"--url", "http://127.0.0.1:1/mcp", "task", ""}, nil, "task 1 is empty"},
		{[]string{"--url", "http://127.0.0.1:1/mcp", "task", "  "}, nil, "task 1 is empty"},
		{[]string{"--url", "http://127.0.0.1:1/mcp", "wait"}, nil, "at least one session id"},
		{[]string{"--url", "ftp://x/mcp", "task", "x"}, nil, "scheme must be"},
		{[]string{"--url", "http://127.0.0.1:1/mcp", "run", "--parallel", "0", "x"}, nil, "--parallel must be at least 1"},
		{[]string{"--url", "http://127.0.0.1:1/mcp", "--token-file", "/nonexistent", "task", "x"}, nil, "--token-file"},
	}
	for _, tt := range tests {
		r := runDispatch(t, tt.env, "", tt.args...)
		if r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	r := runDispatch(t, nil, "", "--url", "http://127.0.0.1:1/mcp", "task")
	if r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, "no task") {
		t.Errorf("no task on stdin: %d %q", r.code, r.stderr)
	}
}

func TestEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080/mcp":     "http://127.0.0.1:8080/mcp",
		"http://127.0.0.1:8080":         "http://127.0.0.1:8080/mcp",
		"ws://127.0.0.1:8080/attach":    "http://127.0.0.1:8080/mcp",
		"wss://host.example:443/attach": "https://host.example:443/mcp",
	} {
		if got, err := endpoint(in); err != nil || got != want {
			t.Errorf("endpoint(%q) = %q %v, want %q", in, got, err, want)
		}
	}
}
