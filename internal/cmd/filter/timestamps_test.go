package filter

import (
	"regexp"
	"testing"
)

// --timestamps starts each rendered line with the time its event was read; without --pretty
// it is a usage error.
func TestTimestamps(t *testing.T) {
	in := []byte(`{"type":"text","text":"hello"}` + "\n" + `{"type":"warning","text":"careful"}` + "\n")
	out, errs, code := runFilter([]string{"--pretty", "--timestamps", "--color", "never"}, in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`(?m)\A\d\d:\d\d:\d\d hello\n\d\d:\d\d:\d\d .*careful`).MatchString(out) {
		t.Errorf("no timestamps:\n%s", out)
	}
	if out, _, _ := runFilter([]string{"--pretty", "--color", "never"}, in); regexp.MustCompile(`\d\d:\d\d:\d\d`).MatchString(out) {
		t.Errorf("timestamps without --timestamps:\n%s", out)
	}
	if _, errs, code := runFilter([]string{"--timestamps", "."}, in); code != 2 || !regexp.MustCompile(`--timestamps goes with --pretty`).MatchString(errs) {
		t.Errorf("--timestamps without --pretty: exit %d, %s", code, errs)
	}
}
