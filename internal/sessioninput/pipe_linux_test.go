//go:build linux

package sessioninput

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	GrowPipe(w)
	n, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n < PipeSize {
		if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, PipeSize); err != nil {
			t.Skipf("this system refuses a %d-byte pipe: %v", PipeSize, err)
		}
		t.Errorf("pipe size %d after GrowPipe, want %d", n, PipeSize)
	}
	// Anything that is not a pipe is left alone.
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	GrowPipe(f)
	GrowPipe(&bytes.Buffer{})
}

// Buffered says what a pipe holds unread.
func TestBuffered(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	if n, ok := Buffered(pr); !ok || n != 0 {
		t.Fatalf("empty pipe: %d %v", n, ok)
	}
	pw.Write([]byte("hello\n"))
	if n, ok := Buffered(pr); !ok || n != 6 {
		t.Fatalf("pipe holding 6 bytes: %d %v", n, ok)
	}
}
