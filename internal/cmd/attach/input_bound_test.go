package attach

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

// taskLines is an input of n task lines, counting how much of it has been read.
type taskLines struct {
	n, i int
	read atomic.Int64
	buf  []byte
}

func (l *taskLines) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		if l.i == l.n {
			return 0, io.EOF
		}
		l.i++
		l.buf = []byte(strings.Repeat("t", 95) + "\n")
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	l.read.Add(int64(n))
	return n, nil
}

// A daemon whose first task never ends: every task line after it waits, and fr-attach stops
// reading stdin once liveio.MaxHeld of them wait, instead of reading 50 MB of input into memory.
func TestInputIsBounded(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "frb")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "d.sock")
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
		c.Write([]byte(`{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}` + "\n"))
		br := bufio.NewReader(c)
		br.ReadString('\n')
		c.Write([]byte(`{"type":"queued","sessionId":"s1","position":0}` + "\n"))
		io.Copy(io.Discard, br) // the task runs for ever
	}()
	in := &taskLines{n: 500_000}
	s := cmdutil.Streams{In: in, Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Run(ctx, s, []string{"fr-attach", "--socket", sock}) }()
	last := int64(-1)
	for deadline := time.Now().Add(testkit.Bound(20 * time.Second)); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		n := in.read.Load()
		if n == last && n > 0 {
			break
		}
		last = n
	}
	read := in.read.Load()
	cancel()
	select {
	case <-done:
	case <-testkit.After(10 * time.Second):
		t.Fatal("fr-attach did not end when cancelled")
	}
	t.Logf("read %d of %d bytes", read, 500_000*96)
	if read > 4<<20 {
		t.Errorf("read %d MB of input while one task ran: input is not held back", read>>20)
	}
}
