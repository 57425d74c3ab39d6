package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// EnvURL is the environment variable that names the NATS server when --nats is not given.
const EnvURL = "FR_NATS_URL"

// EnvCreds names a credentials file (JWT and NKEY seed) used when no --nats-* option
// authenticates.
const EnvCreds = "FR_NATS_CREDS"

// Conn says how to reach the NATS server: its URL and credentials, all from flags that name
// files (never a secret on the command line) or from the environment.
type Conn struct {
	URL          string
	Creds        string // --nats-creds: a .creds file (JWT and NKEY seed)
	NKey         string // --nats-nkey: a file holding an NKEY seed
	User         string // --nats-user, with the password read from PasswordFile
	PasswordFile string
	CA           string // --nats-ca: PEM file of the CA that signed the server's certificate
	Name         string // the client's name, as the server's monitoring shows it
}

// Flags are the connection flags every fleet command takes. The first is --nats; commands add
// --pool themselves (fr-dispatch and fr-attach have flags of their own of the same shape).
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "nats", Usage: "use the fleet on the NATS server at `URL` (nats://HOST:4222, a comma-separated cluster list; $" + EnvURL + ")"},
		&cli.StringFlag{Name: "nats-creds", Usage: "authenticate to NATS with the credentials `FILE` (JWT and NKEY seed)"},
		&cli.StringFlag{Name: "nats-nkey", Usage: "authenticate to NATS with the NKEY seed in `FILE`"},
		&cli.StringFlag{Name: "nats-user", Usage: "authenticate to NATS as `USER` (password from --nats-password-file)"},
		&cli.StringFlag{Name: "nats-password-file", Usage: "read the NATS password from `FILE`"},
		&cli.StringFlag{Name: "nats-ca", Usage: "trust the PEM certificates in `FILE` for the NATS server's TLS"},
	}
}

// ConnFrom reads the connection flags. The URL is --nats, else $FR_NATS_URL; empty means no
// fleet (the command talks to one daemon). A password in --nats's URL is refused: other users
// can read a process's arguments.
func ConnFrom(c *cli.Context, getenv func(string) string) (Conn, error) {
	cn := Conn{URL: c.String("nats"), Creds: c.String("nats-creds"), NKey: c.String("nats-nkey"),
		User: c.String("nats-user"), PasswordFile: c.String("nats-password-file"), CA: c.String("nats-ca")}
	if cn.URL != "" {
		if hasPassword(cn.URL) {
			return cn, cmdutil.WithHint(cmdutil.Usagef("--nats must not carry a password: other users can read it in the process list"),
				"use --nats-user with --nats-password-file, --nats-creds, or set "+EnvURL)
		}
	} else if getenv != nil {
		cn.URL = strings.TrimSpace(getenv(EnvURL))
	}
	if cn.URL == "" {
		if cn.Creds != "" || cn.NKey != "" || cn.User != "" || cn.PasswordFile != "" || cn.CA != "" {
			return cn, cmdutil.Usagef("the --nats-* options need a server: pass --nats URL or set %s", EnvURL)
		}
		return cn, nil
	}
	for _, u := range strings.Split(cn.URL, ",") {
		pu, err := url.Parse(strings.TrimSpace(u))
		if err != nil || pu.Host == "" || (pu.Scheme != "nats" && pu.Scheme != "tls" && pu.Scheme != "ws" && pu.Scheme != "wss") {
			return cn, cmdutil.WithHint(cmdutil.Usagef("NATS URL %q is not valid", redact(u)), "it is nats://HOST:PORT (tls://, ws://, wss:// too), several separated by commas")
		}
	}
	if (cn.User == "") != (cn.PasswordFile == "") {
		return cn, cmdutil.Usagef("--nats-user and --nats-password-file go together")
	}
	n := 0
	for _, s := range []string{cn.Creds, cn.NKey, cn.User} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return cn, cmdutil.Usagef("choose one of --nats-creds, --nats-nkey and --nats-user")
	}
	for _, f := range []struct{ flag, path string }{{"--nats-creds", cn.Creds}, {"--nats-nkey", cn.NKey}, {"--nats-password-file", cn.PasswordFile}, {"--nats-ca", cn.CA}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return cn, cmdutil.Usagef("%s: %v", f.flag, err)
		}
	}
	return cn, nil
}

func hasPassword(list string) bool {
	for _, u := range strings.Split(list, ",") {
		if pu, err := url.Parse(strings.TrimSpace(u)); err == nil && pu.User != nil {
			if _, ok := pu.User.Password(); ok {
				return true
			}
			if pu.User.Username() != "" {
				return true // a token in the user part is a secret too
			}
		}
	}
	return false
}

// redact masks the credentials of a URL for messages.
func redact(u string) string {
	pu, err := url.Parse(strings.TrimSpace(u))
	if err != nil || pu.User == nil {
		return u
	}
	pu.User = url.User("xxxxx")
	return pu.String()
}

// String names the server for messages, credentials masked.
func (cn Conn) String() string {
	parts := strings.Split(cn.URL, ",")
	for i, p := range parts {
		parts[i] = redact(p)
	}
	return strings.Join(parts, ",")
}

// Client is a connection to the fleet's server with JetStream.
type Client struct {
	NC *nats.Conn
	JS jetstream.JetStream
}

// Close drains nothing: it closes at once (what must be stored was waited for).
func (c *Client) Close() {
	if c != nil && c.NC != nil {
		c.NC.Close()
	}
}

// Dial connects. The connection is retried for ever once established (the server may restart);
// the first connection must succeed within the timeout, else the error has exit code 10.
func Dial(ctx context.Context, cn Conn, opts ...nats.Option) (*Client, error) {
	o := []nats.Option{
		nats.Name(cn.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.Timeout(5 * time.Second),
		nats.ReconnectBufSize(64 << 20),
	}
	if cn.Creds == "" && cn.NKey == "" && cn.User == "" {
		cn.Creds = os.Getenv(EnvCreds)
	}
	switch {
	case cn.Creds != "":
		o = append(o, nats.UserCredentials(cn.Creds))
	case cn.NKey != "":
		opt, err := nats.NkeyOptionFromSeed(cn.NKey)
		if err != nil {
			return nil, cmdutil.Usagef("--nats-nkey: %v", err)
		}
		o = append(o, opt)
	case cn.User != "":
		b, err := os.ReadFile(cn.PasswordFile)
		if err != nil {
			return nil, cmdutil.Usagef("--nats-password-file: %v", err)
		}
		o = append(o, nats.UserInfo(cn.User, strings.TrimSpace(cmdutil.FirstLine(string(b)))))
	}
	if cn.CA != "" {
		o = append(o, nats.RootCAs(cn.CA))
	}
	o = append(o, opts...)
	nc, err := nats.Connect(cn.URL, o...)
	if err != nil {
		code := cmdutil.ExitUnavailable
		if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || strings.Contains(err.Error(), "Authorization") {
			code = cmdutil.ExitRefused
		}
		return nil, cmdutil.WithHint(cmdutil.Errorf(code, "cannot connect to NATS at %s: %v", cn, err),
			"start one with 'fr-worker --embedded-nats', or point --nats (or "+EnvURL+") at your server")
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096), jetstream.WithPublishAsyncTimeout(5*time.Second))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("jetstream: %v", err)
	}
	return &Client{NC: nc, JS: js}, nil
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

// Connect is Dial for a command that needs the connection only (an audit stream, a budget
// bucket): the server at url (nats://HOST:PORT/NAME's server part), as name, with the
// credentials file creds (else $FR_NATS_CREDS) and the CA file ca, if any.
func Connect(ctx context.Context, url, name, creds, ca string) (*nats.Conn, error) {
	cl, err := Dial(ctx, Conn{URL: url, Name: name, Creds: creds, CA: ca})
	if err != nil {
		return nil, err
	}
	return cl.NC, nil
}
