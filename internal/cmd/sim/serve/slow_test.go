package serve

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// floodScenario writes a scenario whose task "flood" broadcasts count token events of size
// bytes each, then a result; every other task is quick.
func floodScenario(t *testing.T, count, size int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "flood.yaml")
	y := fmt.Sprintf(`version: 1
serve:
  tasks:
    - match: "^flood"
      steps:
        - flood: {count: %d, type: token, text: "%s"}
      result: {lastAgent: Worker}
    - match: ""
      steps:
        - emit: {type: agent_starting, agent: Worker}
      result: {lastAgent: Worker}
`, count, strings.Repeat("x", size))
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// peaks records, for every connection the daemon makes, the most bytes its queue held.
type peaks struct {
	mu    sync.Mutex
	conns []*conn
}

func watchConns(t *testing.T) *peaks {
	p := &peaks{}
	connHook = func(c *conn) {
		p.mu.Lock()
		p.conns = append(p.conns, c)
		p.mu.Unlock()
	}
	t.Cleanup(func() { connHook = nil })
	return p
}

func (p *peaks) max() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := 0
	for _, c := range p.conns {
		if n := c.peakQueued(); n > m {
			m = n
		}
	}
	return m
}

// stuckSocket connects to the Unix socket and never reads.
func stuckSocket(t *testing.T, path string) net.Conn {
	t.Helper()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if uc, ok := nc.(*net.UnixConn); ok {
		uc.SetReadBuffer(4096)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// stuckWS opens a WebSocket and never reads from it.
func stuckWS(t *testing.T, url string, h http.Header) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

// within fails the test when f does not return within d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%s: not done within %v\n%s", what, d, buf)
	}
	t.Logf("%s: %v", what, time.Since(start).Round(time.Millisecond))
}

// A client that stops reading does not hold up anybody else's task: its queue fills up to
// --send-queue, then it is disconnected with an error event (the last thing queued for it)
// and a line on stderr.
func TestStuckReaderIsDisconnected(t *testing.T) {
	p := watchConns(t)
	const bound = 256 << 10
	d := startDaemon(t, "", map[string]string{"FRSIM_SCENARIO": floodScenario(t, 4000, 500)},
		"--send-queue", fmt.Sprint(bound), "--write-timeout", "10m") // a wedge would be a hang
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stderr: %s", d.stderr)
		}
	})
	stuck := stuckSocket(t, d.socket)
	a := dialSocket(t, d.socket)
	a.next("hello")
	within(t, testTimeout, "the flood task, with a client that does not read", func() {
		a.send("flood now")
		a.next("result")
	})
	if !strings.Contains(d.stderr.String(), "not reading") {
		t.Errorf("no word on stderr of the slow client: %s", d.stderr)
	}
	if m := p.max(); m > bound {
		t.Errorf("a connection's queue held %d bytes, more than the bound %d", m, bound)
	}
	// The stuck client reads at last: what was queued, then the reason, then the end.
	stuck.SetReadDeadline(time.Now().Add(testTimeout))
	sc := bufio.NewScanner(stuck)
	sc.Buffer(nil, 1<<20)
	var last string
	n := 0
	for sc.Scan() {
		last = sc.Text()
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("after %d lines: %v", n, err)
	}
	if !strings.HasPrefix(last, `{"type":"error","text":"`) || !strings.Contains(last, "not reading") {
		t.Errorf("the last of %d lines the slow client got: %.200s", n, last)
	}
	if n > 4000 {
		t.Errorf("the slow client got %d lines: it was not disconnected", n)
	}
	// The daemon still serves.
	b := dialWS(t, d.url, nil)
	b.next("hello")
	b.send("quick one")
	b.next("result")
}

// A client that never reads again is closed once a write makes no progress for
// --write-timeout, even when its queue is within the bound.
func TestWriteTimeoutClosesAStuckClient(t *testing.T) {
	d := startDaemon(t, "", map[string]string{"FRSIM_SCENARIO": floodScenario(t, 4000, 500)},
		"--write-timeout", "300ms")
	stuck := stuckSocket(t, d.socket)
	a := dialSocket(t, d.socket)
	a.next("hello")
	a.send("flood")
	a.next("result")
	deadline := time.Now().Add(testTimeout)
	for !strings.Contains(d.stderr.String(), "not reading") {
		if time.Now().After(deadline) {
			t.Fatalf("the stuck client was not closed: %s", d.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stuck.SetReadDeadline(time.Now().Add(testTimeout))
	buf := make([]byte, 64<<10)
	for {
		if _, err := stuck.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the stuck client's connection is still open")
			}
			break
		}
	}
}

// While a connection for client id X is stuck (not reading, its socket buffer full), a new
// connection with id X gets hello at once and the old one is closed; fresh clients get hello;
// and the daemon stops promptly.
func TestStuckClientDoesNotWedgeTheDaemon(t *testing.T) {
	// No write times out during the test: a client wedged behind a stuck one would hang.
	d := startDaemon(t, "", map[string]string{"FRSIM_SCENARIO": floodScenario(t, 10000, 1000)}, "--write-timeout", "10m")
	h := http.Header{"Fuseraft-Client-Id": {"x"}}
	old := stuckWS(t, d.url, h)
	stuckSocket(t, d.socket)
	a := dialSocket(t, d.socket)
	a.next("hello")
	within(t, testTimeout, "the flood task", func() {
		a.send("flood")
		a.next("result")
	})
	var newer *testClient
	within(t, testTimeout, "hello for the connection replacing a stuck one", func() {
		newer = dialWS(t, d.url, h)
		newer.next("hello")
	})
	within(t, testTimeout, "hello for a fresh WebSocket client", func() {
		dialWS(t, d.url, nil).next("hello")
	})
	within(t, testTimeout, "hello for a fresh socket client", func() {
		dialSocket(t, d.socket).next("hello")
	})
	within(t, testTimeout, "a task of the replacing connection", func() {
		newer.send("quick")
		newer.next("result")
	})
	// The old connection, read at last, ends with the replacement's close status.
	within(t, testTimeout, "reading the replaced connection to its end", func() {
		for {
			_, _, err := old.Read(context.Background())
			if err != nil {
				if websocket.CloseStatus(err) != CloseReplaced {
					t.Errorf("the replaced connection ended with %v, want status %d", err, CloseReplaced)
				}
				return
			}
		}
	})
	stuckWS(t, d.url, nil) // and one more that never reads, for the shutdown
	a.send("flood")
	a.next("token")
	within(t, testTimeout, "stopping the daemon with stuck clients", func() {
		if code := d.stop(); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
}

// Connections leave nothing behind: 200 of them, over both transports, opened and closed,
// and the daemon's goroutines and open files are back to what they were.
func TestNoLeakPerConnection(t *testing.T) {
	d := startDaemon(t, "", nil)
	warm := dialSocket(t, d.socket)
	warm.next("hello")
	warm.nc.Close()
	time.Sleep(50 * time.Millisecond)
	baseG, baseF := runtime.NumGoroutine(), openFiles(t)
	for i := 0; i < 200; i++ {
		var c *testClient
		if i%2 == 0 {
			c = dialSocket(t, d.socket)
		} else {
			h := http.Header{}
			if i%4 == 1 {
				h.Set("Fuseraft-Client-Id", fmt.Sprintf("c%d", i))
			}
			c = dialWS(t, d.url, h)
		}
		c.next("hello")
		if i%3 == 0 {
			c.send("quick")
			c.next("result")
		}
		if c.ws != nil {
			c.ws.Close(websocket.StatusNormalClosure, "")
		} else {
			c.nc.Close()
		}
		for range c.events {
		}
	}
	deadline := time.Now().Add(testTimeout)
	for {
		g, f := runtime.NumGoroutine(), openFiles(t)
		if g <= baseG+5 && f <= baseF+3 {
			t.Logf("goroutines %d -> %d, files %d -> %d", baseG, g, baseF, f)
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("after 200 connections: %d goroutines (were %d), %d files (were %d)\n%s", g, baseG, f, baseF, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func openFiles(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}
