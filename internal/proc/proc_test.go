//go:build unix

package proc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/testkit"
)

func TestChild(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, tc := range []struct {
		script, want string
	}{
		{"exit 0", "exited with status 0"},
		{"exit 3", "exited with status 3"},
		{"kill -TERM $$", "was killed by signal terminated"},
	} {
		c, err := Start(exec.Command("sh", "-c", tc.script))
		if err != nil {
			t.Fatal(err)
		}
		if got := ExitOf(c.Wait()).String(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.script, got, tc.want)
		}
	}
	// A child that ignores the stop signal is killed after StopGrace.
	ignoring := exec.Command("sh", "-c", "trap '' INT; echo set; sleep 30")
	set, err := ignoring.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Start(ignoring)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(set).ReadString('\n'); err != nil { // the trap is set
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := c.StopOnCancel(ctx, os.Interrupt)
	start := time.Now()
	cancel()
	st := ExitOf(c.Wait())
	stop()
	if !st.Signaled || st.Signal != syscall.SIGKILL || !c.Killed() || time.Since(start) < StopGrace {
		t.Errorf("ignored stop: %v after %v, killed %v", st, time.Since(start), c.Killed())
	}
	// WaitOrKill kills a child that does not end by itself.
	c, err = Start(exec.Command("sleep", "30"))
	if err != nil {
		t.Fatal(err)
	}
	if st := ExitOf(c.WaitOrKill(50 * time.Millisecond)); !st.Signaled || !c.Killed() {
		t.Errorf("WaitOrKill: %v", st)
	}
}

func TestStopReachesTheGroup(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	// The child ignores SIGTERM; what it started (sleep) holds its stdout. Stop must end both:
	// the group gets SIGTERM, and SIGKILL after the grace.
	cmd := exec.Command("sh", "-c", "trap '' TERM; sleep 30 & echo $!; wait")
	out, w, err := os.Pipe() // not StdoutPipe, which Wait closes
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	c, err := StartGroup(cmd)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(out, &pid); err != nil {
		t.Fatal(err)
	}
	c.Stop(syscall.SIGTERM, 100*time.Millisecond)
	copied := make(chan struct{})
	go func() { io.Copy(io.Discard, out); close(copied) }()
	select {
	case <-copied: // every holder of the pipe is gone: the grandchild too
	case <-testkit.After(10 * time.Second):
		t.Fatalf("the grandchild %d outlived Stop: it still holds the pipe", pid)
	}
	st := ExitOf(c.Wait())
	if !st.Signaled || st.Signal != syscall.SIGKILL || !c.Killed() {
		t.Errorf("after Stop: %v, killed %v; want killed by SIGKILL", st, c.Killed())
	}
	// Once waited for, a child gets no more signals: its pid may be another's.
	c.Signal(os.Kill)
	c.Interrupt()
}
