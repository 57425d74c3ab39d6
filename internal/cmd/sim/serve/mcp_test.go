package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a token to every request of an MCP client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func mcpSession(t *testing.T, d *daemonT, token string) *mcp.ClientSession {
	t.Helper()
	endpoint := "http" + strings.TrimSuffix(strings.TrimPrefix(d.url, "ws"), "/attach") + "/mcp"
	c := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: bearer{token}}, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// call calls a tool and decodes its one JSON text content.
func call(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) (map[string]any, error) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, res.GetError()
	}
	var m map[string]any
	text := res.Content[0].(*mcp.TextContent).Text
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("%s answered %q: %v", tool, text, err)
	}
	return m, nil
}

// The MCP tools: a dispatched task nobody attends follows --unattended-policy; get_status and
// get_result follow it to its end; a read token may look but not dispatch.
func TestMCPTools(t *testing.T) {
	dir, _ := os.MkdirTemp("/tmp", "frm")
	t.Cleanup(func() { os.RemoveAll(dir) })
	scen := filepath.Join(dir, "s.yaml")
	os.WriteFile(scen, []byte(`version: 1
serve:
  tasks:
    - match: ""
      steps:
        - approval: {kind: shell_command, command: "go test ./..."}
          deny: [{fail: "go test was denied"}]
      result: {succeeded: true, lastAgent: coder, lastMessage: "tests pass"}
`), 0o600)
	for _, tc := range []struct {
		policy    string
		succeeded bool
	}{{"deny", false}, {"allow", true}} {
		t.Run(tc.policy, func(t *testing.T) {
			d := startDaemon(t, "", map[string]string{"FRSIM_SCENARIO": scen}, "--tokens-file", "testdata/tokens",
				"--unattended-policy", tc.policy)
			defer d.stop()
			s := mcpSession(t, d, "filetok")
			q, err := call(t, s, "dispatch_task", map[string]any{"task": "run the tests"})
			if err != nil || q["status"] != "queued" || !strings.HasPrefix(q["sessionId"].(string), "sim-") {
				t.Fatalf("dispatch_task: %v %v", q, err)
			}
			id := q["sessionId"].(string)
			deadline := time.Now().Add(testTimeout)
			for {
				st, err := call(t, s, "get_status", map[string]any{"sessionId": id})
				if err != nil {
					t.Fatal(err)
				}
				if st["status"] == "completed" || st["status"] == "failed" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the task never finished: %v", st)
				}
				time.Sleep(10 * time.Millisecond)
			}
			r, err := call(t, s, "get_result", map[string]any{"sessionId": id})
			if err != nil || r["succeeded"] != tc.succeeded {
				t.Fatalf("get_result with --unattended-policy %s: %v %v", tc.policy, r, err)
			}
			u, err := call(t, s, "get_status", map[string]any{"sessionId": "sim-nope"})
			if err != nil || u["status"] != "unknown" || !strings.Contains(u["error"].(string), "No task found for session 'sim-nope'") {
				t.Errorf("unknown id: %v %v", u, err)
			}
			ro := mcpSession(t, d, "readtok")
			if _, err := call(t, ro, "dispatch_task", map[string]any{"task": "x"}); err == nil {
				t.Error("a read token dispatched a task")
			}
			if st, err := call(t, ro, "get_status", map[string]any{"sessionId": id}); err != nil || st["status"] == "unknown" {
				t.Errorf("a read token cannot look the task up: %v %v", st, err)
			}
		})
	}
}
