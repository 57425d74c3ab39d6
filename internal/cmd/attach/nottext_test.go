package attach

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// Lines from the daemon that are not UTF-8 never reach stdout: they are dropped with a warning,
// and a prompt among them is denied by fr-attach itself, so the daemon still gets its answer.
func TestDaemonLinesNotText(t *testing.T) {
	answer := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := context.Background()
		send := func(s string) { ws.Write(ctx, websocket.MessageText, []byte(s)) }
		send(`{"type":"hello","protocolVersion":1,"clientId":"u","readOnly":false,"inFlight":null,"pendingResults":[]}`)
		if _, msg, err := ws.Read(ctx); err != nil || !strings.Contains(string(msg), "quick") {
			return
		}
		send(`{"type":"queued","sessionId":"s1","position":0}`)
		send("{\"type\":\"token\",\"text\":\"\xff\xfe\xc3\"}")
		send("{\"type\":\"approval_request\",\"kind\":\"shell_command\",\"command\":\"rm -rf \xff\"}")
		_, msg, err := ws.Read(ctx)
		if err != nil {
			return
		}
		answer <- string(msg)
		send(`{"type":"result","sessionId":"s1","task":"quick","succeeded":true,"errorMessage":null,"lastAgent":null,"lastMessage":null}`)
		ws.Read(ctx)
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/attach"
	code, out, errs := attachBounded(t, nil, "--url", url, "--task", "quick", "--exit-on-result")
	if code != 0 || !strings.Contains(out, `"type":"result"`) {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if !utf8.ValidString(out) || strings.Contains(out, "approval_request") || strings.Contains(out, `"token"`) {
		t.Errorf("stdout carries the lines that are not UTF-8: %q", out)
	}
	if !strings.Contains(errs, "not JSON (or not UTF-8)") || !strings.Contains(errs, "prompt (approval_request) that is not UTF-8 text; denied it") {
		t.Errorf("stderr %q", errs)
	}
	select {
	case a := <-answer:
		if a != `{"type":"approval_response","approved":false}` {
			t.Errorf("the daemon got %q", a)
		}
	default:
		t.Error("the prompt got no answer")
	}
}
