package textdiff

import (
	"strings"
	"testing"
)

func TestSearch(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		maxD int
		want int
	}{
		{"", "", 0, 0},
		{"abc", "abc", 3, 0},
		{"abc", "", 3, 3},
		{"", "xy", 5, 2},
		{"abcabba", "cbabac", 13, 5}, // the paper's example
		{"abcabba", "cbabac", 4, -1}, // past maxD
		{"kitten", "sitting", 13, 5},
	} {
		a, b := strings.Split(tc.a, ""), strings.Split(tc.b, "")
		if tc.a == "" {
			a = nil
		}
		if tc.b == "" {
			b = nil
		}
		if got := Search(a, b, tc.maxD, nil); got != tc.want {
			t.Errorf("Search(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.maxD, got, tc.want)
		}
	}
	// round sees every distance tried, and stops the search when it says so.
	var ds []int
	got := Search([]byte("abcabba"), []byte("cbabac"), 13, func(d int, v []int, work int) bool {
		ds = append(ds, d)
		return d < 2
	})
	if got != -1 || len(ds) != 3 {
		t.Errorf("stopped at 2: %d after rounds %v", got, ds)
	}
}
