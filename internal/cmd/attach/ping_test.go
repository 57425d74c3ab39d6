package attach

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

// A daemon that stops answering (it never reads, so never answers a ping) is noticed by the
// pings: the connection is dropped and, with no reconnects allowed, fr-attach exits 10.
func TestPingNoticesADeadPeer(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		hello := `{"type":"hello","protocolVersion":1,"clientId":"` + r.Header.Get("Fuseraft-Client-Id") +
			`","readOnly":false,"inFlight":null,"pendingResults":[]}`
		ws.Write(context.Background(), websocket.MessageText, []byte(hello))
		<-release // frozen: no reads, so no pongs
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/attach"
	var out, errb bytes.Buffer
	s := cmdutil.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	start := time.Now()
	go func() {
		done <- Run(context.Background(), s, []string{"fr-attach", "--url", url, "--ping-interval", "100ms", "--max-reconnects", "0"})
	}()
	select {
	case code := <-done:
		if code != cmdutil.ExitUnavailable {
			t.Errorf("exit %d, want 10; stderr:\n%s", code, errb.String())
		}
	case <-testkit.After(10 * time.Second):
		t.Fatal("a frozen daemon was not noticed")
	}
	if !strings.Contains(out.String(), `"type":"hello"`) {
		t.Errorf("stdout: %s", out.String())
	}
	if !strings.Contains(errb.String(), "gave up after 0 reconnect attempts") {
		t.Errorf("stderr: %s", errb.String())
	}
	// The cause in plain words, not the error of a read on the connection the pinger closed.
	if !strings.Contains(errb.String(), "(the daemon stopped answering: no pong within 100ms)") ||
		strings.Contains(errb.String(), "closed network connection") {
		t.Errorf("stderr does not say the daemon stopped answering pings: %s", errb.String())
	}
	if el := time.Since(start); el > testkit.Bound(5*time.Second) {
		t.Errorf("took %v to notice", el)
	}
}

// An interrupt (SIGINT or SIGTERM, here the context) ends fr-attach with 130 and no error text.
func TestInterruptedExits130(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.Write(context.Background(), websocket.MessageText,
			[]byte(`{"type":"hello","protocolVersion":1,"clientId":"x","readOnly":false,"inFlight":null,"pendingResults":[]}`))
		ws.Read(context.Background())
	}))
	defer srv.Close()
	pr, pw := io.Pipe()
	defer pw.Close()
	out := &testkit.SyncBuffer{}
	var errb bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	s := cmdutil.Streams{In: pr, Out: out, Err: &errb, Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, s, []string{"fr-attach", "--url", "ws" + strings.TrimPrefix(srv.URL, "http") + "/attach"})
	}()
	for deadline := time.Now().Add(testkit.Bound(10 * time.Second)); !strings.Contains(out.String(), "hello"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no hello")
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != cmdutil.ExitInterrupted || errb.Len() != 0 {
			t.Errorf("exit %d, stderr %q; want 130 and nothing", code, errb.String())
		}
	case <-testkit.After(10 * time.Second):
		t.Fatal("not interrupted")
	}
}
