package redact

import (
	"strings"
	"testing"
)

// Token shapes in these tests are made up, of the right shape; none is a real credential.
var shapes = map[string]string{
	"bearer":      "Authorization: Bearer abcdefghij0123456789.xyz",
	"ghp":         "token ghp_" + strings.Repeat("a1B2", 9),
	"gho":         "gho_" + strings.Repeat("Z9", 18),
	"ghs":         "x=ghs_" + strings.Repeat("q", 36),
	"github_pat":  "github_pat_11ABCDEFG0123456789_" + strings.Repeat("x", 40),
	"aws":         "AKIAIOSFODNN7EXAMPLE",
	"google":      "key=AIza" + strings.Repeat("b", 35),
	"openai":      "OPENAI_API_KEY=sk-proj-" + strings.Repeat("c", 40),
	"anthropic":   "sk-ant-api03-" + strings.Repeat("d", 60),
	"slack":       "xoxb-1234567890-abcdefghij",
	"private key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----",
	"cut key":     "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA",
}

func secretPart(s string) string {
	// what must not survive: the text after the last separator, or the key's body
	for _, sep := range []string{"\n", " ", "="} {
		if i := strings.LastIndex(s, sep); i >= 0 && sep != "\n" {
			return s[i+1:]
		}
	}
	return s
}

func TestBuiltins(t *testing.T) {
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range shapes {
		got := r.String("before " + s + " after")
		if !strings.Contains(got, Mask) || strings.Contains(got, secretPart(s)) {
			t.Errorf("%s: %q left %q", name, got, secretPart(s))
		}
		if !strings.HasPrefix(got, "before ") {
			t.Errorf("%s: text before the secret lost: %q", name, got)
		}
	}
	if got := r.String("Bearer abcdefghij0123456789"); got != "Bearer "+Mask {
		t.Errorf("bearer: %q, want the word kept", got)
	}
	for _, ok := range []string{"the skeleton key", "task-runner", "AKIA is a prefix", "bearer of news", "ghp_short"} {
		if got := r.String(ok); got != ok {
			t.Errorf("ordinary text %q redacted: %q", ok, got)
		}
	}
	none, _ := New(Options{NoBuiltins: true})
	if got := none.String(shapes["aws"]); got != shapes["aws"] {
		t.Errorf("NoBuiltins still redacted: %q", got)
	}
	var nilR *Redactor
	if nilR.String("x") != "x" {
		t.Error("a nil Redactor changed text")
	}
}

func TestValuesAndPatterns(t *testing.T) {
	r, err := New(Options{Values: []string{"hunter22", "hunter22-long"}, Patterns: []string{`ticket-[0-9]+`}, NoBuiltins: true})
	if err != nil {
		t.Fatal(err)
	}
	got := r.String("pw hunter22-long and hunter22, see ticket-42")
	want := "pw " + Mask + " and " + Mask + ", see " + Mask
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []Options{{Patterns: []string{"("}}, {Patterns: []string{"a*"}}, {Values: []string{"1"}}} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range shapes {
		f.Add(s)
	}
	r, _ := New(Options{Values: []string{"s3cr3t-value"}})
	f.Fuzz(func(t *testing.T, s string) {
		got := r.String(s)
		if strings.Contains(got, "s3cr3t-value") {
			t.Errorf("value survived: %q", got)
		}
		if r.String(got) != got {
			t.Errorf("redacting twice changed %q again", got)
		}
	})
}
