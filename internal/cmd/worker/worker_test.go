package worker

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit/natstest"
)

func runWorker(env map[string]string, args ...string) (int, string) {
	var out, errb bytes.Buffer
	s := cmdutil.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }}
	code := Run(context.Background(), s, append([]string{"fr-worker"}, args...))
	return code, errb.String()
}

// Bad command lines are usage errors (exit 2) that say what is wrong, before anything is
// started.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--socket", "/tmp/x.sock"}, nil, "no NATS server"},
		{[]string{"--nats", "nats://127.0.0.1:1"}, nil, "no daemon"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--socket", "s", "--url", "ws://h:1/attach"}, nil, "cannot be combined"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--socket", "s", "--pool", "a.b"}, nil, "--pool"},
		{[]string{"--nats", "nats://u:pw@127.0.0.1:1", "--socket", "s"}, nil, "must not carry a password"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--socket", "s", "--capacity", "0"}, nil, "--capacity"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--socket", "s", "--ack-wait", "10ms"}, nil, "--ack-wait"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--socket", "s", "--max-deliver", "0"}, nil, "--max-deliver"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--socket", "s", "--nats-store", "d"}, nil, "--nats-store is for --embedded-nats"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--url", "http://h/attach"}, nil, "not a ws://"},
		{[]string{"--socket", "s", "extra"}, map[string]string{"FR_NATS_URL": "nats://127.0.0.1:1"}, "unexpected argument"},
		// the limits: fr-stream's flags, read by the same code
		{[]string{"--nats", "nats://127.0.0.1:1", "--socket", "s", "--max-turns", "3", "--per", "month", "--budget-kv", "b"}, nil, "--per"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--socket", "s", "--max-turns", "3", "--per", "week"}, nil, "--per needs --budget-file FILE or --budget-kv BUCKET"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--socket", "s", "--max-turns", "-1"}, nil, "--max-turns must not be negative"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--socket", "s", "--max-cost", "5"}, nil, "--max-cost needs --prices FILE"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--socket", "s", "--max-turns", "3", "--budget-kv", "b", "--budget-file", "f"}, nil, "keep the totals in one place"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--socket", "s", "--max-turns", "3", "--capacity", "2"}, nil, "--max-turns needs --capacity 1"},
	} {
		code, stderr := runWorker(c.env, c.args...)
		if code != cmdutil.ExitUsage || !strings.Contains(stderr, c.want) || !strings.HasPrefix(stderr, "fr-worker: error: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// No server at --nats: exit 10, saying where it looked and what to do.
func TestNoServer(t *testing.T) {
	code, stderr := runWorker(nil, "--nats", "nats://127.0.0.1:1", "--socket", "/tmp/none.sock")
	if code != cmdutil.ExitUnavailable || !strings.Contains(stderr, "cannot connect to NATS at nats://127.0.0.1:1") || !strings.Contains(stderr, "hint:") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// A --budget-kv whose server cannot be reached stops the worker before it takes a task: exit
// 10 (as fr-stream's), naming the flag; a bucket name that is not one is a usage error.
func TestBudgetKVUnreachable(t *testing.T) {
	srv := natstest.Start(t)
	code, stderr := runWorker(nil, "--nats", srv.URL(), "--socket", "/tmp/none.sock", "--max-turns", "3", "--budget-kv", "nats://127.0.0.1:1/spend")
	if code != cmdutil.ExitUnavailable || !strings.Contains(stderr, "fr-worker: error: --budget-kv nats://127.0.0.1:1/spend: ") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	code, stderr = runWorker(nil, "--nats", srv.URL(), "--socket", "/tmp/none.sock", "--max-turns", "3", "--budget-kv", "a.b")
	if code != cmdutil.ExitUsage || !strings.Contains(stderr, `--budget-kv: "a.b" is not a bucket name`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

func TestEmbeddedDefault(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"fr-worker", "--embedded-nats"}, []string{"fr-worker", "--embedded-nats", "127.0.0.1:4222"}},
		{[]string{"fr-worker", "--embedded-nats", "--socket", "s"}, []string{"fr-worker", "--embedded-nats", "127.0.0.1:4222", "--socket", "s"}},
		{[]string{"fr-worker", "--embedded-nats", "0.0.0.0:4222"}, []string{"fr-worker", "--embedded-nats", "0.0.0.0:4222"}},
		{[]string{"fr-worker", "--embedded-nats=127.0.0.1:0"}, []string{"fr-worker", "--embedded-nats=127.0.0.1:0"}},
	} {
		if got := embeddedDefault(c.in); !slices.Equal(got, c.want) {
			t.Errorf("%v: got %v, want %v", c.in, got, c.want)
		}
	}
}
