package wire

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// maxRedirects bounds the redirects followed within one origin, as net/http's default does.
const maxRedirects = 10

// RedirectError is a redirect that was not followed: to another origin (scheme, host and
// port) than the request's, where the credentials the request carries must not go, or one
// too many. The URLs are redacted (RedactURL).
type RedirectError struct {
	From, To string
	TooMany  bool
}

// Error says where the redirect led and why it was not followed.
func (e *RedirectError) Error() string {
	if e.TooMany {
		return fmt.Sprintf("%s redirects more than %d times", e.From, maxRedirects)
	}
	return fmt.Sprintf("%s redirects to another origin, %s: not followed, so that the token is not sent there", e.From, e.To)
}

// HTTPClient returns the HTTP client every fr command talks to a daemon with: TLS as cfg says
// (nil: the system roots), proxies from the environment, and redirects followed only within
// the origin of the first request (scheme, host and port, the default port spelled or not).
// A redirect to another origin ends the request with a *RedirectError (wrapped in a
// *url.Error), so a token meant for the daemon never reaches another host, whether it is
// set as a header of the request or added by the client's transport.
func HTTPClient(cfg *tls.Config) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg != nil {
		tr.TLSClientConfig = cfg
	}
	return &http.Client{Transport: tr, CheckRedirect: checkRedirect}
}

// checkRedirect is the http.Client CheckRedirect of HTTPClient: a redirect within the first
// request's origin is followed (with its headers), any other is a *RedirectError.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	first := via[0].URL
	if !SameOrigin(first, req.URL) {
		return &RedirectError{From: RedactURL(first.String()), To: RedactURL(req.URL.String())}
	}
	if len(via) >= maxRedirects {
		return &RedirectError{From: RedactURL(first.String()), To: RedactURL(req.URL.String()), TooMany: true}
	}
	return nil
}

// SameOrigin reports whether a and b have the same origin: scheme, host and port, where ws
// is http, wss is https, and a missing port is the scheme's default. A URL without a host has
// no origin, not even its own.
func SameOrigin(a, b *url.URL) bool {
	sa, ha, pa := origin(a)
	sb, hb, pb := origin(b)
	return ha != "" && sa == sb && ha == hb && pa == pb
}

func origin(u *url.URL) (scheme, host, port string) {
	scheme = strings.ToLower(u.Scheme)
	switch scheme {
	case "ws":
		scheme = "http"
	case "wss":
		scheme = "https"
	}
	host, port = strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme, host, port
}

// RedactURL returns raw with the password of its user info masked, as url.URL.Redacted
// does (ws://user:xxxxx@host/…), and the value of every query parameter whose name says it
// holds a credential (token, access_token, password, secret, key, auth…) masked too. The
// rest of the text is kept as it is, so that a URL too broken to parse is masked as well.
func RedactURL(raw string) string {
	start := 0 // where the authority starts: after "scheme://", or after a leading "//"
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + 3
	} else if strings.HasPrefix(raw, "//") {
		start = 2
	} else {
		return raw
	}
	rest := raw[start:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		if colon := strings.Index(rest[:at], ":"); colon >= 0 {
			rest = rest[:colon+1] + "xxxxx" + rest[at:]
		}
	}
	q := strings.Index(rest, "?")
	if q < 0 {
		return raw[:start] + rest
	}
	query, frag := rest[q+1:], ""
	if h := strings.Index(query, "#"); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	params := strings.Split(query, "&")
	for k, p := range params {
		if name, _, ok := strings.Cut(p, "="); ok && secretParam(name) {
			params[k] = name + "=xxxxx"
		}
	}
	return raw[:start] + rest[:q+1] + strings.Join(params, "&") + frag
}

// RedactURLs is text with every URL in it passed through RedactURL: for messages that may
// quote a URL, whoever wrote them (an error from a library quotes the request's URL).
func RedactURLs(text string) string {
	if !strings.Contains(text, "://") {
		return text
	}
	return urlInText.ReplaceAllStringFunc(text, RedactURL)
}

// urlInText finds URLs in a message: a scheme, "://", and everything up to a space or a quote.
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>` + "`" + `]+`)

// secretParam reports whether a query parameter's name says it holds a credential.
func secretParam(name string) bool {
	n := strings.ToLower(name)
	if u, err := url.QueryUnescape(n); err == nil {
		n = u
	}
	for _, w := range []string{"token", "password", "passwd", "pwd", "secret", "auth", "key", "credential", "signature", "sig"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
