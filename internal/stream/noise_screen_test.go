//go:build unix

package stream

import (
	"slices"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/console/consoletest"
)

// The stray lines FRSIM_FAULTS=noise makes fr-sim write, the first before its ready.
var strayLines = []string{"Loading plugins... done", "Warning: falling back to default model settings"}

// Lines fuseraft writes that are not events show in a chat dimmed (plain without colour),
// each on its own row, in order below the header: never above it, never inside what is typed.
func TestScreenChatNoise(t *testing.T) {
	consoletest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		tm, _ := chatOnSize(t, cols, consoletest.Rows, color, "testdata/noise.yaml", []string{"FRSIM_FAULTS=noise"})
		tm.WaitLast("▶ chat", 1, "›")
		tm.Type("say hello\r")
		tm.WaitLast("— turn 0", 1, "›")
		rows := strings.Split(strings.TrimRight(tm.Screen(color), "\n"), "\n")
		plain := strings.Split(strings.TrimRight(tm.Screen(false), "\n"), "\n")
		if !strings.HasPrefix(plain[0], "▶ chat") {
			t.Errorf("the header is not the first line:\n%s", strings.Join(plain, "\n"))
		}
		typed := slices.Index(plain, "› say hello")
		if typed < 1 {
			t.Errorf("the typed line is not on a row of its own below the header:\n%s", strings.Join(plain, "\n"))
		}
		last := 0
		for _, stray := range strayLines {
			want := stray
			if color {
				want = "⟦2⟧" + stray + "⟦⟧"
			}
			i := slices.Index(rows, want)
			if i <= last {
				t.Errorf("%q is not shown as %q on its own row below the header and the lines before it:\n%s", stray, want, strings.Join(rows, "\n"))
			}
			last = max(last, i)
		}
		for i, row := range plain {
			for _, stray := range strayLines {
				if strings.Contains(row, stray) && row != stray {
					t.Errorf("row %d mixes a stray line with other text: %q", i, row)
				}
			}
		}
		if !color && strings.Contains(tm.Raw(), "\x1b[2m") {
			t.Errorf("dim without colour:\n%q", tm.Raw())
		}
		tm.Type("\x04")
		if code := tm.Exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
}
