package attach

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// connectTimeout bounds each step of connecting: the WebSocket handshake, and the wait for the
// daemon's hello on either transport. A variable so that tests can shorten it.
var connectTimeout = 30 * time.Second

// link is one connection to the daemon: the Unix socket or a WebSocket.
type link interface {
	// readLine returns the next line (a WebSocket text message). Only one goroutine reads.
	readLine() ([]byte, error)
	writeLine(b []byte) error
	close()
}

// target says where the daemon is and how to authenticate.
type target struct {
	socket   string // the Unix socket path, or
	url      string // ws:// or wss:// URL
	token    string
	clientID string
	tls      *tls.Config
	ping     time.Duration
}

func (t target) String() string {
	if t.url != "" {
		return t.url
	}
	return t.socket
}

// errAuth is a refused handshake (401 or 403). Two identical ones in a row stop reconnecting.
type errAuth struct {
	status int
	body   string
}

func (e *errAuth) Error() string {
	msg := fmt.Sprintf("the daemon refused the connection: %d %s", e.status, http.StatusText(e.status))
	if e.body != "" {
		msg += ": " + e.body
	}
	return msg
}

// dialError turns a failed connection into an *cmdutil.Error with the right exit code.
func dialError(t target, err error) error {
	var ae *errAuth
	if errors.As(err, &ae) {
		hint := "check the token in --token-file or FUSERAFT_SERVE_TOKEN"
		if ae.status == http.StatusForbidden {
			hint = "the daemon refuses this handshake (fr-attach never sends an Origin header; is a proxy adding one?)"
		}
		return cmdutil.WithHint(&cmdutil.Error{Code: cmdutil.ExitRefused, Err: ae}, hint)
	}
	var ce *cmdutil.Error
	if errors.As(err, &ce) {
		return ce
	}
	var se *wire.SocketPathError
	if errors.As(err, &se) {
		return cmdutil.WithHint(err, "pass a shorter --socket PATH, or set FUSERAFT_HOME to a shorter directory")
	}
	hints := []string{"is 'fuseraft serve' running for this project?", "pass --socket PATH or --url ws://HOST:PORT/attach"}
	var msg string
	var ue x509.UnknownAuthorityError
	var he x509.HostnameError
	var ve *tls.CertificateVerificationError
	switch {
	case errors.As(err, &ue) || errors.As(err, &he) || errors.As(err, &ve):
		msg = fmt.Sprintf("cannot connect to %s: %v", t, err)
		hints = []string{"pass --ca-cert FILE with the certificate that signed the daemon's"}
	case t.socket != "" && errors.Is(err, syscall.ENOENT):
		msg = "no daemon socket at " + t.socket
	case errors.Is(err, syscall.ECONNREFUSED):
		msg = "connection refused by " + t.String()
	default:
		msg = fmt.Sprintf("cannot connect to %s: %v", t, err)
	}
	return &cmdutil.Error{Code: cmdutil.ExitUnavailable, Err: errors.New(msg), Hints: hints}
}

func dial(ctx context.Context, t target) (link, error) {
	if t.socket != "" {
		if len(t.socket) > wire.MaxSocketPath() {
			return nil, &wire.SocketPathError{Path: t.socket, Max: wire.MaxSocketPath()}
		}
		var d net.Dialer
		nc, err := d.DialContext(ctx, "unix", t.socket)
		if err != nil {
			return nil, err
		}
		return &socketLink{nc: nc, r: wire.NewReader(nc, wire.ReaderOptions{}), w: bufio.NewWriter(nc)}, nil
	}
	h := http.Header{}
	if t.token != "" {
		h.Set("Authorization", "Bearer "+t.token)
	}
	if t.clientID != "" {
		h.Set("Fuseraft-Client-Id", t.clientID)
	}
	opts := &websocket.DialOptions{HTTPHeader: h}
	if t.tls != nil {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: t.tls, Proxy: http.ProxyFromEnvironment}}
	}
	dctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	ws, resp, err := websocket.Dial(dctx, t.url, opts)
	if err != nil {
		if resp != nil {
			var body [256]byte
			n, _ := resp.Body.Read(body[:])
			text := strings.TrimSpace(string(body[:n]))
			switch resp.StatusCode {
			case http.StatusUnauthorized, http.StatusForbidden:
				return nil, &errAuth{status: resp.StatusCode, body: text}
			case http.StatusBadRequest:
				return nil, cmdutil.Errorf(cmdutil.ExitUsage, "the daemon rejected the handshake: 400 Bad Request: %s", text)
			}
			return nil, &cmdutil.Error{Code: cmdutil.ExitProtocol,
				Err:   fmt.Errorf("the daemon answered the WebSocket handshake with %s", resp.Status),
				Hints: []string{"is " + t.url + " the attach endpoint of 'fuseraft serve' (…/attach)?"}}
		}
		return nil, err
	}
	ws.SetReadLimit(wire.DefaultMaxLine + 2)
	l := &wsLink{ws: ws}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	if t.ping > 0 {
		go l.pinger(t.ping)
	}
	return l, nil
}

// loadCA reads PEM certificates for --ca-cert.
func loadCA(path string) (*tls.Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, cmdutil.Usagef("cannot read --ca-cert: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, cmdutil.Usagef("--ca-cert %s holds no PEM certificate", path)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// holder is a link told when fr-attach stops reading it for a while (stdout is behind).
type holder interface{ hold(held bool) }

type socketLink struct {
	nc net.Conn
	r  *wire.Reader
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *socketLink) readLine() ([]byte, error) { return l.r.ReadLine() }

func (l *socketLink) writeLine(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(b)
	l.w.WriteByte('\n')
	return l.w.Flush()
}

func (l *socketLink) close() { l.nc.Close() }

type wsLink struct {
	ws     *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc
	// pingErr says why the pinger closed the connection, for the reader to report instead of
	// the "use of closed network connection" that closing causes.
	pingErr atomic.Pointer[error]
	// holding says fr-attach is not reading (stdout is behind); holds counts the times it
	// started. A pong then waits behind unread events, so a ping without one proves nothing.
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
			// Events kept coming, or we held back reading because stdout is behind: the
			// daemon is there, and its pong waits behind events not read yet.
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

// replaced reports whether a read error says a newer connection with our client id took over.
func replaced(err error) bool {
	var ce websocket.CloseError
	if !errors.As(err, &ce) {
		return false
	}
	r := strings.ToLower(ce.Reason)
	return ce.Code == 4001 || strings.Contains(r, "newer connection") || strings.Contains(r, "replaced")
}
