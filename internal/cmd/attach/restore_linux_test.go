package attach_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/fuseraft/fr/internal/cmd/attach"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit/tty"
)

// In process on a pseudo-terminal: whatever the outcome, the terminal is left as it was.
func TestInteractiveRestoresTheTerminal(t *testing.T) {
	t.Parallel()
	ptmx, pts, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer pts.Close()
	go io.Copy(io.Discard, ptmx)
	before, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Skipf("termios: %v", err)
	}
	var stderr bytes.Buffer
	s := tty.Terminal(cmdutil.Streams{In: pts, Out: pts, Err: &stderr}, 80)
	s.ErrTerminal = false // stderr is read by the test
	code := attach.Run(context.Background(), s, []string{"fr-attach", "--socket", "/tmp/fr-no-such-daemon.sock"})
	if code != cmdutil.ExitUnavailable {
		t.Errorf("exit status %d, want %d; stderr:\n%s", code, cmdutil.ExitUnavailable, stderr.String())
	}
	after, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
		t.Errorf("terminal modes changed: lflag %#x -> %#x, iflag %#x -> %#x", before.Lflag, after.Lflag, before.Iflag, after.Iflag)
	}
	if !strings.Contains(stderr.String(), "no daemon socket at /tmp/fr-no-such-daemon.sock") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}
