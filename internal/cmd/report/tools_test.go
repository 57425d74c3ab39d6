package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/testkit"
)

// need returns the path of a tool a test runs, or skips the test naming the Debian package that
// has it; under CI=true a missing tool fails the test instead (.ci/run installs them).
func need(t *testing.T, tool, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found: install it (apt-get install -y %s)", tool, pkg)
	}
	t.Skipf("%s not found: apt-get install -y %s to run this test", tool, pkg)
	return ""
}

// allSessions records every session of the golden tests, and one with hostile text in it.
func allSessions(t *testing.T) map[string][2]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string][2]string{}
	for _, s := range sessions {
		session, audit := recordChat(t, ciPolicy, s.env, s.messages, s.args...)
		name := filepath.Join(dir, s.name+".jsonl")
		writeFile2(t, name, string(session))
		out[s.name] = [2]string{name, audit}
	}
	hostile := `{"type":"ready","protocolVersion":1,"sessionId":"h<1>","task":"</td></table><script>alert(1)</script><img src=https://x.example/p.png>","config":null,"resumed":false,"agents":["<b>a</b>"]}
{"type":"agent_message","message":{"agentName":"x\u001b]0;title\u0007","role":"assistant","content":"<style>body{display:none}</style><a href=\"https://x.example\">x</a> ]]> &amp; \u0000\u000b","turnIndex":0,"timestamp":"2026-01-15T10:00:02Z","inputTokens":1,"outputTokens":1,"isCompactionSummary":false,"toolCalls":[]},"elapsedMs":1}
{"type":"approval_request","kind":"file_write","path":"a\"b<c>.go","oldContent":"","newContent":"<script>fetch('https://x.example')</script>\n"}
{"type":"result","sessionId":"h<1>","task":"<script>","config":null,"succeeded":false,"errorMessage":"]]><x/> \u0001 <!--","exitCode":1,"turns":1,"elapsedSeconds":1,"inputTokens":1,"outputTokens":1}
`
	name := filepath.Join(dir, "hostile.jsonl")
	writeFile2(t, name, hostile)
	out["hostile"] = [2]string{name, ""}
	return out
}

func reportFile(t *testing.T, files [2]string, format string) string {
	t.Helper()
	args := []string{"--format", format, files[0]}
	if files[1] != "" {
		args = append(args, "--audit", files[1])
	}
	out, errs, code := report(t, nil, nil, args...)
	if code != 0 {
		t.Fatalf("%s --format %s: exit %d: %s", files[0], format, code, errs)
	}
	return out
}

// The JUnit of every session validates against the JUnit schema CI systems read.
func TestJUnitValidates(t *testing.T) {
	xmllint := need(t, "xmllint", "libxml2-utils")
	for name, files := range allSessions(t) {
		out := reportFile(t, files, "junit")
		f := filepath.Join(t.TempDir(), name+".xml")
		writeFile2(t, f, out)
		cmd := exec.Command(xmllint, "--noout", "--schema", "testdata/junit.xsd", f)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: the JUnit does not validate: %v\n%s\n%s", name, err, b, out)
		}
	}
}

var (
	scriptRE   = regexp.MustCompile(`(?i)<script`)
	externalRE = regexp.MustCompile(`(?i)<[a-z]+[^>]*\s(src|href|srcset|action|poster|data)\s*=\s*"?(https?:|//|file:|data:)`)
	styleURLRE = regexp.MustCompile(`(?i)url\(|@import`)
)

// The HTML page of each session, opened in a real headless Chromium: it renders the session (the
// task, the decisions), runs no script and asks for nothing beyond the page itself.
func TestHTMLInChromium(t *testing.T) {
	chromium := need(t, "chromium", "chromium")
	for name, files := range allSessions(t) {
		page := reportFile(t, files, "html")
		// the page as written: no script, no external reference, no url() in its CSS
		if scriptRE.MatchString(page) || externalRE.MatchString(page) || styleURLRE.MatchString(page) {
			t.Errorf("%s: the page has a script or an external reference:\n%s", name, page)
		}
		dir := t.TempDir()
		file := filepath.Join(dir, "report.html")
		writeFile2(t, file, page)
		ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound(60*time.Second))
		cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
			"--user-data-dir="+filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=1",
			"--dump-dom", "file://"+file)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		dom, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("%s: chromium: %v\n%s", name, err, tail(stderr.String()))
		}
		d := string(dom)
		if !strings.Contains(d, "fr-report:") || !strings.Contains(d, "Transcript") {
			t.Errorf("%s: the rendered page lacks the report:\n%s", name, d)
		}
		if scriptRE.MatchString(d) || externalRE.MatchString(d) {
			t.Errorf("%s: the rendered DOM has a script or an external reference", name)
		}
		for _, l := range strings.Split(stderr.String(), "\n") {
			// a console message (a script error) or a request for anything but the page
			if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") {
				t.Errorf("%s: the page logged: %s", name, l)
			}
			if strings.Contains(l, "NotifyBeforeURLRequest") && !strings.HasSuffix(strings.TrimSpace(l), "file://"+file) && !browserOwn.MatchString(l) {
				t.Errorf("%s: the page made a request: %s", name, l)
			}
		}
		switch name {
		case "run":
			for _, want := range []string{"fix the parser", "no-network", "go-build-test", "deny", "allow", "parser.go", "keep \"quoted words\" &lt;together&gt;"} {
				if !strings.Contains(d, want) {
					t.Errorf("run: the rendered page lacks %q", want)
				}
			}
		case "hostile":
			if !strings.Contains(d, "<td>&lt;script&gt;<br>") || !strings.Contains(d, "&lt;b&gt;a&lt;/b&gt;") || !strings.Contains(d, "&lt;style&gt;body{display:none}") {
				t.Errorf("hostile: the task is not shown as text:\n%s", d)
			}
		}
	}
}

// browserOwn matches the requests Chromium makes for itself whatever the page (its clock,
// component updates, accounts), which the flags do not all turn off.
var browserOwn = regexp.MustCompile(`NotifyBeforeURLRequest: https?://(clients[0-9]*\.google\.com|update\.googleapis\.com|accounts\.google\.com|[a-z0-9.-]*\.gvt1\.com|safebrowsing[a-z0-9.-]*\.googleapis\.com|optimizationguide-pa\.googleapis\.com)/`)

func tail(s string) string {
	if len(s) > 3000 {
		return s[len(s)-3000:]
	}
	return s
}
