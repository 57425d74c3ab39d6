//go:build linux

package wire_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fuseraft/fr/pkg/wire"
)

// OutputPipe sets the capacity of the pipe fuseraft writes to before fuseraft starts.
func TestOutputPipe(t *testing.T) {
	for _, want := range []int{0, 4096} {
		p, err := wire.Start(wire.Command{Bin: "sh", Args: []string{"-c", "cat >/dev/null"}, OutputPipe: want})
		if err != nil {
			t.Fatal(err)
		}
		f := p.Stdout.(interface{ Fd() uintptr })
		n, err := unix.FcntlInt(f.Fd(), unix.F_GETPIPE_SZ, 0)
		p.Stdin.Close()
		p.Stdout.Close()
		p.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if want > 0 && n != want {
			t.Errorf("OutputPipe %d: the pipe holds %d bytes", want, n)
		}
		if want == 0 && n <= 4096 {
			t.Errorf("OutputPipe 0: the pipe holds %d bytes, want the system's default", n)
		}
	}
}
