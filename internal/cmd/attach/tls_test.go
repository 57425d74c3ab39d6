package attach

import (
	"bytes"
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// wss:// with --ca-cert trusts the daemon's certificate; without it the system roots refuse.
func TestWSSWithCACert(t *testing.T) {
	var sawOrigin, sawAuth string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawOrigin, sawAuth = r.Header.Get("Origin"), r.Header.Get("Authorization")
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := context.Background()
		ws.Write(ctx, websocket.MessageText, []byte(`{"type":"hello","protocolVersion":1,"clientId":"tls","readOnly":false,"inFlight":null,"pendingResults":[]}`))
		if _, msg, err := ws.Read(ctx); err == nil && strings.Contains(string(msg), "quick") {
			ws.Write(ctx, websocket.MessageText, []byte(`{"type":"queued","sessionId":"s1","position":0}`))
			ws.Write(ctx, websocket.MessageText, []byte(`{"type":"result","sessionId":"s1","task":"quick","succeeded":true,"errorMessage":null,"lastAgent":null,"lastMessage":null}`))
		}
		ws.Read(ctx)
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)
	tokenFile := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600)
	url := "wss" + strings.TrimPrefix(srv.URL, "https") + "/attach"

	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		s := cmdutil.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
		code := Run(context.Background(), s, append([]string{"fr-attach", "--url", url}, args...))
		return code, out.String(), errb.String()
	}
	code, out, errs := run("--ca-cert", ca, "--token-file", tokenFile, "--client-id", "tls", "--task", "quick", "--exit-on-result")
	if code != 0 || !strings.Contains(out, `"type":"result"`) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if sawOrigin != "" || sawAuth != "Bearer s3cret" {
		t.Errorf("headers: Origin %q, Authorization %q", sawOrigin, sawAuth)
	}
	if strings.Contains(out+errs, "s3cret") {
		t.Error("the token was printed")
	}
	code, _, errs = run("--task", "quick", "--exit-on-result")
	if code != cmdutil.ExitUnavailable || !strings.Contains(errs, "fr-attach: hint: pass --ca-cert FILE") {
		t.Errorf("without --ca-cert: exit %d, stderr: %s", code, errs)
	}
	code, _, errs = run("--ca-cert", tokenFile, "--task", "quick")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "holds no PEM certificate") {
		t.Errorf("a bad --ca-cert: exit %d, stderr: %s", code, errs)
	}
}
