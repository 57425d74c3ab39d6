//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sessioninput

import (
	"bytes"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fuseraft/fr/internal/testkit"
)

// stdout that is a pipe is watched: its reader going away is noticed with nothing written, and
// the watcher ends when stopped.
func TestWatchStdout(t *testing.T) {
	if g, stop := WatchStdout(&bytes.Buffer{}); g != nil {
		t.Error("a buffer is watched")
		stop()
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if g, stop := WatchStdout(f); g != nil {
		t.Error("a regular file is watched")
		stop()
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	gone, stop := WatchStdout(pw)
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
	case <-testkit.After(20 * time.Second):
		t.Fatal("the reader going away was not noticed")
	}

	// Stopped, the watcher no longer reports anything.
	pr2, pw2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw2.Close()
	gone2, stop2 := WatchStdout(pw2)
	stop2()
	time.Sleep(2 * watchPollMillis * time.Millisecond)
	pr2.Close()
	select {
	case <-gone2:
		t.Error("a stopped watcher still reported")
	case <-time.After(2 * watchPollMillis * time.Millisecond):
	}
}

// stdout that is a socket (a consumer at the other end of a socketpair, as a supervisor
// connects it) is watched too: its peer closing is noticed with nothing written.
func TestWatchStdoutSocket(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, peer := os.NewFile(uintptr(fds[0]), "out"), os.NewFile(uintptr(fds[1]), "peer")
	defer ours.Close()
	gone, stop := WatchStdout(ours)
	defer stop()
	if gone == nil {
		t.Fatal("a socket is not watched")
	}
	select {
	case <-gone:
		t.Fatal("gone with its peer still there")
	case <-time.After(300 * time.Millisecond):
	}
	peer.Close()
	select {
	case <-gone:
	case <-testkit.After(20 * time.Second):
		t.Fatal("the peer going away was not noticed")
	}
}
