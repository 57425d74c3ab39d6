package wire

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"ws://user:pa55word@127.0.0.1:8080/attach":          "ws://user:xxxxx@127.0.0.1:8080/attach",
		"ws://127.0.0.1:8080/attach":                        "ws://127.0.0.1:8080/attach",
		"ws://user@host/attach":                             "ws://user@host/attach",
		"http://u:p@ss@host:1/mcp?token=abc&x=1#f":          "http://u:xxxxx@host:1/mcp?token=xxxxx&x=1#f",
		"http://host/mcp?access_token=abc&Api-Key=k&a=b":    "http://host/mcp?access_token=xxxxx&Api-Key=xxxxx&a=b",
		"http://user:pa55word@[::1":                         "http://user:xxxxx@[::1",
		"wss://host/a?b=c":                                  "wss://host/a?b=c",
		"not a url":                                         "not a url",
		"http://user:pa55word@host":                         "http://user:xxxxx@host",
		"http://host/p@th:x":                                "http://host/p@th:x",
		"http://host/mcp?%74oken=abc":                       "http://host/mcp?%74oken=xxxxx",
		"ftp://user:pa55word@host/":                         "ftp://user:xxxxx@host/",
		"http://user:pa55word@host:1/mcp?password=a&token=": "http://user:xxxxx@host:1/mcp?password=xxxxx&token=xxxxx",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	msg := `Post "http://user:***@127.0.0.1:1/mcp?token=t0ken": dial: refused; cannot connect to ws://a:pa55word@h/attach, and 'wss://b:pw@h'`
	got := RedactURLs(msg)
	for _, secret := range []string{"t0ken", "pa55word", ":pw@"} {
		if strings.Contains(got, secret) {
			t.Errorf("RedactURLs left %q in %q", secret, got)
		}
	}
	if !strings.Contains(got, "dial: refused; cannot connect to ws://a:xxxxx@h/attach, and 'wss://b:xxxxx@h'") {
		t.Errorf("RedactURLs changed more than the secrets: %q", got)
	}
}

func FuzzRedactURL(f *testing.F) {
	f.Add("ws://user:pa55word@127.0.0.1:8080/attach?token=x")
	f.Add("http://a:b@c:d@e/f?g=h&token=i#j")
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		got := RedactURL(raw)
		if err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && len(p) > 2 && !strings.Contains(strings.ReplaceAll(raw, p, ""), p) &&
				strings.Contains(got, "@") && strings.Contains(got, ":"+p+"@") {
				t.Errorf("RedactURL(%q) = %q shows the password", raw, got)
			}
		}
		if RedactURL(got) != got {
			t.Errorf("RedactURL is not idempotent on %q: %q then %q", raw, got, RedactURL(got))
		}
	})
}

func TestSameOrigin(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/other", true},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp", false},
		{"http://127.0.0.1/mcp", "http://127.0.0.1:80/mcp", true},
		{"https://h/mcp", "https://h:443/x", true},
		{"https://h/mcp", "http://h/mcp", false},
		{"http://h/mcp", "http://evil/mcp", false},
		{"HTTP://H/mcp", "http://h:80/", true},
		{"ws://h:1/attach", "http://h:1/attach", true},
		{"wss://h/attach", "https://h:443/", true},
		{"/relative", "/relative", false},
	} {
		a, _ := url.Parse(tt.a)
		b, _ := url.Parse(tt.b)
		if got := SameOrigin(a, b); got != tt.same {
			t.Errorf("SameOrigin(%s, %s) = %v", tt.a, tt.b, got)
		}
	}
}

// The shared client follows a redirect within the origin with its headers, and refuses one to
// another origin before anything is sent there.
func TestHTTPClientRedirects(t *testing.T) {
	var reached int
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/ok", http.StatusTemporaryRedirect)
		case "/ok":
			w.Write([]byte(r.Header.Get("Authorization")))
		}
	}))
	defer srv.Close()
	c := HTTPClient(nil)
	req, _ := http.NewRequest("POST", srv.URL+"/here", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer t")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var b [32]byte
	n, _ := resp.Body.Read(b[:])
	resp.Body.Close()
	if string(b[:n]) != "Bearer t" {
		t.Errorf("the header after a redirect within the origin: %q", b[:n])
	}
	req, _ = http.NewRequest("POST", srv.URL+"/away", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer t")
	_, err = c.Do(req)
	var redirect *RedirectError
	if !errors.As(err, &redirect) || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("a redirect to another origin: %v", err)
	}
	if reached != 0 {
		t.Errorf("the other origin was reached %d times", reached)
	}
}
