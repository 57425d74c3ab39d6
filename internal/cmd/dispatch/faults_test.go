package dispatch

import (
	"bytes"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// runBounded is run for a command that must end by itself: a hang fails the test after a
// bound only a hang reaches, instead of hanging it.
func runBounded(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- runDispatch(t, env, "", args...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(60 * time.Second):
		t.Fatalf("fr-dispatch %q still running after 60s", args)
	}
	return result{}
}

// front serves the fake daemon through a proxy on another loopback port: handle sees each
// request first, and answers it itself when it returns true. It returns the proxy's URL.
func front(t *testing.T, f *fakeDaemon, handle func(w http.ResponseWriter, r *http.Request) bool) string {
	t.Helper()
	target, _ := url.Parse(f.srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !handle(w, r) {
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// faulty serves the fake daemon's MCP endpoint through a proxy that answers every tools/call
// with fault (initialize and the rest go through), on another loopback port.
func faulty(t *testing.T, f *fakeDaemon, fault http.HandlerFunc) string {
	t.Helper()
	return front(t, f, func(w http.ResponseWriter, r *http.Request) bool {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			fault(w, r)
			return true
		}
		return false
	}) + "/mcp"
}

// A redirect to another origin (here another port of the same host) is not followed: the
// token is not sent there, nothing is dispatched there, and fr-dispatch says why, exit 4.
func TestRedirectToAnotherOrigin(t *testing.T) {
	var reached, withToken atomic.Int32
	f := newFake(t, 0, "")
	other := front(t, f, func(w http.ResponseWriter, r *http.Request) bool {
		reached.Add(1)
		if r.Header.Get("Authorization") != "" {
			withToken.Add(1)
		}
		return false
	})
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	env := map[string]string{"FUSERAFT_SERVE_TOKEN": "s3cret-token"}
	for _, cmd := range [][]string{{"task", "deploy"}, {"status", "sim-0001"}} {
		r := runBounded(t, env, append([]string{"--url", redirector.URL + "/mcp"}, cmd...)...)
		if r.code != cmdutil.ExitRefused {
			t.Errorf("%s: exit %d, want 4; stdout %q stderr %q", cmd[0], r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "another origin") || !strings.Contains(r.stderr, other) {
			t.Errorf("%s: stderr %q does not say where the redirect led and why it was not followed", cmd[0], r.stderr)
		}
		if r.stdout != "" || strings.Contains(r.stderr, "s3cret-token") {
			t.Errorf("%s: stdout %q stderr %q", cmd[0], r.stdout, r.stderr)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other origin got %d requests (%d with the token)", n, withToken.Load())
	}
	if len(f.tasks) != 0 {
		t.Errorf("tasks went to the other origin: %v", f.tasks)
	}
}

// A redirect within the daemon's origin is followed, with the token.
func TestRedirectWithinOrigin(t *testing.T) {
	f := newFake(t, 0, "s3cret")
	u := front(t, f, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
			return true
		}
		return false
	})
	r := runBounded(t, map[string]string{"FUSERAFT_SERVE_TOKEN": "s3cret"}, "--url", u+"/old", "task", "x")
	if r.code != 0 || !strings.Contains(r.stdout, `"status":"queued"`) {
		t.Errorf("exit %d, stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

// A daemon that accepts a request and never answers it: every command gives up after
// --request-timeout with exit 10, and says so.
func TestRequestTimeout(t *testing.T) {
	f := newFake(t, 0, "")
	stop := make(chan struct{})
	hang := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}
	calls := faulty(t, f, hang)
	t.Cleanup(func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
	})
	all := httptest.NewServer(http.HandlerFunc(hang))
	defer all.Close()
	defer close(stop) // before the servers close: they wait for their handlers
	for _, url := range []string{calls, all.URL + "/mcp"} {
		for _, cmd := range [][]string{{"task", "x"}, {"status", "sim-1"}, {"result", "sim-1"}} {
			r := runBounded(t, nil, append([]string{"--url", url, "--request-timeout", "300ms"}, cmd...)...)
			if r.code != cmdutil.ExitUnavailable || !strings.Contains(r.stderr, "no answer within 300ms") {
				t.Errorf("%s %s: exit %d, want 10; stderr %q", url, cmd[0], r.code, r.stderr)
			}
		}
	}
	r := runDispatch(t, nil, "", "--url", calls, "--request-timeout", "0s", "task", "x")
	if r.code != cmdutil.ExitUsage {
		t.Errorf("--request-timeout 0: exit %d %q", r.code, r.stderr)
	}
}

// An answer that is not what MCP says (cut off, not a JSON-RPC object) is exit 3: the daemon
// answered, and may have queued the task, so it is not "nothing answers" (10).
func TestBadAnswers(t *testing.T) {
	f := newFake(t, 0, "")
	for name, body := range map[string]string{
		"cut off":         `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"sessi`,
		"an array":        `[1,2,3]`,
		"not JSON":        `<html>oops</html>`,
		"sse cut off":     "",
		"sse not JSON":    "",
		"cut off, length": "",
	} {
		fault := func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		}
		switch name {
		case "sse cut off", "sse not JSON":
			data := `{"jsonrpc":"2.0","id":1,"res`
			if name == "sse not JSON" {
				data = `[1,2,3]`
			}
			fault = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "event: message\ndata: "+data+"\n\n")
			}
		case "cut off, length":
			fault = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", "500")
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{`)
			}
		}
		u := faulty(t, f, fault)
		for _, cmd := range [][]string{{"task", "x"}, {"status", "sim-1"}, {"wait", "sim-1"}, {"run", "x"}} {
			r := runBounded(t, nil, append([]string{"--url", u}, cmd...)...)
			if r.code != cmdutil.ExitProtocol {
				t.Errorf("%s, %s: exit %d, want 3; stderr %q", name, cmd[0], r.code, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("%s, %s: stdout %q", name, cmd[0], r.stdout)
			}
		}
	}
}

// An answer larger than the limit is read no further: exit 3 with a clear error.
func TestAnswerOverLimit(t *testing.T) {
	defer func(n int64) { maxAnswer = n }(maxAnswer)
	maxAnswer = 4096
	f := newFake(t, 0, "")
	for _, ct := range []string{"application/json", "text/event-stream"} {
		big := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 64<<10) + `"}]}}`
		u := faulty(t, f, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			if ct == "text/event-stream" {
				big = "event: message\ndata: " + big + "\n\n"
			}
			io.WriteString(w, big)
		})
		r := runBounded(t, nil, "--url", u, "task", "x")
		if r.code != cmdutil.ExitProtocol || !strings.Contains(r.stderr, "larger than") {
			t.Errorf("%s: exit %d, want 3; stderr %q", ct, r.code, r.stderr)
		}
	}
	// an answer within the limit goes through
	r := runBounded(t, nil, "--url", f.url(), "task", "x")
	if r.code != 0 {
		t.Errorf("a small answer: exit %d %q", r.code, r.stderr)
	}
}

// A password in --url is never printed.
func TestURLPasswordNotPrinted(t *testing.T) {
	f := newFake(t, 0, "s3cret")
	u, _ := url.Parse(f.url())
	u.User = url.UserPassword("user", "pa55word")
	closed := httptest.NewServer(http.NotFoundHandler())
	dead, _ := url.Parse(closed.URL + "/mcp")
	closed.Close()
	dead.User = url.UserPassword("user", "pa55word")
	for _, args := range [][]string{
		{"--url", u.String(), "task", "x"}, // 401
		{"--url", dead.String(), "task", "x"},
		{"--url", dead.String() + "?token=t0ken", "status", "x"},
		{"--url", "http://user:pa55word@[::1", "task", "x"},
		{"--url", "ftp://user:pa55word@host/", "task", "x"},
	} {
		r := runBounded(t, nil, args...)
		if r.code == 0 || strings.Contains(r.stderr, "pa55word") || strings.Contains(r.stderr, "t0ken") {
			t.Errorf("%q: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// --ca-cert trusts the daemon's certificate over https://; without it the system roots refuse
// it, and the hint says what to pass.
func TestCACert(t *testing.T) {
	f := newFake(t, 0, "s3cret")
	target, _ := url.Parse(f.srv.URL)
	srv := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(target))
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)
	env := map[string]string{"FUSERAFT_SERVE_TOKEN": "s3cret"}
	r := runBounded(t, env, "--url", srv.URL+"/mcp", "--ca-cert", ca, "task", "x")
	if r.code != 0 || !strings.Contains(r.stdout, `"status":"queued"`) {
		t.Errorf("with --ca-cert: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = runBounded(t, env, "--url", srv.URL+"/mcp", "task", "x")
	if r.code != cmdutil.ExitUnavailable || !strings.Contains(r.stderr, "hint: pass --ca-cert FILE") {
		t.Errorf("without --ca-cert: exit %d %q", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"--url", srv.URL + "/mcp", "--ca-cert", filepath.Join(dir, "none.pem"), "task", "x"},
		{"--url", f.url(), "--ca-cert", ca, "task", "x"}, // http://
	} {
		if r := runDispatch(t, env, "", args...); r.code != cmdutil.ExitUsage {
			t.Errorf("%q: exit %d %q", args, r.code, r.stderr)
		}
	}
}
