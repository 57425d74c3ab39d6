package redact

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The values of the variables fr reads its own secrets from are redacted without being named;
// one too short to redact safely is left alone with a warning, never masked all over the text.
func TestConfigureSecretEnv(t *testing.T) {
	const text = "the token is Kq7vN2wRtZ3xLp9m; ok, da, abc"
	for _, c := range []struct {
		name  string
		in    string
		env   map[string]string
		named []string
		want  string
		warn  string
		err   string
	}{
		{"set", text, map[string]string{"FUSERAFT_SERVE_TOKEN": "Kq7vN2wRtZ3xLp9m"}, nil,
			"the token is [REDACTED]; ok, da, abc", "", ""},
		{"read with its line end, as from a file", text, map[string]string{"FUSERAFT_SERVE_TOKEN": " Kq7vN2wRtZ3xLp9m\n"}, nil,
			"the token is [REDACTED]; ok, da, abc", "", ""},
		{"unset", text, nil, nil, text, "", ""},
		{"too short: left alone", text, map[string]string{"FUSERAFT_SERVE_TOKEN": "da"}, nil,
			text, "$FUSERAFT_SERVE_TOKEN is shorter than 6 bytes: its value is not redacted", ""},
		{"five bytes: left alone", text, map[string]string{"FUSERAFT_SERVE_TOKEN": "token"}, nil,
			text, "shorter than 6 bytes", ""},
		{"six bytes: redacted", "the token is Kq7vN2wRtZLp9m; ok, da, abc", map[string]string{"FUSERAFT_SERVE_TOKEN": "vN2wRt"}, nil,
			"the token is Kq7[REDACTED]ZLp9m; ok, da, abc", "", ""},
		{"named as well", text, map[string]string{"FUSERAFT_SERVE_TOKEN": "Kq7vN2wRtZ3xLp9m"}, []string{"FUSERAFT_SERVE_TOKEN"},
			"the token is [REDACTED]; ok, da, abc", "", ""},
		{"named, and too short: an error, as any --redact-env", text, map[string]string{"FUSERAFT_SERVE_TOKEN": "da"}, []string{"FUSERAFT_SERVE_TOKEN"},
			"", "", "too short to redact safely"},
		{"named with its line end", text, map[string]string{"DEPLOY": "Kq7vN2wRtZ3xLp9m\n"}, []string{"DEPLOY"},
			"the token is [REDACTED]; ok, da, abc", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var warned []string
			r, err := Configure(c.named, nil, func(k string) string { return c.env[k] },
				func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) })
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.String(c.in); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			w := strings.Join(warned, "\n")
			if (c.warn == "") != (w == "") || !strings.Contains(w, c.warn) {
				t.Errorf("warnings %q, want %q", w, c.warn)
			}
		})
	}
}

// Every environment variable fr's commands read that holds a secret (by its name: a token, a
// key, a password, a secret) is on the list, so redaction knows it without being told.
func TestSecretEnvListed(t *testing.T) {
	listed := map[string]bool{}
	for _, n := range SecretEnv {
		listed[n] = true
	}
	read := regexp.MustCompile(`(?:Getenv|LookupEnv|\.Env)\("([A-Z0-9_]+)"\)`)
	secret := regexp.MustCompile(`TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|CREDENTIAL`)
	found := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range read.FindAllStringSubmatch(string(b), -1) {
			if secret.MatchString(m[1]) {
				found++
				if !listed[m[1]] {
					t.Errorf("%s reads $%s, which is not in redact.SecretEnv", path, m[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no command reads $FUSERAFT_SERVE_TOKEN: the search is broken")
	}
}
