//go:build unix

package stream

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/testkit/screentest"
)

// The stray lines FRSIM_FAULTS=noise makes fr-sim write, the first before its ready.
var strayLines = []string{"Loading plugins... done", "Warning: falling back to default model settings"}

// Lines fuseraft writes that are not events show in a chat dimmed (plain without colour),
// each on its own row, in order below the header: never above it, never inside what is typed.
func TestScreenChatNoise(t *testing.T) {
	screentest.EachScreen(t, func(t *testing.T, cols int, color bool, name string) {
		tm, _ := chatOnSize(t, cols, screentest.Rows, color, "testdata/noise.yaml", []string{"FRSIM_FAULTS=noise"})
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

// A line typed and entered before fuseraft is ready shows below the chat's header, after the
// stray lines that came before it, never above the header.
func TestScreenChatTypedBeforeReady(t *testing.T) {
	for _, cols := range []int{60, 120} {
		t.Run(strconv.Itoa(cols), func(t *testing.T) {
			t.Parallel()
			sim, err := exec.LookPath("fr-sim")
			if err != nil {
				t.Fatal(err)
			}
			// fuseraft starts once the file go exists.
			dir := t.TempDir()
			start, wrapper := filepath.Join(dir, "go"), filepath.Join(dir, "fuseraft")
			script := "#!/bin/sh\nwhile [ ! -e " + start + " ]; do sleep 0.05; done\nexec " + sim + " \"$@\"\n"
			if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			tm, _ := chatOnSize(t, cols, screentest.Rows, false, "testdata/noise.yaml", []string{"FRSIM_FAULTS=noise", "FUSERAFT_BIN=" + wrapper})
			tm.WaitLast("", 0, "›")
			tm.Type("say hello")
			tm.WaitLast("", 0, "› say hello")
			tm.Type("\r")
			tm.WaitLast("", 0, "›") // the line is entered
			if err := os.WriteFile(start, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			s := tm.WaitLast("— turn 0", 1, "›")
			rows := strings.Split(strings.TrimRight(s, "\n"), "\n")
			if !strings.HasPrefix(rows[0], "▶ chat") {
				t.Errorf("the header is not the first line:\n%s", s)
			}
			stray, typed := slices.Index(rows, strayLines[0]), slices.Index(rows, "› say hello")
			if stray < 1 || typed <= stray || strings.Count(s, "say hello") != 1 {
				t.Errorf("the header, the stray line, then the typed line, once each, are not in that order:\n%s", s)
			}
			tm.Type("\x04")
			if code := tm.Exit(); code != 0 {
				t.Errorf("exit %d", code)
			}
		})
	}
}
