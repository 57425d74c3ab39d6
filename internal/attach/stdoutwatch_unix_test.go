//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package attach

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/testkit"
)

// stdout that is a pipe is watched: its reader going away is noticed with nothing written, and
// the watcher ends when stopped.
func TestWatchStdout(t *testing.T) {
	if g, stop := watchStdout(&bytes.Buffer{}); g != nil {
		t.Error("a buffer is watched")
		stop()
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if g, stop := watchStdout(f); g != nil {
		t.Error("a regular file is watched")
		stop()
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	gone, stop := watchStdout(pw)
	defer stop()
	if gone == nil {
		t.Skip("stdout cannot be watched here")
	}
	select {
	case <-gone:
		t.Fatal("gone with its reader still there")
	case <-time.After(300 * time.Millisecond):
	}
	pr.Close()
	select {
	case <-gone:
	case <-testkit.After(2 * time.Second):
		t.Fatal("the reader going away was not noticed")
	}

	// Stopped, the watcher no longer reports anything.
	pr2, pw2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw2.Close()
	gone2, stop2 := watchStdout(pw2)
	stop2()
	time.Sleep(2 * watchPollMillis * time.Millisecond)
	pr2.Close()
	select {
	case <-gone2:
		t.Error("a stopped watcher still reported")
	case <-time.After(2 * watchPollMillis * time.Millisecond):
	}
}
