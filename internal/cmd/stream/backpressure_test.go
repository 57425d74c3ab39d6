//go:build unix

package stream

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

// lines is an input of n lines of about 100 bytes, counting how much of it has been read.
type lines struct {
	n, i int
	read atomic.Int64
	buf  []byte
}

func (l *lines) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		if l.i == l.n {
			return 0, io.EOF
		}
		l.i++
		l.buf = []byte(strings.Repeat("m", 95) + "\n")
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	l.read.Add(int64(n))
	return n, nil
}

func fakeFuseraft(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fuseraft")
	script := "#!/bin/sh\necho '" + `{"type":"ready","protocolVersion":1,"sessionId":"s1","model":"m","title":null,"autoTitle":null,"midTurnCommands":[]}` + "'\n" + body + "\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// fr-stream repl < 50 MB of lines while fuseraft's first turn never ends: every line after
// the first waits for that turn, and fr-stream stops reading input once MaxHeld lines wait,
// instead of reading all 50 MB into memory.
func TestInputBackpressure(t *testing.T) {
	bin := fakeFuseraft(t, "exec sleep 1000") // one turn that never ends, reading nothing
	in := &lines{n: 500_000}
	var errb testkit.SyncBuffer
	s := cmdutil.Streams{In: in, Out: io.Discard, Err: &errb, Getenv: func(string) string { return "" }}
	before := heap()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Run(ctx, s, []string{"fr-stream", "repl", "--fuseraft", bin, "--format", "jsonl"}) }()
	// Wait until reading stops (or everything has been read).
	last := int64(-1)
	for deadline := time.Now().Add(testkit.Bound(20 * time.Second)); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		n := in.read.Load()
		if n == last && n > 0 {
			break
		}
		last = n
	}
	read, grown := in.read.Load(), int64(heap())-int64(before)
	cancel()
	select {
	case <-done:
	case <-testkit.After(testkit.Hang):
		t.Fatal("fr-stream did not end when cancelled")
	}
	t.Logf("read %d of %d bytes of input; heap grew by %d KiB", read, 500_000*96, grown>>10)
	if read > 4<<20 {
		t.Errorf("read %d MB of input while one turn ran: input is not held back", read>>20)
	}
	if grown > 16<<20 {
		t.Errorf("the heap grew by %d MiB", grown>>20)
	}
}

// With a fuseraft that is slower than its input (one turn per line, answered in turn) every
// line is sent, in order, none is left behind, and memory stays bounded.
func TestInputBackpressureLosesNothing(t *testing.T) {
	const n = 5000
	bin := fakeFuseraft(t, `i=0
while IFS= read -r line; do
  i=$((i+1))
  echo '{"type":"turn_start","text":""}'
  echo '{"type":"message_end","turnIndex":'$i',"toolCalls":[]}'
done
echo '{"type":"session_end"}'`)
	in := &lines{n: n}
	var out, errb testkit.SyncBuffer
	s := cmdutil.Streams{In: in, Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if h := int64(m.HeapAlloc); h > peak.Load() {
				peak.Store(h)
			}
		}
	}()
	code := Run(context.Background(), s, []string{"fr-stream", "repl", "--fuseraft", bin, "--format", "jsonl"})
	close(stop)
	<-sampled
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errb.String())
	}
	if got := strings.Count(out.String(), `"type":"message_end"`); got != n {
		t.Errorf("%d turns, want %d (one per input line)", got, n)
	}
	if strings.Contains(errb.String(), "not sent") {
		t.Errorf("stderr: %s", errb.String())
	}
	t.Logf("peak heap %d MiB", peak.Load()>>20)
}
