package wire_test

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/pkg/wire"
)

const helloLine = `{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}`

// wsDaemon is a WebSocket daemon on loopback: serve handles its n-th connection (from 1), whose
// handshake it may refuse. It returns the ws:// URL of /attach.
func wsDaemon(t *testing.T, serve func(w http.ResponseWriter, r *http.Request, n int)) string {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serve(w, r, int(conns.Add(1)))
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/attach"
}

// accept completes the handshake and says hello.
func accept(t *testing.T, w http.ResponseWriter, r *http.Request) *websocket.Conn {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		t.Error(err)
		return nil
	}
	if err := ws.Write(r.Context(), websocket.MessageText, []byte(helloLine)); err != nil {
		t.Error(err)
	}
	return ws
}

// next returns the type of the next line, or the error that ended the Conn.
func next(t *testing.T, ctx context.Context, c *wire.Conn) (string, error) {
	t.Helper()
	l, err := c.Next(ctx)
	return l.Type, err
}

// A client's token and id go in the handshake (and no Origin, which the daemon refuses); lines
// go both ways once hello has come.
func TestDialWebSocket(t *testing.T) {
	got := make(chan string, 1)
	url := wsDaemon(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("Fuseraft-Client-Id") != "ci-7" || r.Header.Get("Origin") != "" {
			t.Errorf("handshake headers: %v", r.Header)
		}
		ws := accept(t, w, r)
		defer ws.CloseNow()
		ws.Write(r.Context(), websocket.MessageText, []byte(`{"type":"agent_starting","agent":"coder"}`+"\r\n"))
		_, msg, err := ws.Read(r.Context())
		if err == nil {
			got <- string(msg)
		}
		ws.Close(websocket.StatusNormalClosure, "")
	})
	ctx := testkit.Context(t, testkit.Hang)
	c, err := wire.Dial(ctx, wire.Daemon{URL: url, Token: "s3cret", ClientID: "ci-7", Ping: time.Minute, MaxReconnects: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, want := range []string{wire.TypeHello, wire.TypeAgentStarting} {
		if typ, err := next(t, ctx, c); typ != want || err != nil {
			t.Fatalf("got %q, %v; want %s", typ, err, want)
		}
	}
	if !c.Connected() {
		t.Error("not connected after hello")
	}
	if c.Gate().ReadOnly() {
		t.Error("read-only after a hello that says it is not")
	}
	c.Send(wire.Input{Line: []byte(`{"type":"task","text":"build"}`)})
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case msg := <-got:
		if msg != `{"type":"task","text":"build"}` {
			t.Errorf("the daemon read %q", msg)
		}
	case <-testkit.After(testkit.Hang):
		t.Fatal("the daemon read nothing")
	}
	_, err = next(t, ctx, c)
	var gu *wire.GaveUpError
	if !errors.As(err, &gu) || gu.Attempts != 0 || !strings.Contains(err.Error(), "the daemon closed the connection (status 1000)") {
		t.Fatalf("after a normal close with no reconnects: %v", err)
	}
}

// A refused handshake is an error at once, saying what the daemon answered.
func TestDialRefused(t *testing.T) {
	cases := []struct {
		status int
		body   string
		auth   bool
		want   string
	}{
		{401, "bad token", true, "the daemon refused the connection: 401 Unauthorized: bad token"},
		{403, "", true, "the daemon refused the connection: 403 Forbidden"},
		{400, "invalid client id", false, "the daemon rejected the handshake: 400 Bad Request: invalid client id"},
		{404, "no such page", false, "the daemon answered the WebSocket handshake with 404 Not Found"},
	}
	for _, tc := range cases {
		url := wsDaemon(t, func(w http.ResponseWriter, r *http.Request, n int) {
			http.Error(w, tc.body, tc.status)
		})
		_, err := wire.Dial(testkit.Context(t, testkit.Hang), wire.Daemon{URL: url})
		var ae *wire.AuthError
		var he *wire.HandshakeError
		switch {
		case err == nil:
			t.Fatalf("%d: no error", tc.status)
		case tc.auth && (!errors.As(err, &ae) || ae.Status != tc.status):
			t.Errorf("%d: %T %v, want an *AuthError", tc.status, err, err)
		case !tc.auth && (!errors.As(err, &he) || he.Status != tc.status):
			t.Errorf("%d: %T %v, want a *HandshakeError", tc.status, err, err)
		case err.Error() != tc.want:
			t.Errorf("%d: %q, want %q", tc.status, err, tc.want)
		}
	}
}

// A dropped connection is dialled again, and the lines of the new one follow those of the old.
func TestReconnectAfterDrop(t *testing.T) {
	url := wsDaemon(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n > 2 {
			http.Error(w, "stopped", http.StatusServiceUnavailable)
			return
		}
		ws := accept(t, w, r)
		if n == 1 {
			ws.Close(websocket.StatusGoingAway, "restarting")
			return
		}
		ws.Write(r.Context(), websocket.MessageText, []byte(`{"type":"agent_starting","agent":"second"}`))
		ws.Close(websocket.StatusNormalClosure, "")
	})
	type try struct {
		attempt int
		lost    string
	}
	var mu sync.Mutex
	var tries []try
	ctx := testkit.Context(t, testkit.Hang)
	c, err := wire.Dial(ctx, wire.Daemon{URL: url, MaxBackoff: time.Millisecond, MaxReconnects: 1,
		Reconnecting: func(attempt int, wait time.Duration, lost error) {
			mu.Lock()
			tries = append(tries, try{attempt, lost.Error()})
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, want := range []string{wire.TypeHello, wire.TypeHello, wire.TypeAgentStarting} {
		if typ, err := next(t, ctx, c); typ != want || err != nil {
			t.Fatalf("got %q, %v; want %s", typ, err, want)
		}
	}
	// A daemon that answers the handshake with anything but 101, 401 or 403 is not dialled again.
	_, err = next(t, ctx, c)
	var he *wire.HandshakeError
	if !errors.As(err, &he) || he.Status != http.StatusServiceUnavailable {
		t.Fatalf("end: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tries) != 2 || tries[0] != (try{1, "the daemon closed the connection: restarting (status 1001)"}) ||
		tries[1] != (try{1, "the daemon closed the connection (status 1000)"}) {
		t.Fatalf("reconnect attempts: %+v", tries)
	}
}

// A newer connection with the client's id ends the Conn: it does not dial again (the two
// clients would take turns forever).
func TestReplacedDoesNotReconnect(t *testing.T) {
	var conns atomic.Int64
	url := wsDaemon(t, func(w http.ResponseWriter, r *http.Request, n int) {
		conns.Add(1)
		ws := accept(t, w, r)
		ws.Close(4001, "replaced by a newer connection")
	})
	ctx := testkit.Context(t, testkit.Hang)
	c, err := wire.Dial(ctx, wire.Daemon{URL: url, ClientID: "me", MaxBackoff: time.Millisecond, MaxReconnects: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	next(t, ctx, c)
	if _, err := next(t, ctx, c); !errors.Is(err, wire.ErrReplaced) {
		t.Fatalf("got %v, want ErrReplaced", err)
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
}

// The same refusal twice in a row (a token that was revoked) ends the Conn with it.
func TestReconnectStopsOnTheSameRefusalTwice(t *testing.T) {
	url := wsDaemon(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			ws := accept(t, w, r)
			ws.Close(websocket.StatusGoingAway, "restarting")
			return
		}
		http.Error(w, "token revoked", http.StatusUnauthorized)
	})
	var attempts atomic.Int64
	ctx := testkit.Context(t, testkit.Hang)
	c, err := wire.Dial(ctx, wire.Daemon{URL: url, MaxBackoff: time.Millisecond, MaxReconnects: -1,
		Reconnecting: func(int, time.Duration, error) { attempts.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	next(t, ctx, c)
	_, err = next(t, ctx, c)
	var ae *wire.AuthError
	if !errors.As(err, &ae) || ae.Body != "token revoked" {
		t.Fatalf("got %v, want the refusal", err)
	}
	if n := attempts.Load(); n != 2 {
		t.Fatalf("%d attempts, want 2", n)
	}
}

// A daemon that is gone is given GiveUpAfter, then the Conn says for how long it tried.
func TestGiveUpAfter(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write([]byte(helloLine + "\n"))
		ln.Close() // no one answers again
		c.Close()
	}()
	ctx := testkit.Context(t, testkit.Hang)
	c, err := wire.Dial(ctx, wire.Daemon{Socket: sock, MaxBackoff: 5 * time.Millisecond, MaxReconnects: -1, GiveUpAfter: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	next(t, ctx, c)
	_, err = next(t, ctx, c)
	var gu *wire.GaveUpError
	if !errors.As(err, &gu) || gu.After != 50*time.Millisecond {
		t.Fatalf("got %v", err)
	}
	if want := "no connection to " + sock + " for 50ms; gave up after "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%q does not start with %q", err, want)
	}
	if errors.Unwrap(err) == nil {
		t.Error("the error does not say what was lost")
	}
}

// A daemon whose socket path is too long for AF_UNIX is an error before any connection.
func TestDialSocketPathTooLong(t *testing.T) {
	long := "/tmp/" + strings.Repeat("x", wire.MaxSocketPath())
	_, err := wire.Dial(context.Background(), wire.Daemon{Socket: long})
	var se *wire.SocketPathError
	if !errors.As(err, &se) || se.Path != long {
		t.Fatalf("got %v", err)
	}
}

// A daemon that stops answering pings is noticed, and the Conn says so.
func TestPingWithoutPong(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	url := wsDaemon(t, func(w http.ResponseWriter, r *http.Request, n int) {
		ws := accept(t, w, r)
		defer ws.CloseNow()
		// It never reads again, so it never answers a ping.
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	ctx := testkit.Context(t, testkit.Hang)
	c, err := wire.Dial(ctx, wire.Daemon{URL: url, Ping: 20 * time.Millisecond, MaxReconnects: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	next(t, ctx, c)
	_, err = next(t, ctx, c)
	if err == nil || !strings.Contains(err.Error(), "the daemon stopped answering: no pong within 20ms") {
		t.Fatalf("got %v", err)
	}
}

// Pings answered in time keep the connection: lines go on arriving after many intervals.
func TestPingWithPongs(t *testing.T) {
	url := wsDaemon(t, func(w http.ResponseWriter, r *http.Request, n int) {
		ws := accept(t, w, r)
		defer ws.CloseNow()
		ctx := ws.CloseRead(r.Context()) // reads, so pongs are sent
		for i := 0; i < 5; i++ {
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			ws.Write(ctx, websocket.MessageText, []byte(`{"type":"agent_starting","agent":"coder"}`))
		}
		ws.Close(websocket.StatusNormalClosure, "")
	})
	ctx := testkit.Context(t, testkit.Hang)
	c, err := wire.Dial(ctx, wire.Daemon{URL: url, Ping: 5 * time.Millisecond, MaxReconnects: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := 0
	for {
		typ, err := next(t, ctx, c)
		if err != nil {
			// A slow machine may miss a pong: then the error says so. Else all 6 lines came.
			if !strings.Contains(err.Error(), "no pong") && n != 6 {
				t.Fatalf("after %d lines: %v", n, err)
			}
			return
		}
		if n++; n == 1 && typ != wire.TypeHello {
			t.Fatalf("first line %q", typ)
		}
	}
}

// A daemon whose first line is not hello broke the protocol.
func TestFirstLineNotHello(t *testing.T) {
	sock := oneConnDaemon(t, func(c net.Conn) {
		c.Write([]byte(`{"type":"ready","protocolVersion":1}` + "\r\nmore\n"))
		c.Read(make([]byte, 1))
	})
	ctx := testkit.Context(t, testkit.Hang)
	c, err := wire.Dial(ctx, wire.Daemon{Socket: sock})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = next(t, ctx, c)
	var pe *wire.ProtocolError
	if !errors.As(err, &pe) || pe.Seen != `{"type":"ready","protocolVersion":1}` {
		t.Fatalf("got %v", err)
	}
}

// A daemon that accepts and never says hello is given HelloTimeout.
func TestNoHello(t *testing.T) {
	sock := oneConnDaemon(t, func(c net.Conn) {
		c.Read(make([]byte, 1)) // until the client gives up
	})
	ctx := testkit.Context(t, testkit.Hang)
	c, err := wire.Dial(ctx, wire.Daemon{Socket: sock, HelloTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = next(t, ctx, c)
	var nh *wire.NoHelloError
	if !errors.As(err, &nh) || err.Error() != sock+" accepted the connection but sent no hello within 20ms" {
		t.Fatalf("got %v", err)
	}
}

// LoadCA trusts a daemon's own certificate for wss://, and says what is wrong with a file
// that holds none.
func TestLoadCA(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws := accept(t, w, r)
		ws.Close(websocket.StatusNormalClosure, "")
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused certificate below
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := wire.LoadCA(ca)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion < tls.VersionTLS12 {
		t.Errorf("TLS below 1.2 allowed")
	}
	url := "wss" + strings.TrimPrefix(srv.URL, "https") + "/attach"
	ctx := testkit.Context(t, testkit.Hang)
	c, err := wire.Dial(ctx, wire.Daemon{URL: url, TLS: cfg, MaxReconnects: 0})
	if err != nil {
		t.Fatal(err)
	}
	if typ, err := next(t, ctx, c); typ != wire.TypeHello {
		t.Fatalf("got %q, %v", typ, err)
	}
	c.Close()
	// Without the CA the certificate is not trusted.
	if _, err := wire.Dial(ctx, wire.Daemon{URL: url}); err == nil {
		t.Error("an unknown certificate was trusted")
	}

	notPEM := filepath.Join(dir, "not.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o600)
	if _, err := wire.LoadCA(notPEM); err == nil || err.Error() != notPEM+" holds no PEM certificate" {
		t.Errorf("got %v", err)
	}
	if _, err := wire.LoadCA(filepath.Join(dir, "missing.pem")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v", err)
	}
}

// The daemon's name in messages is its URL, else its socket.
func TestDaemonString(t *testing.T) {
	var d *wire.Daemon
	for _, tc := range []struct {
		d    *wire.Daemon
		want string
	}{
		{d, "fuseraft"},
		{&wire.Daemon{URL: "ws://h:1/attach", Socket: "/s"}, "ws://h:1/attach"},
		{&wire.Daemon{Socket: "/run/d.sock"}, "/run/d.sock"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// oneConnDaemon listens on a Unix socket for the test's length and serves its first
// connection with serve, then closes it; it returns the socket's path.
func oneConnDaemon(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		serve(c)
	}()
	return sock
}
