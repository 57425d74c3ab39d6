package attach

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// helloServer is a daemon's /attach that says hello and runs one quick task.
func helloServer(t *testing.T, seen func(r *http.Request)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			seen(r)
		}
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := context.Background()
		ws.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","protocolVersion":1,"clientId":"r","readOnly":false,"inFlight":null,"pendingResults":[]}`))
		if _, msg, err := ws.Read(ctx); err == nil && strings.Contains(string(msg), "quick") {
			ws.Write(ctx, websocket.MessageText, []byte(`{"type":"queued","sessionId":"s1","position":0}`))
			ws.Write(ctx, websocket.MessageText, []byte(`{"type":"result","sessionId":"s1","task":"quick","succeeded":true,"errorMessage":null,"lastAgent":null,"lastMessage":null}`))
		}
		ws.Read(ctx)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func attachBounded(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	type res struct {
		code     int
		out, err string
	}
	done := make(chan res, 1)
	go func() {
		var out, errb bytes.Buffer
		s := cmdutil.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }}
		code := Run(context.Background(), s, append([]string{"fr-attach"}, args...))
		done <- res{code, out.String(), errb.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(60 * time.Second):
		t.Fatalf("fr-attach %q still running after 60s", args)
	}
	return 0, "", ""
}

// The handshake redirected to another origin (another port) is not followed: nothing reaches
// it, the token least of all, and fr-attach says why, exit 4, without reconnecting.
func TestRedirectToAnotherOrigin(t *testing.T) {
	var reached atomic.Int32
	other := helloServer(t, func(*http.Request) { reached.Add(1) })
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/attach", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	env := map[string]string{"FUSERAFT_SERVE_TOKEN": "s3cret-token"}
	url := "ws" + strings.TrimPrefix(redirector.URL, "http") + "/attach"
	code, out, errs := attachBounded(t, env, "--url", url, "--task", "quick", "--exit-on-result", "--max-reconnects", "3")
	if code != cmdutil.ExitRefused || !strings.Contains(errs, "another origin") || !strings.Contains(errs, other.URL) {
		t.Errorf("exit %d, want 4; stdout %q stderr %q", code, out, errs)
	}
	if strings.Contains(errs, "reconnecting") || strings.Contains(out+errs, "s3cret-token") {
		t.Errorf("stderr %q", errs)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other origin got %d handshakes", n)
	}
}

// A redirect within the daemon's origin is followed, with the token.
func TestRedirectWithinOrigin(t *testing.T) {
	var auth atomic.Value
	inner := helloServer(t, func(r *http.Request) { auth.Store(r.Header.Get("Authorization")) }).Config.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/attach", http.StatusTemporaryRedirect)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/old"
	code, out, errs := attachBounded(t, map[string]string{"FUSERAFT_SERVE_TOKEN": "s3cret"}, "--url", url, "--task", "quick", "--exit-on-result")
	if code != 0 || !strings.Contains(out, `"type":"result"`) {
		t.Errorf("exit %d; stdout %q stderr %q", code, out, errs)
	}
	if a, _ := auth.Load().(string); a != "Bearer s3cret" {
		t.Errorf("Authorization after the redirect: %q", a)
	}
}

// A password in --url is shown masked wherever the URL is printed: a refused connection, the
// reconnect lines, giving up, a bad URL.
func TestURLPasswordMasked(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, args := range [][]string{
		{"--url", "ws://user:pa55word@" + addr + "/attach?token=t0ken", "--max-reconnects", "2", "--max-backoff", "100ms"},
		{"--url", "ws://user:pa55word@" + addr + "/attach", "--give-up-after", "300ms", "--max-backoff", "100ms"},
		{"--url", "http://user:pa55word@" + addr + "/attach"},
		{"--url", "ws://user:pa55word@[::1"},
	} {
		code, _, errs := attachBounded(t, nil, args...)
		if code == 0 || strings.Contains(errs, "pa55word") || strings.Contains(errs, "t0ken") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errs)
		}
		if !strings.Contains(errs, "user:xxxxx@") {
			t.Errorf("%q: stderr %q does not name the URL, masked", args, errs)
		}
	}
}
