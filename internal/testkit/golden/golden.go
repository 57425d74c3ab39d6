// Package golden compares what a test produced with a file under testdata, for the tests of
// fr's views (rendered streams, fr-ls tables, fr-report documents, terminal screens):
// go test -update rewrites the files instead.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Update makes Check rewrite the golden files instead of comparing them (go test -update).
var Update = flag.Bool("update", false, "rewrite the golden files in testdata")

// shownWhole is how many lines an output may have to be shown whole when it differs.
const shownWhole = 60

// Check compares got with the file at path, or writes it there with -update.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got == string(want) {
		return
	}
	msg := path + " differs (go test -update rewrites it) at " + FirstDiff(string(want), got)
	if strings.Count(got, "\n") <= shownWhole && strings.Count(string(want), "\n") <= shownWhole {
		msg += "\n--- got\n" + quote(got) + "--- want\n" + quote(string(want))
	}
	t.Error(msg)
}

// FirstDiff shows the first line in which two outputs differ, with ESC shown as \e.
func FirstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\nwant: " + quote(w) + "\n got: " + quote(g)
		}
	}
	return "no line (they differ in their ends)"
}

func quote(s string) string { return strings.ReplaceAll(s, "\x1b", `\e`) }
