package attach

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

// A daemon that goes away and stays away: with --give-up-after fr-attach stops retrying once
// that long has passed without a connection, exits 10 and says how long it tried.
func TestGiveUpAfterADaemonStaysAway(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "frg")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write([]byte(`{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}` + "\n"))
		time.Sleep(100 * time.Millisecond)
		ln.Close() // the socket file goes with it: nothing listens any more
		c.Close()
	}()
	inR, inW := io.Pipe() // input that never ends
	defer inW.Close()
	var out, errb bytes.Buffer
	s := cmdutil.Streams{In: inR, Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	start := time.Now()
	go func() {
		done <- Run(context.Background(), s, []string{"fr-attach", "--socket", sock, "--exit-on-result",
			"--give-up-after", "2s", "--max-backoff", "300ms"})
	}()
	select {
	case code := <-done:
		el := time.Since(start)
		if code != cmdutil.ExitUnavailable {
			t.Errorf("exit %d, want 10; stderr:\n%s", code, errb.String())
		}
		if el < 2*time.Second || el > 2*time.Second+testkit.Bound(4*time.Second) {
			t.Errorf("gave up after %v, want about 2s", el)
		}
	case <-testkit.After(20 * time.Second):
		t.Fatalf("still retrying after 20s; stderr:\n%s", errb.String())
	}
	if !regexp.MustCompile(`(?m)^fr-attach: error: no connection to .*d\.sock for 2s \(--give-up-after\); gave up after \d+ reconnect attempts: `).MatchString(errb.String()) {
		t.Errorf("stderr does not say how long it tried:\n%s", errb.String())
	}
	if !strings.Contains(errb.String(), "hint: ") {
		t.Errorf("no hint:\n%s", errb.String())
	}
}

func TestGiveUpDefault(t *testing.T) {
	for _, tc := range []struct {
		set           bool
		flag          time.Duration
		inTTY, outTTY bool
		want          time.Duration
	}{
		{false, 0, false, false, 5 * time.Minute},
		{false, 0, true, false, 5 * time.Minute},
		{false, 0, false, true, 5 * time.Minute},
		{false, 0, true, true, 0},
		{true, 0, false, false, 0},
		{true, time.Second, true, true, time.Second},
		{true, 90 * time.Second, false, false, 90 * time.Second},
	} {
		if got := giveUpAfter(tc.set, tc.flag, tc.inTTY, tc.outTTY); got != tc.want {
			t.Errorf("giveUpAfter(%v, %v, %v, %v) = %v, want %v", tc.set, tc.flag, tc.inTTY, tc.outTTY, got, tc.want)
		}
	}
}
