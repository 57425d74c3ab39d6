package attach

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/pkg/wire"
)

// A listener on the Unix socket that accepts and never says hello is given up on after
// connectTimeout: exit 10, and the message names the socket.
func TestSocketWithoutHelloTimesOut(t *testing.T) {
	old := connectTimeout
	connectTimeout = 200 * time.Millisecond
	defer func() { connectTimeout = old }()

	dir, err := os.MkdirTemp("/tmp", "fra")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "mute.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent
		}
	}()

	var out, errb bytes.Buffer
	s := cmdutil.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	start := time.Now()
	go func() {
		done <- Run(context.Background(), s, []string{"fr-attach", "--socket", sock, "--task", "x", "--exit-on-result"})
	}()
	select {
	case code := <-done:
		if code != cmdutil.ExitUnavailable {
			t.Errorf("exit %d, want %d; stderr:\n%s", code, cmdutil.ExitUnavailable, errb.String())
		}
	case <-testkit.After(10 * time.Second):
		t.Fatal("fr-attach still waits for hello after 10s")
	}
	if d := time.Since(start); d > testkit.Bound(5*time.Second) {
		t.Errorf("took %s", d)
	}
	want := "fr-attach: error: " + sock + " accepted the connection but sent no hello within 200ms\n"
	if !strings.HasPrefix(errb.String(), want) {
		t.Errorf("stderr:\n%s\nwant it to start with:\n%s", errb.String(), want)
	}
	if out.Len() != 0 {
		t.Errorf("stdout: %q", out.String())
	}
}

// recordLink records the lines fr-attach sends.
type recordLink struct {
	mu    sync.Mutex
	lines []string
}

func (l *recordLink) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" {
			l.lines = append(l.lines, strings.TrimSuffix(line, "\n"))
		}
	}
	return len(b), nil
}

// connectForTest connects a to a daemon that has said hello and records what a sends it.
func connectForTest(t *testing.T, a *attacher) *recordLink {
	t.Helper()
	pr, pw := io.Pipe()
	l := &recordLink{}
	a.conn = wire.NewConn(pr, l, wire.Options{Gate: a.gate, Decided: a.decided})
	t.Cleanup(func() { pw.Close(); a.conn.Close() })
	go pw.Write([]byte(`{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}` + "\n"))
	if ln, err := a.conn.Next(context.Background()); err != nil || ln.Type != wire.TypeHello {
		t.Fatalf("no hello: %v", err)
	}
	return l
}

// Once input has ended, a pending question is skipped and an approval denied, each with a
// warning; before that they wait for their answer.
func TestPromptsDeniedOnceInputEnded(t *testing.T) {
	var out, errb bytes.Buffer
	a := newAttacher(cmdutil.Streams{Out: &out, Err: &errb}, options{})
	l := connectForTest(t, a)
	prompt := func(raw string) {
		ev, ok := wire.ParseLine([]byte(raw)).Event()
		if !ok {
			t.Fatalf("not an event: %s", raw)
		}
		a.observe(ev)
		if err := a.pump(); err != nil {
			t.Fatal(err)
		}
	}
	prompt(`{"type":"question","question":"Which?","options":["a","b"],"allowOther":false}`)
	if len(l.lines) != 0 || errb.Len() != 0 {
		t.Fatalf("answered while input is open: %q %q", l.lines, errb.String())
	}
	a.inputEnded = true
	if err := a.pump(); err != nil {
		t.Fatal(err)
	}
	prompt(`{"type":"approval_request","kind":"shell_command","command":"rm -rf build"}`)
	want := []string{`{"type":"question_response","answer":null}`, `{"type":"approval_response","approved":false}`}
	if strings.Join(l.lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(l.lines, "\n"), strings.Join(want, "\n"))
	}
	wantErr := "fr-attach: warning: input has ended and nobody can answer a question; skipping it\n" +
		"fr-attach: warning: input has ended and nobody can answer an approval_request (shell: rm -rf build); denying it\n"
	if errb.String() != wantErr {
		t.Errorf("stderr:\n%s\nwant:\n%s", errb.String(), wantErr)
	}
}
