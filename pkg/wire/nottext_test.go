package wire

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// A line that is not UTF-8 comes out of a Conn as Noise, never as an event; a prompt that is
// not UTF-8 is shown to the Gate and answered by the Conn itself, once, so the answer to the
// next prompt still goes to that one.
func TestConnAnswersPromptsNotText(t *testing.T) {
	fromDaemon, daemonW := io.Pipe()
	toDaemonR, toDaemon := io.Pipe()
	c := NewConn(fromDaemon, toDaemon, Options{Gate: NewGate(Serve)})
	defer c.Close()
	sent := bufio.NewScanner(toDaemonR)
	lines := make(chan string, 16)
	go func() {
		for sent.Scan() {
			lines <- sent.Text()
		}
	}()
	go func() {
		for _, l := range []string{
			`{"type":"hello","protocolVersion":1,"clientId":"c","readOnly":false,"inFlight":null,"pendingResults":[]}`,
			"{\"type\":\"token\",\"text\":\"\xff\xfe\xc3\"}",
			"{\"type\":\"approval_request\",\"kind\":\"shell_command\",\"command\":\"rm -rf \xff\"}",
			"{\"type\":\"question\",\"text\":\"which \xc3?\"}",
			`{"type":"approval_request","kind":"shell_command","command":"ls"}`,
		} {
			io.WriteString(daemonW, l+"\n")
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	want := []struct {
		kind Kind
		typ  string
	}{{EventLine, "hello"}, {Noise, ""}, {Noise, TypeApproval}, {Noise, TypeQuestion}, {EventLine, TypeApproval}}
	for i, w := range want {
		l, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if l.Kind != w.kind || l.Type != w.typ {
			t.Errorf("line %d: %v %q, want %v %q", i+1, l.Kind, l.Type, w.kind, w.typ)
		}
	}
	c.Send(Input{Line: ApprovalResponse(true), Type: TypeApprovalResponse}) // for "ls"
	c.Flush()
	var got []string
	for len(got) < 3 {
		select {
		case l := <-lines:
			got = append(got, l)
		case <-ctx.Done():
			t.Fatalf("sent only %q", got)
		}
	}
	wantSent := []string{string(ApprovalResponse(false)), string(QuestionResponse(nil)), string(ApprovalResponse(true))}
	if strings.Join(got, "\n") != strings.Join(wantSent, "\n") {
		t.Errorf("sent %q, want %q", got, wantSent)
	}
}
