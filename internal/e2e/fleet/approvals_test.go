package fleet_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmd/approve"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/natstest"
)

// A worker with --approvers sends its tasks' prompts to the pool's fr-approve --nats, whose
// policy answers them: a command the policy allows lets the task succeed, one it does not
// allow fails it, each decision is in the approver's audit log, and without --approvers the
// same prompt is denied by the worker itself.
func TestWorkerPromptsGoToApprovers(t *testing.T) {
	srv := natstest.Start(t)
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte("version: 1\nrules:\n  - {name: deploy, decision: allow, shell: {commands: [make deploy]}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	auditFile := filepath.Join(dir, "audit.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	var errb testkit.SyncBuffer
	done := make(chan int, 1)
	go func() {
		s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb, Getenv: func(string) string { return "" }}
		done <- approve.Run(ctx, s, []string{"fr-approve", "--nats", srv.URL(), "--pool", "ci", "--policy", pol, "--root", dir,
			"--audit", auditFile, "--approver-id", "a1", "--verbose"})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-testkit.After(30 * time.Second):
			t.Error("fr-approve did not stop")
		}
	}()
	if !testkit.Until(30*time.Second, func() bool { return strings.Contains(errb.String(), "answering the prompts of pool ci") }) {
		t.Fatalf("fr-approve is not serving the pool: %s", errb.String())
	}

	d := startDaemon(t, "d1", "quick.yaml", "0")
	w := startWorker(t, "host1", srv.URL(), d, "--pool", "ci", "--approvers",
		"--approval-timeout", testkit.Bound(20*time.Second).String(), "--approval-deadline", testkit.Bound(40*time.Second).String())
	r := frDispatch(t, "ask 1\nask 2\n", "--nats", srv.URL(), "--pool", "ci", "run", "--parallel", "2")
	must(t, r, 0)
	for _, l := range lines(t, r.stdout) {
		if l["succeeded"] != true || l["lastMessage"] != "deployed" {
			t.Errorf("a task whose prompt the policy allows: %v", l)
		}
	}
	b, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"rule":"deploy"`); n != 2 {
		t.Errorf("the approver's audit log has %d decisions by rule deploy, want 2:\n%s", n, b)
	}
	if strings.Contains(w.stderr.String(), "no approver is configured") {
		t.Errorf("the worker with --approvers denied by itself: %s", w.stderr)
	}

	// the same prompt on a worker without --approvers: denied there, the task fails
	d2 := startDaemon(t, "d2", "quick.yaml", "0")
	w2 := startWorker(t, "host2", srv.URL(), d2, "--pool", "solo")
	r = frDispatch(t, "ask 3\n", "--nats", srv.URL(), "--pool", "solo", "run")
	must(t, r, 1)
	if !strings.Contains(w2.stderr.String(), "no approver is configured") {
		t.Errorf("a worker without --approvers did not say it denies every prompt: %s", w2.stderr)
	}
}
