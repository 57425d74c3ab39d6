package natsconn

import (
	"strings"
	"testing"
)

func TestSplitURL(t *testing.T) {
	for _, tc := range []struct {
		in, server, name string
		ok               bool
		err              string
	}{
		{"nats://127.0.0.1:4222/FR_AUDIT", "nats://127.0.0.1:4222", "FR_AUDIT", true, ""},
		{"tls://nats.example:4222/fr-budget/", "tls://nats.example:4222", "fr-budget", true, ""},
		{"approvals.jsonl", "", "", false, ""},
		{"./nats://x", "", "", false, ""},
		{"http://127.0.0.1/S", "", "", false, ""},
		{"nats://127.0.0.1:4222", "", "", true, "name the stream"},
		{"nats://127.0.0.1:4222/a/b", "", "", true, "name the stream"},
		{"nats://127.0.0.1:4222/a.b", "", "", true, "name the stream"},
		{"nats://u:p@127.0.0.1:4222/S", "", "", true, "credentials do not go in the URL"},
	} {
		server, name, ok, err := SplitURL(tc.in)
		if ok != tc.ok || server != tc.server || name != tc.name || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: got %q %q %v %v", tc.in, server, name, ok, err)
		}
	}
}

// Any argument is a file name, a server and a name, or an error: never a server without a
// name, nor credentials carried on.
func FuzzSplitURL(f *testing.F) {
	for _, s := range []string{"nats://127.0.0.1:4222/FR_AUDIT", "tls://h/x", "file", "nats://", "nats://u@h/x", "nats://h/%2e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		server, name, ok, err := SplitURL(s)
		if !ok || err != nil {
			if server != "" || name != "" {
				t.Fatalf("%q: %q %q with ok %v, err %v", s, server, name, ok, err)
			}
			return
		}
		if name == "" || strings.ContainsAny(name, "/.*> ") || strings.Contains(server, "@") {
			t.Fatalf("%q: server %q name %q", s, server, name)
		}
	})
}
