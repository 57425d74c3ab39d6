// Package natsconn connects the commands of a fleet to its NATS server, and reads the
// nats://HOST:PORT/NAME form that names a stream or bucket on it.
package natsconn

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// Options are how a command reaches the NATS server: credentials come from files, never from
// the command line.
type Options struct {
	Name  string // the client's name, shown by the server
	Creds string // a credentials file (JWT and NKEY seed), --nats-creds; else $FR_NATS_CREDS
	CA    string // a CA certificate file for tls://, --nats-ca
}

// Connect connects to the NATS server at u (nats://HOST:PORT, tls://..., or several joined
// by commas), reconnecting for ever once connected.
func Connect(u string, o Options) (*nats.Conn, error) {
	if o.Creds == "" {
		o.Creds = os.Getenv("FR_NATS_CREDS")
	}
	opts := []nats.Option{nats.Name(o.Name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.Timeout(10 * time.Second)}
	if o.Creds != "" {
		opts = append(opts, nats.UserCredentials(o.Creds))
	}
	if o.CA != "" {
		opts = append(opts, nats.RootCAs(o.CA))
	}
	return nats.Connect(u, opts...)
}

// SplitURL splits nats://HOST:PORT/NAME, the form verify-audit and fr-report --audit take for
// an audit stream (and --budget-kv for a bucket), into the server's URL and NAME. ok is false
// when s is not such a URL (a file name).
func SplitURL(s string) (server, name string, ok bool, err error) {
	scheme, _, found := strings.Cut(s, "://")
	if !found || (scheme != "nats" && scheme != "tls") {
		return "", "", false, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", "", true, fmt.Errorf("%q: %v", s, err)
	}
	if u.User != nil {
		return "", "", true, fmt.Errorf("%q: credentials do not go in the URL: use --nats-creds FILE", s)
	}
	name = strings.Trim(u.Path, "/")
	if name == "" || strings.ContainsAny(name, "/.*> ") {
		return "", "", true, fmt.Errorf("%q: name the stream or bucket after the address: %s://%s/NAME", s, scheme, u.Host)
	}
	return scheme + "://" + u.Host, name, true, nil
}
