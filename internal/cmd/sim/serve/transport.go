package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/fuseraft/fr/internal/cmd/sim/scenario"
	"github.com/fuseraft/fr/pkg/wire"
)

// How a connection is closed by the daemon.
const (
	closeShutdown = iota + 1 // the daemon stops
	closeReplaced            // a newer connection with the same client id
	closeDropped             // the --drop-after-approval fault: an abrupt drop
	closeSlow                // the client does not read what it is sent
)

// CloseReplaced is the WebSocket close status the daemon sends to a connection that a newer
// connection with the same client id replaced.
const CloseReplaced websocket.StatusCode = 4001

// CloseSlow is the WebSocket close status of a connection closed because its client does not
// read: policy violation.
const CloseSlow = websocket.StatusPolicyViolation

// shutdownFlush is how long a stopping daemon goes on writing to a connection what it had
// queued for it before closing it anyway.
const shutdownFlush = time.Second

// connHook, when set (by tests), is called with every connection the daemon makes.
var connHook func(*conn)

// conn is one attached connection. What the daemon sends it waits in a queue of at most limit
// bytes and is written in order by the connection's writer (writeLoop), each write with a
// deadline; sending never blocks. A client that lets its queue pass the bound is disconnected
// (slow), as is one whose writes make no progress for writeTimeout.
type conn struct {
	seq      int
	kind     string // socket or websocket
	label    string // for messages: "connection N (kind, client ID)"
	readOnly bool
	client   *client
	dropped  bool // disconnected by the daemon: its input is no longer read (guarded by d.mu)

	limit        int
	writeTimeout time.Duration
	kill         func()       // closes the transport at once
	slow         func(string) // called in its own goroutine when the queue passes limit

	mu         sync.Mutex
	q          []outItem
	queued     int // bytes queued and not yet written, what is being written included
	peak       int
	overflowed bool
	closeHow   int // once set, nothing is queued any more (but the last line of the close)
	wake       chan struct{}
	progress   time.Time     // when a write last completed, or the queue last stopped being empty
	progressed chan struct{} // signalled on every write completed

	done      chan struct{} // the connection is over: its reader ended, or its handler
	closeOnce sync.Once
}

// outItem is one line queued for a connection; a result is acknowledged once written.
type outItem struct {
	b      []byte
	result *savedResult
}

func (d *daemon) newConn(kind string, readOnly bool) *conn {
	c := &conn{kind: kind, readOnly: readOnly, limit: d.opts.sendQueue, writeTimeout: d.opts.writeTimeout,
		wake: make(chan struct{}, 1), done: make(chan struct{}), kill: func() {},
		progress: time.Now(), progressed: make(chan struct{}, 1)}
	c.slow = func(reason string) { d.slow(c, reason) }
	if connHook != nil {
		connHook(c)
	}
	return c
}

// send queues b. It never blocks: past the queue's bound the connection is disconnected
// (slow) and b is dropped, as is anything sent to a closing connection. It reports whether b
// was queued.
func (c *conn) send(b []byte) bool { return c.enqueue(outItem{b: b}) }

func (c *conn) enqueue(it outItem) bool {
	if it.b == nil {
		return false
	}
	c.mu.Lock()
	if c.closeHow != 0 || c.overflowed {
		c.mu.Unlock()
		return false
	}
	// A line longer than the whole bound is still sent, on its own.
	if c.queued > 0 && c.queued+len(it.b) > c.limit {
		c.overflowed = true
		queued := c.queued
		c.mu.Unlock()
		go c.slow(fmt.Sprintf("this connection is not reading: %d bytes wait for it, and --send-queue is %d", queued, c.limit))
		return false
	}
	if c.queued == 0 {
		c.progress = time.Now() // an idle connection is not a stalled one
	}
	c.q = append(c.q, it)
	c.queued += len(it.b)
	if c.queued > c.peak {
		c.peak = c.queued
	}
	c.mu.Unlock()
	c.signal()
	return true
}

func (c *conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// peakQueued is the most bytes the queue ever held.
func (c *conn) peakQueued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peak
}

// closeAfter closes the connection once what is queued is written, last (when not nil) the
// last line; the first close wins.
func (c *conn) closeAfter(how int, last []byte) {
	c.mu.Lock()
	if c.closeHow == 0 {
		c.closeHow = how
		if last != nil {
			c.q = append(c.q, outItem{b: last})
			c.queued += len(last)
		}
	}
	c.mu.Unlock()
	c.signal()
}

func (c *conn) closeAfterFlush(how int) { c.closeAfter(how, nil) }

func (c *conn) how() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeHow
}

func (c *conn) shut() { c.closeOnce.Do(func() { close(c.done) }) }

// stallWindow is how long a connection may make no progress and still hold a task back.
const stallWindow = time.Second

// wrote notes that a write to the connection completed.
func (c *conn) wrote() {
	c.mu.Lock()
	c.progress = time.Now()
	c.mu.Unlock()
	select {
	case c.progressed <- struct{}{}:
	default:
	}
}

// pace holds a task's events back while this connection, reading, lags more than half its
// bound behind, so that a flood goes as fast as its readers read. A connection that made no
// progress for stallWindow is not waited for: it is cut when its queue passes the bound (or
// by the write timeout). pace returns at once when stop is closed.
func (c *conn) pace(stop <-chan struct{}) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		c.mu.Lock()
		over := c.queued > c.limit/2 && c.closeHow == 0 && !c.overflowed
		wait := stallWindow - time.Since(c.progress)
		c.mu.Unlock()
		if !over || wait <= 0 {
			return
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-c.progressed:
		case <-timer.C:
		case <-c.done:
			return
		case <-stop:
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// writeDeadline is the deadline of a write starting now.
func (c *conn) writeDeadline() time.Time { return time.Now().Add(c.writeTimeout) }

// writeLoop writes what is queued, in batches of what waits, until the connection is closed
// and its queue written, its reader ends, or a write fails. sent is called with every batch
// written, and the write's error.
func (c *conn) writeLoop(write func([]outItem) error, sent func([]outItem, error)) {
	for {
		c.mu.Lock()
		batch := c.q
		c.q = nil
		how := c.closeHow
		c.mu.Unlock()
		if len(batch) == 0 {
			if how != 0 {
				return
			}
			select {
			case <-c.wake:
				continue
			case <-c.done:
				return
			}
		}
		select {
		case <-c.done:
			return
		default:
		}
		err := write(batch)
		sent(batch, err)
		n := 0
		for _, it := range batch {
			n += len(it.b)
		}
		c.mu.Lock()
		c.queued -= n
		how = c.closeHow
		c.mu.Unlock()
		if err != nil {
			if isTimeout(err) && how != closeShutdown && how != closeDropped {
				c.slow(fmt.Sprintf("this connection is not reading: no write made progress for %v (--write-timeout)", c.writeTimeout))
			}
			return
		}
	}
}

func isTimeout(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)
}

// deadlineWriter gives every write to a connection the connection's write deadline.
type deadlineWriter struct {
	nc net.Conn
	c  *conn
}

func (w deadlineWriter) Write(b []byte) (int, error) {
	w.nc.SetWriteDeadline(w.c.writeDeadline())
	n, err := w.nc.Write(b)
	if err == nil {
		w.c.wrote()
	}
	return n, err
}

// watch closes cn when the daemon stops: after what is queued, or at most shutdownFlush later.
func (d *daemon) watch(ctx context.Context, cn *conn) {
	go func() {
		select {
		case <-ctx.Done():
		case <-cn.done:
			return
		}
		if d.crashing() {
			cn.closeAfterFlush(closeDropped)
		} else {
			cn.closeAfterFlush(closeShutdown)
		}
		t := time.NewTimer(shutdownFlush)
		defer t.Stop()
		select {
		case <-t.C:
			cn.kill()
		case <-cn.done:
		}
	}()
}

// serveSocket accepts connections on the Unix socket until ctx ends.
func (d *daemon) serveSocket(ctx context.Context, ln net.Listener) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() == nil {
				d.warn("socket: %v", err)
			}
			return
		}
		if !d.enter() {
			nc.Close()
			return
		}
		go func() {
			defer d.wg.Done()
			d.handleSocket(ctx, nc)
		}()
	}
}

func (d *daemon) handleSocket(ctx context.Context, nc net.Conn) {
	cn := d.newConn("socket", false)
	cn.kill = func() { nc.Close() }
	d.attach(cn, "", nil, true)
	defer d.detach(cn)
	defer cn.shut()
	d.watch(ctx, cn)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		r := wire.NewReader(nc, wire.ReaderOptions{})
		for {
			line, err := r.ReadLine()
			if err != nil {
				cn.shut()
				return
			}
			if len(strings.TrimSpace(string(line))) == 0 {
				continue
			}
			d.line(cn, line)
		}
	}()
	// The line-level faults (crlf, noise, split) apply to the socket's byte stream; what
	// waits is written in blocks, a line alone at once.
	lw := scenario.NewLineWriter(deadlineWriter{nc, cn}, d.sc.Faults)
	cn.writeLoop(func(batch []outItem) error {
		if len(batch) == 1 {
			return lw.WriteLine(batch[0].b)
		}
		lw.BeginBatch()
		for _, it := range batch {
			if err := lw.WriteLine(it.b); err != nil {
				lw.EndBatch()
				return err
			}
		}
		return lw.EndBatch()
	}, func(b []outItem, err error) { d.sent(cn, b, err) })
	cn.shut()
	nc.Close()
	<-readerDone
}

// enter counts a connection handler in, unless the daemon is stopping.
func (d *daemon) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		return false
	}
	d.wg.Add(1)
	return true
}

// closeDoors stops new connection handlers and waits for the running ones.
func (d *daemon) closeDoors() {
	d.mu.Lock()
	d.closing = true
	d.mu.Unlock()
	d.wg.Wait()
}

func (d *daemon) crashing() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.crash != nil
}

// tokens maps a bearer token to whether it is read-only.
type tokens map[string]bool

// admit refuses a request with an Origin header (403: what names it in the answer, "a
// handshake"), then checks its token (see check).
func (toks tokens) admit(w http.ResponseWriter, r *http.Request, what string) (token string, readOnly, ok bool) {
	if r.Header.Get("Origin") != "" {
		http.Error(w, what+" with an Origin header is refused", http.StatusForbidden)
		return "", false, false
	}
	return toks.check(w, r)
}

// check authenticates a request to the HTTP server: with tokens configured, it needs
// "Authorization: Bearer TOKEN" with one of them, else it is answered 401 and ok is false.
func (toks tokens) check(w http.ResponseWriter, r *http.Request) (token string, readOnly, ok bool) {
	if len(toks) == 0 {
		return "", false, true
	}
	t, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	t = strings.TrimSpace(t)
	ro, known := toks[t]
	if !bearer || !known {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fuseraft"`)
		http.Error(w, "a valid bearer token is required", http.StatusUnauthorized)
		return "", false, false
	}
	return t, ro, true
}

// scope names the token a client id is scoped to without keeping the token itself.
func scope(token string) string {
	if token == "" {
		return "-"
	}
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:8])
}

// wsHandler serves the WebSocket at /attach: no Origin header (403), a configured bearer
// token (401), a valid Fuseraft-Client-Id when one is sent (400).
func (d *daemon) wsHandler(ctx context.Context, toks tokens) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/attach", func(w http.ResponseWriter, r *http.Request) {
		token, readOnly, ok := toks.admit(w, r, "a handshake")
		if !ok {
			return
		}
		var id *string
		if h := r.Header.Values("Fuseraft-Client-Id"); len(h) > 0 {
			if len(h) > 1 || !wire.ValidClientID(h[0]) {
				http.Error(w, "Fuseraft-Client-Id must be 1-64 of A-Z a-z 0-9 - _", http.StatusBadRequest)
				return
			}
			id = &h[0]
		}
		if !d.enter() {
			http.Error(w, "the daemon is stopping", http.StatusServiceUnavailable)
			return
		}
		defer d.wg.Done()
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		ws.SetReadLimit(wire.DefaultMaxLine + 2)
		raw, _ := r.Context().Value(rawConnKey{}).(net.Conn)
		d.handleWS(ctx, ws, raw, token, id, readOnly)
	})
	mux.Handle("/mcp", d.mcpHandler(toks))
	if d.opts.a2a {
		mux.HandleFunc("/a2a/", func(w http.ResponseWriter, r *http.Request) {
			d.handleA2A(w, r, toks)
		})
	}
	return mux
}

// handleA2A takes an A2A call to the agent named in the path: POST /a2a/AGENT, the body the
// message (a user_input line or plain text). A configured token is needed, and a write one.
func (d *daemon) handleA2A(w http.ResponseWriter, r *http.Request, toks tokens) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "an A2A call is a POST", http.StatusMethodNotAllowed)
		return
	}
	_, ro, ok := toks.check(w, r)
	if !ok {
		return
	}
	if ro {
		http.Error(w, "a read-only token cannot call an agent", http.StatusForbidden)
		return
	}
	agent := strings.TrimPrefix(r.URL.Path, "/a2a/")
	if !wire.ValidClientID(agent) {
		http.Error(w, "the path is /a2a/AGENT, AGENT 1-64 of A-Z a-z 0-9 - _", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(wire.DefaultMaxLine)))
	if err != nil {
		http.Error(w, "cannot read the request", http.StatusBadRequest)
		return
	}
	text, ok := taskText(bytes.TrimSpace(body))
	if !ok || strings.TrimSpace(text) == "" {
		http.Error(w, "the body is the message to the agent", http.StatusBadRequest)
		return
	}
	if !d.enter() {
		http.Error(w, "the daemon is stopping", http.StatusServiceUnavailable)
		return
	}
	defer d.wg.Done()
	id := d.a2aCall(agent, text)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	w.Write(append(encodeObject(field{"sessionId", id}), '\n'))
}

// rawConnKey is the request context key of the connection under a WebSocket (see
// withRawConn): closing it is the one way to end a WebSocket whose peer does not read.
type rawConnKey struct{}

// withRawConn is the http.Server's ConnContext: it keeps each connection in its requests'
// context.
func withRawConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, rawConnKey{}, c)
}

func (d *daemon) handleWS(ctx context.Context, ws *websocket.Conn, raw net.Conn, token string, id *string, readOnly bool) {
	cn := d.newConn("websocket", readOnly)
	kill := func() {
		if raw != nil {
			raw.Close()
		}
		go ws.CloseNow()
	}
	cn.kill = kill
	key := ""
	if id != nil {
		key = scope(token) + "/" + *id
	}
	d.attach(cn, key, id, id == nil)
	defer d.detach(cn)
	defer cn.shut()
	d.watch(ctx, cn)
	rctx, cancelRead := context.WithCancel(context.Background())
	defer cancelRead()
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			_, msg, err := ws.Read(rctx)
			if err != nil {
				cn.shut()
				return
			}
			msg = []byte(strings.TrimRight(string(msg), "\r\n"))
			if len(strings.TrimSpace(string(msg))) == 0 {
				continue
			}
			d.line(cn, msg)
		}
	}()
	cn.writeLoop(func(batch []outItem) error {
		for _, it := range batch {
			wctx, cancel := context.WithDeadline(context.Background(), cn.writeDeadline())
			err := ws.Write(wctx, websocket.MessageText, it.b)
			cancel()
			if err != nil {
				return err
			}
			cn.wrote()
		}
		return nil
	}, func(b []outItem, err error) { d.sent(cn, b, err) })
	cn.shut()
	switch cn.how() {
	case closeReplaced:
		closeWS(ws, kill, CloseReplaced, "replaced by a newer connection with the same client id")
	case closeShutdown:
		closeWS(ws, kill, websocket.StatusGoingAway, "the daemon is stopping")
	case closeSlow:
		closeWS(ws, kill, CloseSlow, "not reading")
	case closeDropped:
		kill()
	default:
		closeWS(ws, kill, websocket.StatusNormalClosure, "")
	}
	cancelRead()
	<-readerDone
}

// closeWS closes with a handshake, but never waits long for a peer that does not answer.
func closeWS(ws *websocket.Conn, kill func(), code websocket.StatusCode, reason string) {
	done := make(chan struct{})
	go func() {
		ws.Close(code, reason)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		kill()
		<-done
	}
}

// listenSocket listens on path, replacing a stale socket file but never a live daemon's.
func listenSocket(path string) (net.Listener, error) {
	if len(path) > wire.MaxSocketPath() {
		return nil, &wire.SocketPathError{Path: path, Max: wire.MaxSocketPath()}
	}
	if _, err := os.Stat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("a daemon is already listening on %s", path)
		}
		os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) {
			return nil, fmt.Errorf("cannot listen on %s: %v", path, oe.Err)
		}
		return nil, err
	}
	return ln, nil
}

// takeResults takes the results still waiting in the queue out of it.
func (c *conn) takeResults() []*savedResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*savedResult
	kept := c.q[:0]
	for _, it := range c.q {
		if it.result != nil {
			out = append(out, it.result)
			c.queued -= len(it.b)
			continue
		}
		kept = append(kept, it)
	}
	for i := len(kept); i < len(c.q); i++ {
		c.q[i] = outItem{}
	}
	c.q = kept
	return out
}
