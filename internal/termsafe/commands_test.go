package termsafe_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/cmd/filter"
	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit/termsafetest"
)

// TestCommandErrorsAreSafe feeds escape sequences to fr-filter's and fr-sim's error paths
// (fr-ls, fr-approve, fr-stream and fr-attach have scripts of their own) and checks that
// stderr shows them and holds none.
func TestCommandErrorsAreSafe(t *testing.T) {
	dir := t.TempDir()
	scenario := filepath.Join(dir, "scenario.yaml")
	if err := os.WriteFile(scenario, []byte("version: 1\nrun:\n  steps:\n    - {\"no such\\e]0;PWNED\\a\\u202e\": 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	event := `{"type":"token","text":"\u001b]0;PWNED\u0007\u202e\u0085x"}` + "\n"
	inject := termsafetest.Inject
	for _, tc := range []struct {
		name  string
		run   func(context.Context, cmdutil.Streams, []string) int
		args  []string
		stdin string
		shown string // a piece of stderr, as shown
	}{
		{"fr-filter: an error raised with the input's text", filter.Run, []string{"fr-filter", ".text | error"}, event, "line 1: ␛]0;PWNED␇\uFFFD\uFFFDx"},
		{"fr-filter: a bad filter quotes the expression", filter.Run, []string{"fr-filter", ".a | " + inject}, "", "␛]0;PWNED␇␛[2J"},
		{"fr-filter: a file that is not there", filter.Run, []string{"fr-filter", ".", filepath.Join(dir, inject)}, "", "␛]0;PWNED␇␛[2J"},
		{"fr-sim: a scenario with an unknown key", sim.Run, []string{"fr-sim", "scenario", "check", scenario}, "", `unknown key "no such\x1b]0;PWNED\a`},
		{"fr-sim: a scenario that is not there", sim.Run, []string{"fr-sim", "scenario", "check", filepath.Join(dir, inject)}, "", "␛]0;PWNED␇␛[2J"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			s := cmdutil.Streams{In: strings.NewReader(tc.stdin), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
			if code := tc.run(context.Background(), s, tc.args); code == 0 {
				t.Fatalf("exit 0; stderr %q", errb.String())
			}
			if bad, at := termsafetest.Find(errb.String()); at >= 0 {
				t.Fatalf("stderr holds %s at byte %d: %q", bad, at, errb.String())
			}
			if !strings.Contains(errb.String(), tc.shown) {
				t.Fatalf("stderr %q does not show %q", errb.String(), tc.shown)
			}
		})
	}
}
