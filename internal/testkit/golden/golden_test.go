package golden

import (
	"strings"
	"testing"
)

func TestFirstDiff(t *testing.T) {
	for _, c := range []struct{ want, got, diff string }{
		{"a\nb\n", "a\nc\n", "line 2:\nwant: b\n got: c"},
		{"a\n", "a\nb\n", "line 2:\nwant: \n got: b"},
		{"\x1b[1mx\n", "x\n", "line 1:\nwant: \\e[1mx\n got: x"},
	} {
		if d := FirstDiff(c.want, c.got); d != c.diff {
			t.Errorf("FirstDiff(%q, %q) = %q, want %q", c.want, c.got, d, c.diff)
		}
	}
}

// recorder is a testing.TB that keeps the errors reported to it.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()           {}
func (r *recorder) Error(args ...any) { r.errs = append(r.errs, args[0].(string)) }

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/sub/out.golden"
	*Update = true
	Check(t, path, "one\ntwo\n")
	*Update = false
	Check(t, path, "one\ntwo\n")
	r := &recorder{TB: t}
	Check(r, path, "one\nthree\n")
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "line 2:\nwant: two\n got: three") {
		t.Errorf("a differing output was reported as %q", r.errs)
	}
}
