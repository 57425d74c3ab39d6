package render

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/internal/testkit"
)

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		old, new string
		opts     DiffOptions
		want     string
	}{
		{
			name: "one line changed in the middle",
			path: "main.go",
			old:  "a\nb\nc\nd\ne\nf\ng\nh\n",
			new:  "a\nb\nc\nd\nE\nf\ng\nh\n",
			want: "--- a/main.go\n+++ b/main.go\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n",
		},
		{
			name: "new file",
			path: "docs/new.md",
			old:  "",
			new:  "# Title\n\nbody\n",
			want: "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,3 @@\n+# Title\n+\n+body\n",
		},
		{
			name: "file emptied",
			path: "x",
			old:  "one\ntwo\n",
			new:  "",
			want: "--- a/x\n+++ b/x\n@@ -1,2 +0,0 @@\n-one\n-two\n",
		},
		{
			name: "no change",
			path: "same.txt",
			old:  "x\n",
			new:  "x\n",
			want: "--- a/same.txt\n+++ b/same.txt\n(no changes)\n",
		},
		{
			name: "absolute path",
			path: "/etc/hosts",
			old:  "a\n",
			new:  "b\n",
			want: "--- /etc/hosts\n+++ /etc/hosts\n@@ -1 +1 @@\n-a\n+b\n",
		},
		{
			name: "newline added at end of file",
			path: "f",
			old:  "a\nb",
			new:  "a\nb\n",
			want: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
		},
		{
			name: "two hunks far apart",
			path: "f",
			old:  "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n",
			new:  "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\nFOURTEEN\n15\n",
			want: "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n 1\n-2\n+TWO\n 3\n 4\n 5\n@@ -11,5 +11,5 @@\n 11\n 12\n 13\n-14\n+FOURTEEN\n 15\n",
		},
		{
			name: "changes six lines apart share a hunk",
			path: "f",
			old:  "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
			new:  "1\nB\n3\n4\n5\n6\n7\n8\nI\n",
			want: "--- a/f\n+++ b/f\n@@ -1,9 +1,9 @@\n 1\n-2\n+B\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+I\n",
		},
		{
			name: "insertion at the start",
			path: "f",
			old:  "b\nc\n",
			new:  "a\nb\nc\n",
			want: "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n+a\n b\n c\n",
		},
		{
			name: "CRLF on both sides is not shown",
			path: "w.txt",
			old:  "a\r\nb\r\n",
			new:  "a\r\nc\r\n",
			want: "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
		},
		{
			name: "a change of line ends is visible",
			path: "w.txt",
			old:  "a\r\nb\r\n",
			new:  "a\nb\n",
			want: "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n-a␍\n-b␍\n+a\n+b\n",
		},
		{
			name: "binary content is noted",
			path: "logo.png",
			old:  "\x89PNG\r\n\x1a\n\x00\x00",
			new:  "\x89PNG\r\n\x1a\n\x00\x01\x02",
			want: "--- a/logo.png\n+++ b/logo.png\n(binary content, 10 B → 11 B; not shown)\n",
		},
		{
			name: "escape sequences are shown, not sent",
			path: "evil\x1b[2J.txt",
			old:  "ok\n",
			new:  "\x1b]0;pwned\x07\x1b[31mred\r\n",
			want: "--- a/evil␛[2J.txt\n+++ b/evil␛[2J.txt\n@@ -1 +1 @@\n-ok\n+␛]0;pwned␇␛[31mred␍\n",
		},
		{
			name: "tabs expand to the next stop",
			path: "f",
			old:  "\tx\n",
			new:  "\ty\n",
			want: "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-       x\n+       y\n",
		},
		{
			name: "cut after MaxLines with a note",
			path: "f",
			old:  "",
			new:  strings.Repeat("line\n", 1500),
			opts: DiffOptions{MaxLines: 5},
			want: "--- /dev/null\n+++ b/f\n@@ -0,0 +1,1500 @@\n+line\n+line\n… 1,498 more lines\n",
		},
		{
			name: "long lines cut to the width",
			path: "f",
			old:  "short\n",
			new:  strings.Repeat("x", 50) + "\n",
			opts: DiffOptions{Width: 10},
			want: "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-short\n+xxxxxxxx…\n",
		},
		{
			name: "colour",
			path: "f",
			old:  "a\nb\n",
			new:  "a\nc\n",
			opts: DiffOptions{Color: true},
			want: "\x1b[1m--- a/f\x1b[0m\n\x1b[1m+++ b/f\x1b[0m\n\x1b[36m@@ -1,2 +1,2 @@\x1b[0m\n a\n\x1b[31m-b\x1b[0m\n\x1b[32m+c\x1b[0m\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := UnifiedDiff(tt.path, tt.old, tt.new, tt.opts)
			if got != tt.want {
				t.Errorf("UnifiedDiff:\n got: %q\nwant: %q\n%s", got, tt.want, got)
			}
		})
	}
}

func TestDiffStat(t *testing.T) {
	add, del := DiffStat("a\nb\nc\n", "a\nB\nc\nd\n")
	if add != 2 || del != 1 {
		t.Errorf("DiffStat = +%d -%d, want +2 -1", add, del)
	}
}

// applyUnified applies a diff made by UnifiedDiff (no colour, no cut) to old and returns the
// result, so any diff can be checked by what it does.
func applyUnified(t *testing.T, old, diff string) string {
	t.Helper()
	a := splitLines(old)
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		t.Fatalf("no headers in %q", diff)
	}
	var out []string
	ai := 0 // next old line to copy
	var last *string
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "@@ -"):
			f := strings.Fields(l)
			start, _, _ := strings.Cut(strings.TrimPrefix(f[1], "-"), ",")
			s, err := strconv.Atoi(start)
			if err != nil {
				t.Fatalf("bad hunk header %q", l)
			}
			if strings.HasSuffix(f[1], ",0") {
				s++ // an empty range names the line before it
			}
			for ai < s-1 {
				out = append(out, a[ai])
				ai++
			}
		case l == `\ No newline at end of file`:
			*last = strings.TrimSuffix(*last, "\n")
		case strings.HasPrefix(l, " "):
			if a[ai] != l[1:]+"\n" && a[ai] != l[1:] {
				t.Fatalf("context %q does not match old line %d %q", l, ai+1, a[ai])
			}
			out = append(out, l[1:]+"\n")
			last = &out[len(out)-1]
			ai++
		case strings.HasPrefix(l, "-"):
			if strings.TrimSuffix(a[ai], "\n") != l[1:] {
				t.Fatalf("removal %q does not match old line %d %q", l, ai+1, a[ai])
			}
			s := a[ai]
			last = &s
			ai++
		case strings.HasPrefix(l, "+"):
			out = append(out, l[1:]+"\n")
			last = &out[len(out)-1]
		default:
			t.Fatalf("unexpected diff line %q", l)
		}
	}
	out = append(out, a[ai:]...)
	return strings.Join(out, "")
}

func TestUnifiedDiffAppliesBack(t *testing.T) {
	t.Run("search", func(t *testing.T) { testAppliesBack(t, []string{"a", "b", "c", "d", "e", ""}) })
	// With the search cut short, the anchored fallback does the work.
	defer func(d int) { maxEditDistance = d }(maxEditDistance)
	maxEditDistance = 2
	t.Run("anchored", func(t *testing.T) {
		testAppliesBack(t, []string{"a", "b", "c", "d", "e", "", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"})
	})
}

func testAppliesBack(t *testing.T, words []string) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func() string {
		n := rng.IntN(40)
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(words[rng.IntN(len(words))])
			if i < n-1 || rng.IntN(4) > 0 {
				b.WriteByte('\n')
			}
		}
		return b.String()
	}
	for i := 0; i < 3000; i++ {
		old, new := gen(), gen()
		if old == new {
			continue
		}
		d := UnifiedDiff("f", old, new, DiffOptions{})
		if got := applyUnified(t, old, d); got != new {
			t.Fatalf("case %d: applying the diff gives %q, want %q\ndiff:\n%s", i, got, new, d)
		}
		add, del := DiffStat(old, new)
		if c := strings.Count(d, "\n+") - 1; c != add {
			t.Fatalf("case %d: DiffStat added %d, diff shows %d", i, add, c)
		}
		if c := strings.Count(d, "\n-"); c != del {
			t.Fatalf("case %d: DiffStat removed %d, diff shows %d", i, del, c)
		}
	}
}

// The diff of a one-line edit has exactly one removal and one addition: the search finds the
// shortest script, not just any.
func TestUnifiedDiffIsMinimal(t *testing.T) {
	var old, new strings.Builder
	for i := range 500 {
		fmt.Fprintf(&old, "line %d\n", i%7)
		if i == 250 {
			new.WriteString("changed\n")
		} else {
			fmt.Fprintf(&new, "line %d\n", i%7)
		}
	}
	add, del := DiffStat(old.String(), new.String())
	if add != 1 || del != 1 {
		t.Errorf("DiffStat = +%d -%d, want +1 -1", add, del)
	}
}

// Huge inputs stay fast: a megabyte-scale file rewritten everywhere falls back to a cheaper
// diff instead of the quadratic search, and the output is cut by MaxLines.
func TestUnifiedDiffHuge(t *testing.T) {
	testkit.WithoutRace(t)
	var old, new strings.Builder
	for i := range 200_000 {
		fmt.Fprintf(&old, "old line %d\n", i)
		if i%2 == 0 {
			fmt.Fprintf(&new, "old line %d\n", i)
		} else {
			fmt.Fprintf(&new, "new line %d\n", i)
		}
	}
	start := time.Now()
	d := UnifiedDiff("big.txt", old.String(), new.String(), DiffOptions{MaxLines: 40})
	elapsed := time.Since(start)
	if elapsed > testkit.Bound(time.Minute) { // quadratic work on 200,000 lines would take hours
		t.Errorf("diff of 200,000 lines took %v", elapsed)
	}
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	if len(lines) != 41 {
		t.Errorf("got %d lines, want 40 and a note", len(lines))
	}
	if note := lines[len(lines)-1]; !strings.HasPrefix(note, "… ") || !strings.HasSuffix(note, " more lines") {
		t.Errorf("last line %q is not a truncation note", note)
	}
	// Without a cut the diff is still correct, and, anchored on the unique lines, as small as
	// the change.
	full := UnifiedDiff("big.txt", old.String(), new.String(), DiffOptions{})
	if got := applyUnified(t, old.String(), full); got != new.String() {
		t.Error("the diff of a big rewrite does not apply back")
	}
	if add, del := DiffStat(old.String(), new.String()); add != 100_000 || del != 100_000 {
		t.Errorf("DiffStat of a big rewrite = +%d -%d, want +100000 -100000", add, del)
	}

	// Lines from a tiny alphabet defeat both the search and the anchors: the cheap diff
	// (all removed, all added) still comes quickly and applies.
	rng := rand.New(rand.NewPCG(3, 4))
	var oa, na strings.Builder
	for range 20_000 {
		oa.WriteString([]string{"a\n", "b\n", "c\n"}[rng.IntN(3)])
		na.WriteString([]string{"a\n", "b\n", "c\n"}[rng.IntN(3)])
	}
	start = time.Now()
	d = UnifiedDiff("abc.txt", oa.String(), na.String(), DiffOptions{})
	if elapsed := time.Since(start); elapsed > testkit.Bound(time.Minute) {
		t.Errorf("diff of 20,000 lines from three took %v", elapsed)
	}
	if got := applyUnified(t, oa.String(), d); got != na.String() {
		t.Error("the fallback diff does not apply back")
	}

	// One giant line (minified code) is cut, never dumped.
	giant := strings.Repeat("x", 5<<20)
	d = UnifiedDiff("min.js", "", giant, DiffOptions{})
	if len(d) > 2*maxDiffLineWidth {
		t.Errorf("a 5 MiB line gave %d bytes of diff", len(d))
	}
	if !strings.Contains(d, "…") {
		t.Error("a cut line does not end with …")
	}
}

func TestCommas(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4200: "-4,200"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}

func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd")
	f.Add("", "x")
	f.Add("x\r\ny\r\n", "x\ny\n")
	f.Add("\x00", "\x1b[2J")
	f.Fuzz(func(t *testing.T, old, new string) {
		d := UnifiedDiff("f", old, new, DiffOptions{})
		if strings.ContainsRune(d, 0x1b) {
			t.Fatalf("escape in diff output: %q", d)
		}
		if !strings.HasSuffix(d, "\n") {
			t.Fatalf("diff does not end with a newline: %q", d)
		}
		if old == new || isBinary(old) || isBinary(new) {
			return
		}
		// Apply back when content is plain (sanitizing and tab expansion change the text).
		if strings.ContainsAny(old+new, "\t\r") || termsafe.Text(old) != old || termsafe.Text(new) != new || strings.Contains(old+new, "…") {
			return
		}
		if got := applyUnified(t, old, d); got != new {
			t.Fatalf("applying the diff gives %q, want %q\n%s", got, new, d)
		}
	})
}
