package wire

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/testkit"
)

func TestBackoff(t *testing.T) {
	max := func(n int64) int64 { return n - 1 }
	zero := func(int64) int64 { return 0 }
	cases := []struct {
		n    int
		cap  time.Duration
		want time.Duration
	}{
		{1, 10 * time.Second, 100 * time.Millisecond},
		{2, 10 * time.Second, 200 * time.Millisecond},
		{5, 10 * time.Second, 1600 * time.Millisecond},
		{8, 10 * time.Second, 10 * time.Second},
		{1000, 10 * time.Second, 10 * time.Second},
		{3, 250 * time.Millisecond, 250 * time.Millisecond},
	}
	for _, tc := range cases {
		if got := Backoff(tc.n, tc.cap, max); got != tc.want {
			t.Errorf("Backoff(%d, %v) at most = %v, want %v", tc.n, tc.cap, got, tc.want)
		}
		if got := Backoff(tc.n, tc.cap, zero); got != 0 {
			t.Errorf("full jitter starts at 0, got %v", got)
		}
	}
}

// The wait for hello ends with hello: a connection that lives longer than HelloTimeout stays.
func TestHelloTimeoutEndsWithHello(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, `{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}`+"\n")
		time.Sleep(3 * time.Second) // past HelloTimeout
		io.WriteString(c, `{"type":"agent_starting","agent":"coder"}`+"\n")
		time.Sleep(time.Second)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound(testkit.Hang))
	defer cancel()
	// HelloTimeout is long enough for a busy machine to read hello in time.
	c, err := Dial(ctx, Daemon{Socket: sock, HelloTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, want := range []string{TypeHello, TypeAgentStarting} {
		l, err := c.Next(ctx)
		if err != nil || l.Type != want {
			t.Fatalf("got %q, %v; want %s", l.Type, err, want)
		}
	}
}
