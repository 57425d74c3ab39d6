package render

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	cases := []struct {
		text  string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"short", 10, []string{"short"}},
		{"daemon unreachable (no socket), retrying", 20, []string{"daemon unreachable", "(no socket),", "retrying"}},
		// a word longer than a line starts where it is and breaks inside
		{"a wordlongerthanaline here", 8, []string{"a wordlo", "ngerthan", "aline", "here"}},
		{"two  spaces", 4, []string{"two", "spac", "es"}},
		{"日本語のテキスト", 6, []string{"日本語", "のテキ", "スト"}},
	}
	for _, tc := range cases {
		got := Wrap(tc.text, tc.width)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tc.text, tc.width, got, tc.want)
		}
		for _, l := range got {
			if StringWidth(l) > tc.width {
				t.Errorf("Wrap(%q, %d): %q is wider", tc.text, tc.width, l)
			}
		}
	}
}
