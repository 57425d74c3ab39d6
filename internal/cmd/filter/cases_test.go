package filter

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// testCase is one entry of testdata/cases.yaml, in the style of gojq's cli/test.yaml.
type testCase struct {
	Name     string
	Args     []string
	Input    string
	Expected string
	// ExpectedContains lists substrings of stdout, checked instead of Expected.
	ExpectedContains []string `yaml:"expected_contains"`
	ExitCode         int      `yaml:"exit_code"`
	// Stderr lists substrings the standard error must hold; NoStderr says it must be empty.
	Stderr   []string
	NoStderr bool `yaml:"no_stderr"`
	// Files are created in a temporary directory, the working directory of the case.
	Files map[string]string
	Env   map[string]string
	// ClosedStdout makes every write to standard output fail as a closed pipe does.
	ClosedStdout bool `yaml:"closed_stdout"`
}

type closedPipe struct{}

func (closedPipe) Write([]byte) (int, error) { return 0, syscall.EPIPE }

func TestCases(t *testing.T) {
	data, err := os.ReadFile("testdata/cases.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []testCase
	// A key the cases do not know is an error: a misspelt assertion would be no assertion.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Errorf("only %d cases", len(cases))
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.Name] {
			t.Errorf("duplicate case name %q", tc.Name)
		}
		seen[tc.Name] = true
		t.Run(tc.Name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.Files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(dir)
			var out, errb bytes.Buffer
			s := cmdutil.Streams{In: strings.NewReader(tc.Input), Out: &out, Err: &errb,
				Getenv: func(k string) string { return tc.Env[k] }}
			if tc.ClosedStdout {
				s.Out = closedPipe{}
			}
			for k, v := range tc.Env {
				t.Setenv(k, v)
			}
			code := Run(context.Background(), s, append([]string{"fr-filter"}, tc.Args...))
			if len(tc.ExpectedContains) > 0 {
				for _, sub := range tc.ExpectedContains {
					if !strings.Contains(out.String(), sub) {
						t.Errorf("fr-filter %q: stdout lacks %q:\n%s", tc.Args, sub, out.String())
					}
				}
			} else if got := out.String(); got != tc.Expected {
				t.Errorf("fr-filter %q\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", tc.Args, got, tc.Expected, errb.String())
			}
			if code != tc.ExitCode {
				t.Errorf("fr-filter %q: exit %d, want %d\nstderr:\n%s", tc.Args, code, tc.ExitCode, errb.String())
			}
			for _, sub := range tc.Stderr {
				if !strings.Contains(errb.String(), sub) {
					t.Errorf("fr-filter %q: stderr lacks %q:\n%s", tc.Args, sub, errb.String())
				}
			}
			if tc.NoStderr && errb.Len() > 0 {
				t.Errorf("fr-filter %q: stderr not empty:\n%s", tc.Args, errb.String())
			}
		})
	}
}
