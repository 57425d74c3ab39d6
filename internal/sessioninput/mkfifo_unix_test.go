//go:build unix

package sessioninput

import (
	"path/filepath"
	"syscall"
	"testing"
)

func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	return p
}
