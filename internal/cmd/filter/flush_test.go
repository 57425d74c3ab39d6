package filter

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

// notifyWriter collects output and signals each write.
type notifyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (w *notifyWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(b)
	w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(b), nil
}

func (w *notifyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitFor waits until the output holds want, or fails after a generous timeout.
func (w *notifyWriter) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := testkit.After(20 * time.Second)
	for !strings.Contains(w.String(), want) {
		select {
		case <-w.wrote:
		case <-deadline:
			t.Fatalf("output %q never came; have %q", want, w.String())
		}
	}
}

// TestOutputIsLive writes one event, waits for its output before writing the next: output
// must be flushed whenever the input has nothing more ready, or this test times out.
func TestOutputIsLive(t *testing.T) {
	cases := []struct {
		args       []string
		out1, out2 string
	}{
		{[]string{"."}, `{"type":"token","text":"one"}` + "\n", `{"type":"token","text":"two"}` + "\n"},
		{[]string{"--type", "token"}, `"one"}` + "\n", `"two"}` + "\n"},
		{[]string{"-j", "--type", "token", ".text"}, "one", "onetwo"},
		{[]string{"-r", `select(.type == "token") | .text`}, "one\n", "two\n"},
		{[]string{"-n", "inputs.text"}, `"one"`, `"two"`},
		{[]string{"--pretty", "--color", "never"}, "one", "two"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			pr, pw := io.Pipe()
			out := &notifyWriter{wrote: make(chan struct{}, 1)}
			done := make(chan int, 1)
			go func() {
				s := cmdutil.Streams{In: pr, Out: out, Err: io.Discard, Getenv: func(string) string { return "" }}
				done <- Run(context.Background(), s, append([]string{"fr-filter"}, tc.args...))
			}()
			io.WriteString(pw, `{"type":"info","text":"skip"}`+"\n"+`{"type":"token","text":"one"}`+"\n")
			out.waitFor(t, tc.out1)
			io.WriteString(pw, `{"type":"token","text":"two"}`+"\n")
			out.waitFor(t, tc.out2)
			pw.Close()
			select {
			case code := <-done:
				if code != 0 {
					t.Fatalf("exit %d", code)
				}
			case <-testkit.After(20 * time.Second):
				t.Fatal("fr-filter did not end at the end of its input")
			}
		})
	}
}
