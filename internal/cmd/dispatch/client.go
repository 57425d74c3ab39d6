package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/humanize"
	"github.com/fuseraft/fr/pkg/wire"
)

// The daemon's MCP tools (fuseraft serve; see the protocol page's last paragraph).
const (
	toolDispatch = "dispatch_task"
	toolStatus   = "get_status"
	toolResult   = "get_result"
)

// maxAnswer bounds each HTTP answer the daemon gives: a larger one is a breach of the
// contract (exit 3), not something to hold in memory. A variable so that tests can lower it.
var maxAnswer int64 = 64 << 20

// client calls the daemon's MCP tools over streamable HTTP.
type client struct {
	sess    *mcp.ClientSession
	guard   *guard
	url     string // redacted, for messages
	timeout time.Duration
}

// guard is the HTTP transport under the MCP client: it adds the token to requests for the
// daemon's own origin only, bounds each answer to maxAnswer bytes, and tells each call
// (through its request's context) what became of its requests, so that the call's error
// gets the right exit code whatever the SDK makes of it.
type guard struct {
	next     http.RoundTripper
	token    string
	endpoint *url.URL
	limit    int64
	refused  atomic.Int32 // the last 401 or 403
}

func (g *guard) RoundTrip(r *http.Request) (*http.Response, error) {
	if g.token != "" && wire.SameOrigin(r.URL, g.endpoint) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+g.token)
	}
	tk := trackOf(r.Context())
	resp, err := g.next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		g.refused.Store(int32(resp.StatusCode))
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		tk.answered.Store(true)
	}
	resp.Body = &limitedBody{rc: resp.Body, limit: g.limit, tk: tk}
	return resp, nil
}

// track is what one call learned of its HTTP requests.
type track struct {
	answered atomic.Bool // the daemon answered a request with a 2xx status
	mu       sync.Mutex
	bad      error // an answer over the limit, a redirect not followed
}

func (t *track) fail(err error) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bad == nil {
		t.bad = err
	}
}

func (t *track) err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bad
}

type trackKey struct{}

// trackOf returns the track of the call that made a request, or nil.
func trackOf(ctx context.Context) *track {
	t, _ := ctx.Value(trackKey{}).(*track)
	return t
}

// errTooLarge is an answer larger than the limit.
type errTooLarge struct{ limit int64 }

func (e *errTooLarge) Error() string {
	return fmt.Sprintf("the daemon's answer is larger than %s", humanize.Bytes(int(e.limit)))
}

// limitedBody is an answer's body that fails once it has given more than limit bytes.
type limitedBody struct {
	rc    io.ReadCloser
	limit int64
	n     int64
	tk    *track
	err   error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if left := b.limit - b.n + 1; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.rc.Read(p)
	b.n += int64(n)
	if b.n > b.limit {
		b.err = &errTooLarge{b.limit}
		b.tk.fail(b.err)
		return n - int(b.n-b.limit), b.err
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// endpoint turns what the user gave into the MCP endpoint: an http(s) URL as it is (with /mcp
// added when it has no path), or the WebSocket URL fr-attach takes (ws://HOST:PORT/attach),
// whose server also serves /mcp.
func endpoint(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", cmdutil.Usagef("--url %q is not a URL like http://127.0.0.1:PORT/mcp", wire.RedactURL(raw))
	}
	switch u.Scheme {
	case "http", "https":
	case "ws":
		u.Scheme, u.Path = "http", "/mcp"
	case "wss":
		u.Scheme, u.Path = "https", "/mcp"
	default:
		return "", cmdutil.Usagef("--url %q: the scheme must be http, https, ws or wss", wire.RedactURL(raw))
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/mcp"
	}
	return u.String(), nil
}

func connect(ctx context.Context, o *options) (*client, error) {
	u, err := url.Parse(o.url)
	if err != nil {
		return nil, cmdutil.Usagef("--url: %v", err)
	}
	hc := wire.HTTPClient(o.tls)
	g := &guard{next: hc.Transport, token: o.token, endpoint: u, limit: maxAnswer}
	hc.Transport = g
	checkRedirect := hc.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		err := checkRedirect(req, via)
		if err != nil {
			trackOf(req.Context()).fail(err)
		}
		return err
	}
	tr := &mcp.StreamableClientTransport{
		Endpoint:             o.url,
		HTTPClient:           hc,
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
		MaxEventSize:         int(maxAnswer),
	}
	cl := &client{guard: g, url: wire.RedactURL(o.url), timeout: o.requestTimeout}
	c := mcp.NewClient(&mcp.Implementation{Name: prog, Version: cmdutil.VersionString()}, nil)
	cctx, tk, cancel := cl.request(ctx)
	defer cancel()
	sess, err := c.Connect(cctx, tr, nil)
	if err != nil {
		if sess != nil {
			sess.Close()
		}
		return nil, cl.explain(ctx, tk, "", err)
	}
	cl.sess = sess
	return cl, nil
}

// request returns the context of one request to the daemon: bounded by --request-timeout,
// and carrying the track its HTTP requests report to.
func (c *client) request(ctx context.Context) (context.Context, *track, context.CancelFunc) {
	tk := &track{}
	ctx = context.WithValue(ctx, trackKey{}, tk)
	if c.timeout > 0 {
		ctx, cancel := context.WithTimeout(ctx, c.timeout)
		return ctx, tk, cancel
	}
	ctx, cancel := context.WithCancel(ctx)
	return ctx, tk, cancel
}

func (c *client) close() {
	if c.sess != nil {
		c.sess.Close()
	}
}

// explain maps a failed request to fr's exit codes: 4 refused (a 401 or 403, a redirect to
// another origin), 3 an answer that breaks the contract (the daemon answered, but not with
// what MCP says: cut off, not a JSON-RPC object, too large), 10 nothing answers (no
// connection, or no answer within --request-timeout). ctx is the caller's, not the request's:
// its end (Ctrl-C, wait's --timeout) passes through as it is. tool is the tool called, ""
// while connecting.
func (c *client) explain(ctx context.Context, tk *track, tool string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	switch code := c.guard.refused.Load(); code {
	case http.StatusUnauthorized:
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitRefused, "the daemon at %s refused the token (401)", c.url),
			"set FUSERAFT_SERVE_TOKEN or pass --token-file with the daemon's token")
	case http.StatusForbidden:
		return cmdutil.Errorf(cmdutil.ExitRefused, "the daemon at %s refused the request (403)", c.url)
	}
	what := "the daemon's MCP endpoint " + c.url
	if tool != "" {
		what = tool + " at " + c.url
	}
	bad := tk.err()
	var re *wire.RedirectError
	var tl *errTooLarge
	switch {
	case errors.As(bad, &re) || errors.As(err, &re):
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitRefused, "%v", re),
			"pass the daemon's own URL with --url (fr-dispatch follows redirects within one origin only)")
	case errors.As(bad, &tl):
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitProtocol, "%s: %v", what, tl),
			"is --url the MCP endpoint of 'fuseraft serve'?")
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		e := cmdutil.Errorf(cmdutil.ExitUnavailable, "%s: no answer within %s (--request-timeout)", what, c.timeout)
		if tool == toolDispatch {
			return cmdutil.WithHint(e, "the daemon may have queued the task even so: look for it with 'fr-dispatch status' before dispatching it again")
		}
		return cmdutil.WithHint(e, "is the daemon busy or stuck? raise --request-timeout to wait longer")
	case tk.answered.Load():
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitProtocol, "%s: the answer breaks the MCP contract: %v", what, redactErr(err)),
			"is --url the MCP endpoint of 'fuseraft serve'?")
	}
	if msg := err.Error(); strings.Contains(msg, "x509: ") || strings.Contains(msg, "tls: ") {
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUnavailable, "cannot connect to %s: %v", c.url, redactErr(err)),
			"pass --ca-cert FILE with the certificate that signed the daemon's")
	}
	var op *net.OpError
	if errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused") {
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUnavailable, "nothing answers at %s: %v", c.url, redactErr(err)),
			"is fuseraft serve running? its MCP port is the one it prints at start-up (--url http://127.0.0.1:PORT/mcp)")
	}
	return cmdutil.Errorf(cmdutil.ExitUnavailable, "%s: %v", what, redactErr(err))
}

// redactErr is an error whose text may quote a URL, with any password in it masked.
func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = wire.RedactURL(ue.URL)
	}
	return err
}

// call calls a tool and returns its result as one compact JSON object, keeping the daemon's
// field order: the tool's JSON text content, else its structured content.
func (c *client) call(ctx context.Context, tool string, args map[string]any) ([]byte, error) {
	rctx, tk, cancel := c.request(ctx)
	defer cancel()
	res, err := c.sess.CallTool(rctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, c.explain(ctx, tk, tool, err)
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
	// Limit is the limit that stopped a fleet's task (its record's "limit"): exit 6.
	Limit string `json:"limit"`
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
