package attach

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// connectTimeout bounds each step of connecting: the WebSocket handshake, and the wait for the
// daemon's hello on either transport. A variable so that tests can shorten it.
var connectTimeout = 30 * time.Second

// target says where the daemon is and how to authenticate.
type target struct {
	socket   string // the Unix socket path, or
	url      string // ws:// or wss:// URL
	token    string
	clientID string
	tls      *tls.Config
	ping     time.Duration
}

// String names the daemon in messages: its URL with any password masked, or its socket.
func (t target) String() string {
	if t.url != "" {
		return wire.RedactURL(t.url)
	}
	return t.socket
}

// daemon is how fr-attach connects and reconnects to the daemon.
func (a *attacher) daemon() wire.Daemon {
	t := a.o.target
	return wire.Daemon{
		Socket: t.socket, URL: t.url, Token: t.token, ClientID: t.clientID, TLS: t.tls, Ping: t.ping,
		HelloTimeout:  connectTimeout,
		MaxBackoff:    a.o.maxBackoff,
		MaxReconnects: a.o.maxReconnects,
		GiveUpAfter:   a.o.giveUp,
		Reconnecting: func(attempt int, wait time.Duration, lost error) {
			a.later(func() {
				if a.ui != nil {
					a.ui.reconnecting(attempt, wait, lost)
					return
				}
				cmdutil.Sayf(a.s.Err, prog, "reconnecting to %s in %s (attempt %d): %v", t,
					wait.Round(time.Millisecond), attempt, lost)
			})
		},
		Options: wire.Options{
			Gate:       a.gate,
			AnyVersion: a.o.anyVersion,
			Warn: func(err error) {
				a.later(func() { a.warnf("%v; going on (--any-version)", err) })
			},
			Decided:    a.decided,
			BeforeRead: a.beforeRead,
		},
	}
}

// later runs f in the attach's own goroutine, between events: the connection's goroutine
// tells of reconnects that way.
func (a *attacher) later(f func()) {
	select {
	case a.notes <- f:
	case <-a.done:
	}
}

// beforeRead holds the connection while stdout is behind: nothing more is read until it takes
// some (a pong waiting behind unread events is not taken for a dead daemon meanwhile).
func (a *attacher) beforeRead(stop <-chan struct{}) {
	if a.outq != nil && a.outq.full() {
		a.outq.waitRoom(stop)
	}
}

// connError turns how the connection ended into fr-attach's error.
func connError(t target, err error) error {
	var ve *wire.VersionError
	var nh *wire.NoHelloError
	var gu *wire.GaveUpError
	var pe *wire.ProtocolError
	switch {
	case errors.Is(err, wire.ErrReplaced):
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed,
			"a newer connection with client id %s replaced this one; stopping", t.clientID),
			"give each fr-attach its own --client-id")
	case errors.As(err, &nh):
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUnavailable, "%v", err),
			"is it a 'fuseraft serve' daemon, and is it responding?")
	case errors.As(err, &ve):
		return cmdutil.WithHint(err, "pass --any-version to go on anyway")
	case errors.As(err, &pe):
		return err
	case errors.As(err, &gu) && gu.After > 0:
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUnavailable,
			"no connection to %s for %s (--give-up-after); gave up after %d reconnect attempts: %v",
			t, gu.After, gu.Attempts, gu.Lost),
			"check that 'fuseraft serve' is running, or raise --give-up-after (0: never give up)")
	case errors.As(err, &gu):
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUnavailable,
			"lost the connection to %s (%v) and gave up after %d reconnect attempts", t, gu.Lost, gu.Attempts),
			"raise --max-reconnects, or check that 'fuseraft serve' is running")
	}
	return dialError(t, err)
}

// dialError turns a failed connection into an *cmdutil.Error with the right exit code.
func dialError(t target, err error) error {
	var ae *wire.AuthError
	if errors.As(err, &ae) {
		hint := "check the token in --token-file or FUSERAFT_SERVE_TOKEN"
		if ae.Status == http.StatusForbidden {
			hint = "the daemon refuses this handshake (fr-attach never sends an Origin header; is a proxy adding one?)"
		}
		return cmdutil.WithHint(&cmdutil.Error{Code: cmdutil.ExitRefused, Err: ae}, hint)
	}
	var he *wire.HandshakeError
	if errors.As(err, &he) {
		if he.Status == http.StatusBadRequest {
			return cmdutil.Errorf(cmdutil.ExitUsage, "%v", he)
		}
		return &cmdutil.Error{Code: cmdutil.ExitProtocol, Err: he,
			Hints: []string{"is " + t.String() + " the attach endpoint of 'fuseraft serve' (…/attach)?"}}
	}
	var re *wire.RedirectError
	if errors.As(err, &re) {
		return cmdutil.WithHint(&cmdutil.Error{Code: cmdutil.ExitRefused, Err: re},
			"pass the URL the daemon listens on itself (--url ws://HOST:PORT/attach)")
	}
	var se *wire.SocketPathError
	if errors.As(err, &se) {
		return cmdutil.WithHint(err, "pass a shorter --socket PATH, or set FUSERAFT_HOME to a shorter directory")
	}
	hints := []string{"is 'fuseraft serve' running for this project?", "pass --socket PATH or --url ws://HOST:PORT/attach"}
	var msg string
	var ue x509.UnknownAuthorityError
	var hn x509.HostnameError
	var cv *tls.CertificateVerificationError
	switch {
	case errors.As(err, &ue) || errors.As(err, &hn) || errors.As(err, &cv):
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
