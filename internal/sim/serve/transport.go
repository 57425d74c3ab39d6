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

	"github.com/fuseraft/fr/internal/sim/scenario"
	"github.com/fuseraft/fr/pkg/wire"
)

// How a connection is closed by the daemon.
const (
	closeShutdown = iota + 1 // the daemon stops
	closeReplaced            // a newer connection with the same client id
	closeDropped             // the --drop-after-approval fault: an abrupt drop
)

// CloseReplaced is the WebSocket close status the daemon sends to a connection that a newer
// connection with the same client id replaced.
const CloseReplaced websocket.StatusCode = 4001

// conn is one attached connection. Everything it sends goes through out, in order, written by
// one goroutine; a nil entry closes the connection after what came before it is written.
type conn struct {
	seq      int
	kind     string // socket or websocket
	readOnly bool
	client   *client
	dropped  bool // the drop fault hit it: its input is no longer read

	out       chan []byte
	done      chan struct{}
	closeOnce sync.Once
	closeHow  int
	closeMu   sync.Mutex
}

func newConn(kind string, readOnly bool) *conn {
	return &conn{kind: kind, readOnly: readOnly, out: make(chan []byte, 4096), done: make(chan struct{})}
}

// send queues b; it blocks while the client is slow to read (backpressure), and gives up when
// the connection is closed.
func (c *conn) send(b []byte) {
	if b == nil {
		return
	}
	select {
	case c.out <- b:
	case <-c.done:
	}
}

func (c *conn) closeAfterFlush(how int) {
	c.closeMu.Lock()
	if c.closeHow == 0 {
		c.closeHow = how
	}
	c.closeMu.Unlock()
	select {
	case c.out <- nil:
	case <-c.done:
	default:
		// The queue is full: close at once.
		c.shut()
	}
}

func (c *conn) how() int {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	return c.closeHow
}

func (c *conn) shut() { c.closeOnce.Do(func() { close(c.done) }) }

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
	cn := newConn("socket", false)
	d.attach(cn, "", nil, true)
	defer d.detach(cn)
	go func() {
		select {
		case <-ctx.Done():
			if d.crashing() {
				cn.closeAfterFlush(closeDropped)
			} else {
				cn.closeAfterFlush(closeShutdown)
			}
		case <-cn.done:
		}
	}()
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
	// The line-level faults (crlf, noise, split) apply to the socket's byte stream; lines
	// are written in blocks while more are queued, and at once otherwise.
	lw := scenario.NewLineWriter(nc, d.sc.Faults)
	batching := false
	for {
		var b []byte
		select {
		case b = <-cn.out:
		case <-cn.done:
		}
		if b == nil {
			if batching {
				lw.EndBatch()
			}
			break
		}
		if !batching && len(cn.out) > 0 {
			lw.BeginBatch()
			batching = true
		}
		if err := lw.WriteLine(b); err != nil {
			break
		}
		if batching && len(cn.out) == 0 {
			batching = false
			if lw.EndBatch() != nil {
				break
			}
		}
	}
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
		if r.Header.Get("Origin") != "" {
			http.Error(w, "a handshake with an Origin header is refused", http.StatusForbidden)
			return
		}
		token, readOnly := "", false
		if len(toks) > 0 {
			auth := r.Header.Get("Authorization")
			t, ok := strings.CutPrefix(auth, "Bearer ")
			ro, known := toks[strings.TrimSpace(t)]
			if !ok || !known {
				w.Header().Set("WWW-Authenticate", `Bearer realm="fuseraft"`)
				http.Error(w, "a valid bearer token is required", http.StatusUnauthorized)
				return
			}
			token, readOnly = strings.TrimSpace(t), ro
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
		d.handleWS(ctx, ws, token, id, readOnly)
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
	if len(toks) > 0 {
		t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		ro, known := toks[strings.TrimSpace(t)]
		if !ok || !known {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fuseraft"`)
			http.Error(w, "a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		if ro {
			http.Error(w, "a read-only token cannot call an agent", http.StatusForbidden)
			return
		}
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

func (d *daemon) handleWS(ctx context.Context, ws *websocket.Conn, token string, id *string, readOnly bool) {
	cn := newConn("websocket", readOnly)
	key := ""
	if id != nil {
		key = scope(token) + "/" + *id
	}
	d.attach(cn, key, id, id == nil)
	defer d.detach(cn)
	go func() {
		select {
		case <-ctx.Done():
			if d.crashing() {
				cn.closeAfterFlush(closeDropped)
			} else {
				cn.closeAfterFlush(closeShutdown)
			}
		case <-cn.done:
		}
	}()
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
	wctx := context.Background()
	for {
		var b []byte
		select {
		case b = <-cn.out:
		case <-cn.done:
		}
		if b == nil {
			break
		}
		if err := ws.Write(wctx, websocket.MessageText, b); err != nil {
			break
		}
	}
	cn.shut()
	switch cn.how() {
	case closeReplaced:
		closeWS(ws, CloseReplaced, "replaced by a newer connection with the same client id")
	case closeShutdown:
		closeWS(ws, websocket.StatusGoingAway, "the daemon is stopping")
	case closeDropped:
		ws.CloseNow()
	default:
		closeWS(ws, websocket.StatusNormalClosure, "")
	}
	cancelRead()
	<-readerDone
}

// closeWS closes with a handshake, but never waits long for a peer that does not answer.
func closeWS(ws *websocket.Conn, code websocket.StatusCode, reason string) {
	done := make(chan struct{})
	go func() {
		ws.Close(code, reason)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		ws.CloseNow()
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
