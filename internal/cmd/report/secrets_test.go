package report

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/cmd/approve"
	"github.com/fuseraft/fr/internal/cmdutil"
)

// The secrets of testdata/secrets.yaml, as they would leak.
var secrets = []string{
	"ghp_aaaaBBBBccccDDDDeeeeFFFFggggHHHHiiii", "aaaaBBBBcccc",
	"hunter2-deploy-value",
	"AKIAIOSFODNN7EXAMPLE",
	"MIIEpAIBAAKCAQEAsecretbody",
	"abcdefghij0123456789secret",
	"sk-proj-cccc", "cccccccccccccccccccc",
	"xoxb-1234567890",
	"internal-4242",
}

// Secrets placed in a session never appear in any format; with --no-redact they do (so the
// test can see them when they are there).
func TestSecretsNeverAppear(t *testing.T) {
	session, audit := recordChat(t, ciPolicy, map[string]string{"FUSERAFT_VSCODE_QUESTIONS": "1"}, []string{"show me"},
		"--scenario", "testdata/secrets.yaml", "repl", "--vscode", "--no-banner")
	vars := map[string]string{"DEPLOY_KEY": "hunter2-deploy-value"}
	for _, format := range []string{"markdown", "github", "junit", "html", "json"} {
		out, errs, code := report(t, session, vars, "--format", format, "--audit", audit,
			"--redact-env", "DEPLOY_KEY", "--redact-pattern", `internal-[0-9]+`)
		if code != 0 {
			t.Fatalf("--format %s: exit %d: %s", format, code, errs)
		}
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("--format %s shows the secret %q", format, s)
			}
		}
		if !strings.Contains(out, "REDACTED") {
			t.Errorf("--format %s: nothing says what was redacted", format)
		}
		if format == "json" && strings.Contains(out, `"decision":"unknown"`) {
			t.Errorf("a prompt with a secret in it was not matched to its audit record: %s", out)
		}
		raw, _, _ := report(t, session, vars, "--format", format, "--audit", audit, "--no-redact")
		if format == "html" || format == "json" { // the formats that show the whole transcript
			for _, s := range []string{"hunter2-deploy-value", "AKIAIOSFODNN7EXAMPLE"} {
				if !strings.Contains(raw, s) {
					t.Errorf("--format %s --no-redact: %q is not in the report, so the test above proves nothing", format, s)
				}
			}
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "pdf"}, `--format must be markdown, github, junit, html or json, not "pdf"`},
		{[]string{"--redact-pattern", "("}, "redact pattern"},
		{[]string{"--redact-env", "SHORT"}, "too short"},
		{[]string{"--no-redact", "--redact-env", "X"}, "choose one"},
		{[]string{"--prices", "testdata/nothing.yaml"}, "prices"},
		{[]string{"--audit", "testdata/run.yaml"}, "audit log"},
		{[]string{"no-such-file.jsonl"}, "no-such-file"},
		{[]string{"--bogus"}, "bogus"},
	} {
		_, errs, code := report(t, nil, map[string]string{"SHORT": "abc"}, tt.args...)
		if code != 2 || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errs, tt.want)
		}
	}
}

func TestExitStatus(t *testing.T) {
	fail, _ := record(t, ciPolicy, nil, "--scenario", "testdata/fail.yaml", "run", "--bridge", "-c", "ci.yaml", "ship it")
	ok, _ := record(t, ciPolicy, nil, "--scenario", "testdata/run.yaml", "run", "--bridge", "-c", "ci.yaml", "fix it")
	cut := ok[:len(ok)/2]
	for _, tt := range []struct {
		name    string
		session []byte
		args    []string
		want    int
	}{
		{"failed, without --exit-status", fail, nil, 0},
		{"failed", fail, []string{"--exit-status"}, 1},
		{"succeeded", ok, []string{"--exit-status"}, 0},
		{"cut short", cut, []string{"--exit-status"}, 1},
		{"empty", nil, []string{"--exit-status"}, 1},
		{"noise only", []byte("hello\n[1,2]\n"), []string{"--exit-status"}, 1},
		{"future protocol", []byte(`{"type":"ready","protocolVersion":9,"sessionId":"x","task":"t","agents":[]}` + "\n"), nil, 3},
		{"future protocol allowed", []byte(`{"type":"ready","protocolVersion":9,"sessionId":"x","task":"t","agents":[]}` + "\n"), []string{"--any-version"}, 0},
	} {
		_, errs, code := report(t, tt.session, nil, append([]string{"--format", "json"}, tt.args...)...)
		if code != tt.want {
			t.Errorf("%s: exit %d, want %d (%s)", tt.name, code, tt.want, errs)
		}
	}
}

// A log edited after the fact is refused: its decisions cannot be trusted.
func TestTamperedAuditRefused(t *testing.T) {
	session, audit := record(t, ciPolicy, nil, "--scenario", "testdata/fail.yaml", "run", "--bridge", "-c", "ci.yaml", "ship it")
	b := readFile2(t, audit)
	writeFile2(t, audit, strings.Replace(b, `"decision":"deny"`, `"decision":"allow"`, 1))
	_, errs, code := report(t, session, nil, "--audit", audit)
	if code != 2 || !strings.Contains(errs, "does not match its hash") || !strings.Contains(errs, "verify-audit") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// A log whose last line a full disk tore is refused, with the way to repair it; once
// repaired, it reports as before, the record of the cut matching no prompt.
func TestTornAuditPointsAtRepair(t *testing.T) {
	session, audit := record(t, ciPolicy, nil, "--scenario", "testdata/fail.yaml", "run", "--bridge", "-c", "ci.yaml", "ship it")
	whole := readFile2(t, audit)
	writeFile2(t, audit, whole+`{"time":"2026-01-01T00:00:00Z","session":null,"type":"approval_req`)
	_, errs, code := report(t, session, nil, "--audit", audit)
	if code != 2 || !strings.Contains(errs, "the line is incomplete") || !strings.Contains(errs, "hint: a write to it was cut short: cut the torn line with 'fr-approve repair-audit "+audit+"'") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var out, errb strings.Builder
	if c := approve.Run(context.Background(), cmdutil.Streams{Out: &out, Err: &errb}, []string{"fr-approve", "repair-audit", audit}); c != 0 {
		t.Fatalf("repair-audit: exit %d: %s", c, errb.String())
	}
	repaired, _, _ := report(t, session, nil, "--format", "json", "--audit", audit)
	writeFile2(t, audit, whole)
	want, errs, code := report(t, session, nil, "--format", "json", "--audit", audit)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	strip := func(s string) string { // the log's size and last hash differ by the record of the cut
		return regexp.MustCompile(`"audit":\{[^}]*\}`).ReplaceAllString(s, "")
	}
	if strip(repaired) != strip(want) {
		t.Errorf("the repaired log reports differently:\n%s\nwant\n%s", repaired, want)
	}
	if !regexp.MustCompile(`"matched":[1-9]`).MatchString(repaired) || strings.Contains(repaired, `"decision":"unknown"`) {
		t.Errorf("the repaired log's decisions were not matched: %s", repaired)
	}
}

// The token fr's own commands read from $FUSERAFT_SERVE_TOKEN is redacted without being named,
// in every format, wherever the session carries it: a reply, a tool's output, a command, a
// file write, an error.
func TestServeTokenRedactedByDefault(t *testing.T) {
	const token = "Kq7vN2wRtZ3xLp9m"
	session, audit := recordChat(t, ciPolicy, nil, []string{"show me"}, "--scenario", "testdata/servetoken.yaml", "repl", "--vscode", "--no-banner")
	vars := map[string]string{"FUSERAFT_SERVE_TOKEN": token + "\n"} // as read from a file: fr trims it
	for _, format := range []string{"markdown", "github", "junit", "html", "json"} {
		out, errs, code := report(t, session, vars, "--format", format, "--audit", audit)
		if code != 0 {
			t.Fatalf("--format %s: exit %d: %s", format, code, errs)
		}
		if strings.Contains(out, token) {
			t.Errorf("--format %s shows $FUSERAFT_SERVE_TOKEN's value", format)
		}
		if !strings.Contains(out, "REDACTED") {
			t.Errorf("--format %s: nothing says what was redacted", format)
		}
		raw, _, _ := report(t, session, vars, "--format", format, "--audit", audit, "--no-redact")
		if !strings.Contains(raw, token) {
			t.Errorf("--format %s --no-redact: the token is not in the report, so the test above proves nothing", format)
		}
		if format == "json" {
			for _, where := range []string{"The daemon answers to", "token:", "fr-dispatch --token", "FUSERAFT_SERVE_TOKEN=", "the daemon refused"} {
				if !strings.Contains(raw, where) {
					t.Errorf("the session has no %q: the test does not cover it", where)
				}
			}
		}
	}
}

// A token too short to redact safely (fewer than redact.MinValue bytes) is left alone, with a
// warning, rather than masking every word that contains it.
func TestShortServeTokenNotRedacted(t *testing.T) {
	session, audit := recordChat(t, ciPolicy, nil, []string{"show me"}, "--scenario", "testdata/servetoken.yaml", "repl", "--vscode", "--no-banner")
	want, _, _ := report(t, session, nil, "--format", "json", "--audit", audit)
	got, errs, code := report(t, session, map[string]string{"FUSERAFT_SERVE_TOKEN": "da"}, "--format", "json", "--audit", audit)
	if code != 0 || got != want {
		t.Errorf("a 2-byte token changed the report (exit %d)", code)
	}
	if !strings.Contains(errs, "warning: $FUSERAFT_SERVE_TOKEN is shorter than 6 bytes: its value is not redacted") {
		t.Errorf("no warning: %q", errs)
	}
}
