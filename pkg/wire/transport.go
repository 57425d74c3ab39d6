package wire

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// link is one open stream of lines to fuseraft: the Unix socket, a WebSocket, or a process's
// pipes. Only one goroutine reads; writes are serialised by the Conn.
type link interface {
	readLine() ([]byte, error)
	writeLine(b []byte) error
	close()
}

// inputCloser is a link whose input can end while its output is still read (a process's).
type inputCloser interface{ closeInput() }

// holder is a link told when its reader stops reading for a while (the consumer is behind).
type holder interface{ hold(held bool) }

// AuthError is a WebSocket handshake the daemon refused with 401 or 403. Two identical ones in
// a row stop a Conn from reconnecting.
type AuthError struct {
	Status int
	Body   string // the start of the daemon's answer
}

// Error says the daemon refused the connection, with its status and answer.
func (e *AuthError) Error() string {
	msg := fmt.Sprintf("the daemon refused the connection: %d %s", e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// HandshakeError is a WebSocket handshake answered with a status other than 101, 401 and 403:
// 400 for a request the daemon finds wrong (an invalid client id), anything else for a URL that
// is not the daemon's attach endpoint. It is not retried.
type HandshakeError struct {
	Status int
	Text   string // the status line, "404 Not Found"
	Body   string // the start of the answer
}

// Error says how the handshake was answered.
func (e *HandshakeError) Error() string {
	if e.Status == http.StatusBadRequest {
		return "the daemon rejected the handshake: 400 Bad Request: " + e.Body
	}
	return "the daemon answered the WebSocket handshake with " + e.Text
}

// LoadCA reads PEM certificates to trust for a wss:// daemon (Daemon.TLS).
func LoadCA(path string) (*tls.Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// dial opens one connection to the daemon.
func (d *Daemon) dial(ctx context.Context) (link, error) {
	if d.Socket != "" {
		if len(d.Socket) > MaxSocketPath() {
			return nil, &SocketPathError{Path: d.Socket, Max: MaxSocketPath()}
		}
		var nd net.Dialer
		nc, err := nd.DialContext(ctx, "unix", d.Socket)
		if err != nil {
			return nil, err
		}
		return &streamLink{c: nc, r: newLinkReader(nc), w: bufio.NewWriter(nc)}, nil
	}
	h := http.Header{}
	if d.Token != "" {
		h.Set("Authorization", "Bearer "+d.Token)
	}
	if d.ClientID != "" {
		h.Set("Fuseraft-Client-Id", d.ClientID)
	}
	// No Origin header is ever sent: the daemon refuses a handshake with one.
	// The shared client follows no redirect to another origin: the token stays with the
	// daemon it was given for.
	opts := &websocket.DialOptions{HTTPHeader: h, HTTPClient: HTTPClient(d.TLS)}
	dctx, cancel := context.WithTimeout(ctx, d.helloTimeout())
	defer cancel()
	ws, resp, err := websocket.Dial(dctx, d.URL, opts)
	if err != nil {
		if resp != nil {
			var body [256]byte
			n, _ := resp.Body.Read(body[:])
			text := strings.TrimSpace(string(body[:n]))
			if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
				return nil, &AuthError{Status: resp.StatusCode, Body: text}
			}
			return nil, &HandshakeError{Status: resp.StatusCode, Text: resp.Status, Body: text}
		}
		return nil, err
	}
	ws.SetReadLimit(DefaultMaxLine + 2)
	l := &wsLink{ws: ws}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	if d.Ping > 0 {
		go l.pinger(d.Ping)
	}
	return l, nil
}

// streamLink is lines over a byte stream: the Unix socket, or a process's pipes.
type streamLink struct {
	c  io.Closer
	r  *Reader
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *streamLink) readLine() ([]byte, error) { return l.r.ReadLine() }

func (l *streamLink) hasLine() bool { return l.r.hasLine() }

func (l *streamLink) kept() bool { return l.r.kept() }

// newLinkReader reads a link's byte stream, keeping the lines it returns, so that they are
// handed on without a copy.
func newLinkReader(src io.Reader) *Reader {
	r := NewReader(src, ReaderOptions{})
	r.keep = true
	return r
}

func (l *streamLink) writeLine(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(b)
	l.w.WriteByte('\n')
	return l.w.Flush()
}

func (l *streamLink) close() { l.c.Close() }

type wsLink struct {
	ws     *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc
	// pingErr says why the pinger closed the connection, for the reader to report instead of
	// the "use of closed network connection" that closing causes.
	pingErr atomic.Pointer[error]
	// holding says the reader is not reading (its consumer is behind); holds counts the times
	// it started. A pong then waits behind unread events, so a ping without one proves nothing.
	holding atomic.Bool
	holds   atomic.Int64
	reads   atomic.Int64 // messages read
}

func (l *wsLink) hold(held bool) {
	if held {
		l.holds.Add(1)
	}
	l.holding.Store(held)
}

func (l *wsLink) readLine() ([]byte, error) {
	_, msg, err := l.ws.Read(l.ctx)
	l.reads.Add(1)
	if err != nil {
		if pe := l.pingErr.Load(); pe != nil {
			return nil, *pe
		}
		return nil, err
	}
	for len(msg) > 0 && (msg[len(msg)-1] == '\n' || msg[len(msg)-1] == '\r') {
		msg = msg[:len(msg)-1]
	}
	return msg, nil
}

func (l *wsLink) writeLine(b []byte) error {
	ctx, cancel := context.WithTimeout(l.ctx, 30*time.Second)
	defer cancel()
	return l.ws.Write(ctx, websocket.MessageText, b)
}

func (l *wsLink) close() {
	l.cancel()
	l.ws.CloseNow()
}

// pinger pings the daemon every interval, so a peer that died without closing the connection
// is noticed within two intervals: the connection is then closed and the reader sees it.
func (l *wsLink) pinger(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
		}
		holds, reads := l.holds.Load(), l.reads.Load()
		ctx, cancel := context.WithTimeout(l.ctx, interval)
		err := l.ws.Ping(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) &&
			(l.holding.Load() || l.holds.Load() != holds || l.reads.Load() != reads) {
			// Events kept coming, or the reader held back: the daemon is there, and its
			// pong waits behind events not read yet.
			continue
		}
		if err != nil && l.ctx.Err() == nil {
			why := pingFailure(err, interval)
			l.pingErr.Store(&why)
			l.ws.CloseNow()
			return
		}
	}
}

// pingFailure says in plain words why a ping failed: no pong in time, or the ping could not
// be sent.
func pingFailure(err error, wait time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the daemon stopped answering: no pong within %s", wait)
	}
	return fmt.Errorf("a ping failed: %w", err)
}

// replacedBy reports whether a read error says a newer connection with our client id took over.
func replacedBy(err error) bool {
	var ce websocket.CloseError
	if !errors.As(err, &ce) {
		return false
	}
	r := strings.ToLower(ce.Reason)
	return ce.Code == 4001 || strings.Contains(r, "newer connection") || strings.Contains(r, "replaced")
}

// DropError is a connection that dropped: Err is the read error, nil or io.EOF for a daemon
// that closed it.
type DropError struct{ Err error }

// Error says how the connection ended, in the daemon's words when it gave some.
func (e *DropError) Error() string {
	var ce websocket.CloseError
	switch {
	case e.Err == nil || errors.Is(e.Err, io.EOF):
		return "the daemon closed the connection"
	case errors.As(e.Err, &ce):
		if ce.Reason != "" {
			return fmt.Sprintf("the daemon closed the connection: %s (status %d)", ce.Reason, int(ce.Code))
		}
		return fmt.Sprintf("the daemon closed the connection (status %d)", int(ce.Code))
	}
	return e.Err.Error()
}

// Unwrap returns the read error.
func (e *DropError) Unwrap() error { return e.Err }
