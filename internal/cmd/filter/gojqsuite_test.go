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
	"github.com/fuseraft/fr/internal/testkit"
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
// reason. The user-visible ones are in the README and in --help. Every other case must pass,
// and a case listed here must fail (so that the list stays true).
//
// Rules that apply to every case, instead of a list entry each:
//   - fr-filter prints compact output unless asked to indent (one value a line, for streams),
//     so the suite runs with jq's default layout, as if --indent 2 were given (config.jqLayout);
//   - messages differ only in form (see normalizeMessages);
//   - cases of gojq's YAML flags (--yaml-input, --yaml-output) are not run: they are gojq's
//     own, not jq's command line, and fr-filter reads JSON.
var gojqDifferences = map[string]string{
	// A line that is not JSON is skipped and counted (a warning at the end, exit 0), as
	// fr-filter is for streams with banners and other noise in them; --strict makes it an error.
	"invalid json unexpected eof error":                                noise,
	"invalid json unexpected eof error with multibyte characters":      noise,
	"invalid json unexpected eof error with multiple lines":            noise,
	"invalid json invalid character with multibyte characters":         noise,
	"invalid json string literal":                                      noise,
	"json file error json":                                             noise,
	"json file error json with multibyte character in the error line":  noise,
	"json input error json with multibyte character in the error line": noise,
	"stream option with unterminated input after a comma":              noise,
	"stream option with unterminated input after a value":              noise,

	// The environment is visible to a filter only with --env: event streams are often
	// filtered in CI, where the environment holds secrets.
	"$ENV variable":   "the environment is hidden without --env",
	"env function":    "the environment is hidden without --env",
	"env in function": "the environment is hidden without --env",

	// Colours are jq's: JQ_COLORS in jq's field order, jq 1.7's default colours; gojq has its
	// own GOJQ_COLORS, order and defaults.
	"color output option":                                                      jqColors,
	"color output long option":                                                 jqColors,
	"color output with compact output option":                                  jqColors,
	"color output option configured by environment variable":                   jqColors,
	"color output option configured by environment variable with fewer colors": jqColors,
	"NO_COLOR environment variable with color output option":                   jqColors,
	"invalid colors environment variable":                                      "a JQ_COLORS jq refuses is warned about and the defaults are used, as jq does",

	// A line passed on unchanged keeps its key order, as jq keeps it (gojq sorts keys).
	"del function": "del(empty) passes the input on with its key order, as jq does",
	// --indent 0 is compact, as in jq (gojq breaks lines without indenting).
	"indent option with value 0": "--indent 0 is compact, as in jq",
	// input at the end of the input says so in jq's words.
	"input function": `"no more inputs", as jq says, where gojq says "break"`,

	// Usage errors exit 2, as jq's do (gojq exits 5 or 3), and say what is wrong in fr-filter's
	// words, with a hint.
	"indent option negative indentation count error": usage,
	"indent option parse error":                      usage,
	"indent option too many indentation count error": usage,
	"arg option variable name error":                 usage,
	"argjson option error":                           usage,
	"argjson option parse error":                     usage,
	"argjson option with adjacent values":            usage,
	"argjson option with empty value":                usage,
	"argjson option with multiple values":            usage,
	"argjson option with trailing parse error":       usage,
	"jsonargs option parse error":                    usage,
	"jsonargs option with empty value":               usage,
	"jsonargs option with multiple values":           usage,
	"slurpfile option invalid file error":            usage,
	"slurpfile option invalid json error":            usage,
	"rawfile option error":                           usage,
	"query file not found":                           usage,
	"query file not specified":                       usage,
	"json file not found error":                      "an input file that cannot be read is exit 2, as in jq, and the other files are still read",

	// Compile errors point at the place with a caret, also for a name a query uses but
	// nothing defines; a JSON or query file a module loads is named without the caret.
	"double dash with query with leading hyphen": caret,
	"module directory option variable error":     caret,
	"module directory option json parse error":   "a module's JSON that does not parse is named without quoting the line",
	"invalid query in a module":                  "a module's query that does not parse is named without quoting the line",
	"invalid multiple line query in mac format":  "the caret counts lines by \\n; a query with only \\r line ends is one line to it",
}

const (
	noise    = "a line that is not JSON is skipped and counted, not an error"
	jqColors = "colours are jq's (JQ_COLORS, jq 1.7's defaults), not gojq's"
	usage    = "a usage error: exit 2 as in jq, in fr-filter's words"
	caret    = "an undefined name is shown in the query with a caret under it"
)

// usesYAML reports whether a case uses gojq's YAML flags.
func usesYAML(tc gojqCase) bool {
	for _, a := range tc.Args {
		if strings.HasPrefix(a, "--yaml-") {
			return true
		}
	}
	return false
}

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
	testkit.WithoutRace(t)
	dir, cases := gojqSuite(t)
	t.Chdir(dir) // the cases name files under testdata/
	orig := time.Local
	time.Local = time.FixedZone("UTC-7", -7*60*60)
	defer func() { time.Local = orig }()

	failed := map[string]bool{} // by name: a few names are shared by several cases
	all := map[string]bool{}
	var names []string
	run, yamlCases := 0, 0
	for _, tc := range cases {
		if usesYAML(tc) {
			yamlCases++
			continue
		}
		run++
		all[tc.Name] = true
		bad := runGojqCase(tc)
		if bad == "" {
			continue
		}
		failed[tc.Name] = true
		if _, listed := gojqDifferences[tc.Name]; !listed {
			names = append(names, tc.Name)
			t.Errorf("%s (fr-filter %q):\n%s", tc.Name, tc.Args, bad)
		}
	}
	for name, reason := range gojqDifferences {
		switch {
		case !all[name]:
			t.Errorf("gojqDifferences names %q, which the suite does not have", name)
		case !failed[name]:
			t.Errorf("%s passes: remove it from gojqDifferences (%s)", name, reason)
		}
	}
	nfail := 0
	for _, tc := range cases {
		if !usesYAML(tc) && failed[tc.Name] {
			nfail++
		}
	}
	sort.Strings(names)
	t.Logf("gojq suite: %d of %d cases pass (%d YAML cases not run); %d names listed as differences",
		run-nfail, run, yamlCases, len(gojqDifferences))
	if os.Getenv("GOJQ_SUITE_LIST") != "" {
		for _, n := range names {
			t.Logf("failing: %q", n)
		}
	}
}
