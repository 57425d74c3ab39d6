package wire

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"
)

// Daemon says where a fuseraft serve daemon listens, how to authenticate, and how to keep the
// connection; Dial connects to it.
type Daemon struct {
	// Socket is the daemon's Unix socket (DefaultSocketPath finds the one fuseraft attach
	// uses), or else URL its WebSocket: ws://HOST:PORT/attach, or wss:// with TLS.
	Socket string
	URL    string
	// Token is sent as "Authorization: Bearer" over the WebSocket; ClientID as
	// Fuseraft-Client-Id (see ValidClientID), which keeps this client's tasks, results and
	// pending approval across reconnects. The Unix socket carries neither.
	Token    string
	ClientID string
	// TLS configures wss://; nil trusts the system roots (LoadCA reads a CA's certificates).
	TLS *tls.Config
	// Ping is how often the WebSocket is pinged, so a daemon that vanished is noticed within
	// two intervals; 0 sends no pings.
	Ping time.Duration
	// HelloTimeout bounds the WebSocket handshake and the wait for hello on each connection;
	// 0 means 30s.
	HelloTimeout time.Duration

	// A connection that drops is dialled again, after a wait between 0 and 100ms·2^(n-1)
	// for the n-th attempt in a row, at most MaxBackoff (0: 10s): exponential backoff with
	// full jitter. MaxReconnects bounds the failed attempts in a row (negative: no bound;
	// 0: no reconnecting), GiveUpAfter the time without a connection (0: no bound). A
	// refused handshake (*AuthError) twice alike in a row, any other *HandshakeError, a redirect
	// to another origin (*RedirectError), and a newer connection with our client id (ErrReplaced) end the Conn at once.
	MaxBackoff    time.Duration
	MaxReconnects int
	GiveUpAfter   time.Duration
	// Reconnecting, when set, is told before each wait: the attempt about to be made
	// (1-based), the wait, and what was lost (a *DropError, or the last attempt's error).
	// It is called from the Conn's reading goroutine.
	Reconnecting func(attempt int, wait time.Duration, lost error)

	Options
}

// String names the daemon: its URL, with any password in it masked (RedactURL), or its
// socket path.
func (d *Daemon) String() string {
	if d == nil {
		return "fuseraft"
	}
	if d.URL != "" {
		return RedactURL(d.URL)
	}
	return d.Socket
}

func (d *Daemon) helloTimeout() time.Duration {
	if d != nil && d.HelloTimeout > 0 {
		return d.HelloTimeout
	}
	return 30 * time.Second
}

// GaveUpError ends a Conn to a daemon that could not be reached again.
type GaveUpError struct {
	Target   string
	Attempts int           // reconnect attempts made in a row
	After    time.Duration // Daemon.GiveUpAfter when that ran out; 0 when MaxReconnects did
	Lost     error         // what was lost: the drop, or the last attempt's error
}

// Error says what was lost and after how many attempts the Conn gave up.
func (e *GaveUpError) Error() string {
	if e.After > 0 {
		return fmt.Sprintf("no connection to %s for %s; gave up after %d reconnect attempts: %v", e.Target, e.After, e.Attempts, e.Lost)
	}
	return fmt.Sprintf("lost the connection to %s (%v) and gave up after %d reconnect attempts", e.Target, e.Lost, e.Attempts)
}

// Unwrap returns what was lost.
func (e *GaveUpError) Unwrap() error { return e.Lost }

// Dial connects to a fuseraft serve daemon and returns the Conn once the connection is open;
// the daemon's hello is the first line Next returns. A connection that cannot be opened is an
// error at once (a *SocketPathError, an *AuthError, a *HandshakeError, or the dialer's); one
// that drops later is dialled again as Daemon says. ctx bounds the whole Conn: once it is
// done the Conn ends with ctx's error.
func Dial(ctx context.Context, d Daemon) (*Conn, error) {
	c := newConn(ctx, d.Options, Serve)
	dd := d
	c.daemon = &dd
	l, err := c.daemon.dial(ctx)
	if err != nil {
		c.cancel()
		return nil, err
	}
	go c.run(l)
	return c, nil
}

// reconnect dials the daemon again until it answers, giving up as Daemon says.
func (d *Daemon) reconnect(ctx context.Context, c *Conn, lost error) (link, error) {
	maxWait := d.MaxBackoff
	if maxWait <= 0 {
		maxWait = 10 * time.Second
	}
	lostAt := time.Now()
	lastAuth := ""
	for attempt := 0; ; {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if d.MaxReconnects >= 0 && attempt >= d.MaxReconnects {
			return nil, &GaveUpError{Target: d.String(), Attempts: attempt, Lost: lost}
		}
		left := d.GiveUpAfter - time.Since(lostAt)
		if d.GiveUpAfter > 0 && left <= 0 {
			return nil, &GaveUpError{Target: d.String(), Attempts: attempt, After: d.GiveUpAfter, Lost: lost}
		}
		attempt++
		wait := Backoff(attempt, maxWait, rand.Int64N)
		if d.GiveUpAfter > 0 && wait > left {
			wait = left // one last attempt when the time is up
		}
		if d.Reconnecting != nil {
			d.Reconnecting(attempt, wait, lost)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		l, err := d.dial(ctx)
		if err == nil {
			return l, nil
		}
		var ae *AuthError
		var he *HandshakeError
		var se *SocketPathError
		var re *RedirectError
		switch {
		case errors.As(err, &ae):
			if ae.Error() == lastAuth {
				return nil, err
			}
			lastAuth = ae.Error()
		case errors.As(err, &he), errors.As(err, &se), errors.As(err, &re):
			return nil, err
		default:
			lastAuth = ""
		}
		lost = err
	}
}

// Backoff is the wait before reconnect attempt n (1-based): exponential backoff with full
// jitter, a random duration between 0 and min(max, 100ms·2^(n-1)). randN returns a number in
// [0, n) (rand.Int64N).
func Backoff(n int, max time.Duration, randN func(int64) int64) time.Duration {
	ceiling := 100 * time.Millisecond << min(n-1, 30)
	if ceiling > max || ceiling <= 0 {
		ceiling = max
	}
	return time.Duration(randN(int64(ceiling) + 1))
}

func newBufWriter(w io.Writer) *bufio.Writer { return bufio.NewWriter(w) }
