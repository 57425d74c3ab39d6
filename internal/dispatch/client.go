package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// The daemon's MCP tools (fuseraft serve; see the protocol page's last paragraph).
const (
	toolDispatch = "dispatch_task"
	toolStatus   = "get_status"
	toolResult   = "get_result"
)

// client calls the daemon's MCP tools over streamable HTTP.
type client struct {
	sess   *mcp.ClientSession
	status *statusTap
	url    string
}

// statusTap remembers the last HTTP status that refused us, so that a 401 or 403 becomes
// exit 4 whatever the SDK makes of it.
type statusTap struct {
	next    http.RoundTripper
	token   string
	refused atomic.Int32
}

func (s *statusTap) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.next.RoundTrip(r)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		s.refused.Store(int32(resp.StatusCode))
	}
	return resp, err
}

// endpoint turns what the user gave into the MCP endpoint: an http(s) URL as it is (with /mcp
// added when it has no path), or the WebSocket URL fr-attach takes (ws://HOST:PORT/attach),
// whose server also serves /mcp.
func endpoint(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", cmdutil.Usagef("--url %q is not a URL like http://127.0.0.1:PORT/mcp", raw)
	}
	switch u.Scheme {
	case "http", "https":
	case "ws":
		u.Scheme, u.Path = "http", "/mcp"
	case "wss":
		u.Scheme, u.Path = "https", "/mcp"
	default:
		return "", cmdutil.Usagef("--url %q: the scheme must be http, https, ws or wss", raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/mcp"
	}
	return u.String(), nil
}

func connect(ctx context.Context, endpointURL, token string) (*client, error) {
	tap := &statusTap{next: http.DefaultTransport, token: token}
	tr := &mcp.StreamableClientTransport{
		Endpoint:             endpointURL,
		HTTPClient:           &http.Client{Transport: tap},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}
	c := mcp.NewClient(&mcp.Implementation{Name: prog, Version: cmdutil.VersionString()}, nil)
	sess, err := c.Connect(ctx, tr, nil)
	cl := &client{sess: sess, status: tap, url: endpointURL}
	if err != nil {
		return nil, cl.explain(err)
	}
	return cl, nil
}

func (c *client) close() {
	if c.sess != nil {
		c.sess.Close()
	}
}

// explain maps a failure to reach the daemon to fr's exit codes: 4 refused, 10 nothing
// answers.
func (c *client) explain(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	switch code := c.status.refused.Load(); code {
	case http.StatusUnauthorized:
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitRefused, "the daemon at %s refused the token (401)", c.url),
			"set FUSERAFT_SERVE_TOKEN or pass --token-file with the daemon's token")
	case http.StatusForbidden:
		return cmdutil.Errorf(cmdutil.ExitRefused, "the daemon at %s refused the request (403)", c.url)
	}
	var op *net.OpError
	if errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused") {
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUnavailable, "nothing answers at %s: %v", c.url, err),
			"is fuseraft serve running? its MCP port is the one it prints at start-up (--url http://127.0.0.1:PORT/mcp)")
	}
	return cmdutil.Errorf(cmdutil.ExitUnavailable, "the daemon's MCP endpoint %s: %v", c.url, err)
}

// call calls a tool and returns its result as one compact JSON object, keeping the daemon's
// field order: the tool's JSON text content, else its structured content.
func (c *client) call(ctx context.Context, tool string, args map[string]any) ([]byte, error) {
	res, err := c.sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, c.explain(err)
	}
	var text string
	for _, ct := range res.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			text += t.Text
		}
	}
	if res.IsError {
		return nil, cmdutil.Errorf(cmdutil.ExitFailed, "%s: %s", tool, strings.TrimSpace(text))
	}
	var buf bytes.Buffer
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") && json.Compact(&buf, []byte(t)) == nil {
		return buf.Bytes(), nil
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err == nil && bytes.HasPrefix(b, []byte("{")) {
			return b, nil
		}
	}
	return nil, cmdutil.Errorf(cmdutil.ExitProtocol, "%s returned no JSON object: %q", tool, cmdutil.FirstLine(text))
}

// withSessionID puts "sessionId" first in obj when the daemon left it out (get_status and
// get_result do), so that every line names its task.
func withSessionID(obj []byte, id string) []byte {
	if _, ok := wire.TopLevelString(obj, "sessionId"); ok {
		return obj
	}
	idJSON, _ := json.Marshal(id)
	rest := bytes.TrimSpace(obj[1:])
	out := append([]byte(`{"sessionId":`), idJSON...)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// taskState is what get_status and get_result say of a task.
type taskState struct {
	Status    string `json:"status"`
	Succeeded *bool  `json:"succeeded"`
	Error     string `json:"error"`
	ErrorMsg  string `json:"errorMessage"`
}

func decodeState(obj []byte) (taskState, error) {
	var st taskState
	if err := json.Unmarshal(obj, &st); err != nil {
		return st, cmdutil.Errorf(cmdutil.ExitProtocol, "cannot read the daemon's answer %s: %v", obj, err)
	}
	return st, nil
}

// finished reports whether a status is final: completed, failed, or unknown (no such task).
func finished(status string) bool {
	switch status {
	case "completed", "failed", "unknown":
		return true
	}
	return false
}

func (st taskState) ok() bool {
	return st.Status == "completed" && (st.Succeeded == nil || *st.Succeeded)
}

func (st taskState) why() string {
	switch {
	case st.Error != "":
		return st.Error
	case st.ErrorMsg != "":
		return st.ErrorMsg
	}
	return fmt.Sprintf("status %s", st.Status)
}
