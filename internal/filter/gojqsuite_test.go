package filter

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// gojqCase is one case of gojq's command-line suite (cli/test.yaml in the gojq module), in the
// schema its cli_test.go reads.
type gojqCase struct {
	Name     string
	Args     []string
	Input    string
	Env      []string
	Expected string
	Error    string
	ExitCode int `yaml:"exit_code"`
}

// gojqDifferences are the suite's cases fr-filter answers differently on purpose, each with the
// reason. A user-visible difference is also in the README and in --help. Every other case must
// pass, and a case listed here must fail (so that the list stays true).
//
// Two differences apply to every case and are not listed: fr-filter prints compact output
// unless asked to indent (one value a line, for streams), so the suite runs with jq's default
// layout (indent 2, as if --indent 2 were given); and fr-filter's messages start with
// "fr-filter: error: " where gojq's start with "gojq: ".
var gojqDifferences = map[string]string{}

var (
	lineRE    = regexp.MustCompile(`(?m)^(` + prog + `: error: )((line |[^ :]+:)[0-9]+: )`)
	notString = regexp.MustCompile(`(?m)^(` + prog + `: error: )(.*) \(not a string\)$`)
)

// normalizeMessages rewrites fr-filter's messages into gojq's form where only the form differs:
// fr-filter starts a message with "fr-filter: error: " and a runtime error with the line it
// happened on ("line 3: "), and reports error(v) in jq's words (a string as it is, another
// value followed by "(not a string)") where gojq writes "error: " and the value. A message
// from error(v) cannot be told from another runtime error, so that gojq form is compared only
// when the case expects it (see runGojqCase).
func normalizeMessages(s string) string {
	s = lineRE.ReplaceAllString(s, "$1")
	s = notString.ReplaceAllString(s, "${1}error: $2")
	return strings.NewReplacer(prog+": error: ", "", prog+": ", "").Replace(s)
}

// gojqSuite loads cli/test.yaml from the gojq module in the module cache.
func gojqSuite(t *testing.T) (dir string, cases []gojqCase) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/itchyny/gojq").Output()
	dir = strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("finding the gojq module (run 'go mod download github.com/itchyny/gojq'): %v", err)
	}
	dir = filepath.Join(dir, "cli")
	data, err := os.ReadFile(filepath.Join(dir, "test.yaml"))
	if err != nil {
		t.Fatalf("%v (run 'go mod download github.com/itchyny/gojq')", err)
	}
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return dir, cases
}

// runGojqCase runs one case in process, as gojq's own test runs its command line, and returns
// what is wrong with the result ("" when it passes).
func runGojqCase(tc gojqCase) string {
	env := map[string]string{"NO_COLOR": "", "JQ_COLORS": "", "HOME": os.DevNull}
	for _, kv := range tc.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	var stdout, stderr bytes.Buffer
	s := cmdutil.Streams{
		In:  strings.NewReader(tc.Input),
		Out: &stdout, Err: &stderr,
		Getenv: func(k string) string {
			if v, ok := env[k]; ok {
				return v
			}
			return os.Getenv(k)
		},
	}
	code := cmdutil.RunApp(context.Background(), app(s, config{jqLayout: os.Getenv("NOLAYOUT") == ""}), s, append([]string{prog}, tc.Args...))
	errStr := normalizeMessages(stderr.String())
	var bad []string
	if tc.Error == "" {
		if code != tc.ExitCode {
			bad = append(bad, "exit code "+strconv.Itoa(code)+", want "+strconv.Itoa(tc.ExitCode))
		}
		if stdout.String() != tc.Expected {
			bad = append(bad, "stdout:\n"+stdout.String()+"want:\n"+tc.Expected)
		}
		if errStr != "" {
			bad = append(bad, "stderr:\n"+errStr)
		}
	} else {
		want := tc.ExitCode
		if want == 0 {
			want = exitRuntime
		}
		if strings.Contains(errStr, "DEBUG:") {
			want = 0
		}
		if code != want {
			bad = append(bad, "exit code "+strconv.Itoa(code)+", want "+strconv.Itoa(want))
		}
		if stdout.String() != tc.Expected {
			bad = append(bad, "stdout:\n"+stdout.String()+"want:\n"+tc.Expected)
		}
		if want := strings.TrimPrefix(tc.Error, "error: "); want != tc.Error && !strings.HasPrefix(errStr, "error: ") {
			tc.Error = want // error("message"): jq's words, the message as it is
		}
		if !strings.HasPrefix(errStr, tc.Error) && !strings.HasSuffix(errStr, tc.Error) {
			bad = append(bad, "stderr:\n"+errStr+"want:\n"+tc.Error)
		}
	}
	return strings.Join(bad, "\n")
}

// TestGojqSuite runs gojq's command-line suite against fr-filter.
func TestGojqSuite(t *testing.T) {
	dir, cases := gojqSuite(t)
	t.Chdir(dir) // the cases name files under testdata/
	orig := time.Local
	time.Local = time.FixedZone("UTC-7", -7*60*60)
	defer func() { time.Local = orig }()

	failed := map[string]bool{} // by name: a few names are shared by several cases
	var names []string
	for _, tc := range cases {
		bad := runGojqCase(tc)
		if bad == "" {
			continue
		}
		failed[tc.Name] = true
		if _, listed := gojqDifferences[tc.Name]; !listed && gojqPending[tc.Name] == "" {
			names = append(names, tc.Name)
			t.Errorf("%s (fr-filter %q):\n%s", tc.Name, tc.Args, bad)
		}
	}
	all := map[string]bool{}
	for _, tc := range cases {
		all[tc.Name] = true
	}
	for _, list := range []map[string]string{gojqDifferences, gojqPending} {
		for name, reason := range list {
			switch {
			case !all[name]:
				t.Errorf("gojqDifferences names %q, which the suite does not have", name)
			case !failed[name]:
				t.Errorf("%s passes: remove it from the list (%s)", name, reason)
			}
		}
	}
	nfail := 0
	for _, tc := range cases {
		if failed[tc.Name] {
			nfail++
		}
	}
	sort.Strings(names)
	t.Logf("gojq suite: %d of %d cases pass; %d listed differences", len(cases)-nfail, len(cases), len(gojqDifferences))
	if os.Getenv("GOJQ_SUITE_LIST") != "" {
		for _, n := range names {
			t.Logf("failing: %q", n)
		}
	}
}
