package approve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/nats-io/nats.go"

	"github.com/fuseraft/fr/internal/audit"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleetapproval"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/natstest"
	"github.com/fuseraft/fr/pkg/wire"
)

// fr-approve --nats answers a pool's prompts with the policy's decisions, as on a pipe, and
// writes each to its --audit file and to the audit stream, whose chain verify-audit checks.
func TestFleetApproverAnswersByPolicy(t *testing.T) {
	srv := natstest.Start(t)
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\nrules:\n  - {name: ls, decision: allow, shell: {commands: [ls], paths: inside_root}}\n"+
		"questions:\n  - {name: go-on, question: '*continue*', option: 'Yes*'}\n")
	auditFile := filepath.Join(dir, "audit.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	var errb testkit.SyncBuffer
	done := make(chan int, 1)
	go func() {
		s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb, Getenv: func(string) string { return "" }}
		done <- Run(ctx, s, []string{"fr-approve", "--nats", srv.URL(), "--pool", "ci", "--policy", pol, "--root", dir,
			"--audit", auditFile, "--approver-id", "a1", "--verbose"})
	}()
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c, err := fleetapproval.NewClient(nc, "ci", fleetapproval.WithTimeout(testkit.Bound(20*time.Second)),
		fleetapproval.WithDeadline(testkit.Bound(40*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, 30*time.Second, "fr-approve serving the pool", func() bool {
		return strings.Contains(errb.String(), "answering the prompts of pool ci as a1")
	})
	dctx := testkit.Context(t, 60*time.Second)
	for _, tc := range []struct{ prompt, resp, by string }{
		{`{"type":"approval_request","kind":"shell_command","command":"ls"}`, string(wire.ApprovalResponse(true)), "rule:ls"},
		{`{"type":"approval_request","kind":"shell_command","command":"rm -rf /"}`, string(wire.ApprovalResponse(false)), "default"},
		{`{"type":"approval_request","kind":"shell_command"}`, string(wire.ApprovalResponse(false)), "malformed"},
		{`{"type":"question","question":"continue?","options":["No","Yes, go on"]}`, `{"type":"question_response","answer":"Yes, go on"}`, "rule:go-on"},
	} {
		resp, by := c.Decide(dctx, "task-1", "host-1", "", []byte(tc.prompt))
		if string(resp) != tc.resp || by != tc.by {
			t.Errorf("%s: got %s by %s, want %s by %s", tc.prompt, resp, by, tc.resp, tc.by)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 130 && code != 0 {
			t.Errorf("fr-approve exited %d: %s", code, errb.String())
		}
	case <-testkit.After(30 * time.Second):
		t.Fatal("fr-approve did not stop")
	}
	code, out, stderr := runApprove(t, "", "verify-audit", auditFile)
	if code != 0 || !strings.Contains(out, `"lines":4`) {
		t.Errorf("verify-audit of the file: %d %s %s", code, out, stderr)
	}
	b, _ := os.ReadFile(auditFile)
	if !strings.Contains(string(b), `"task":"task-1"`) || !strings.Contains(string(b), `"approver":"a1"`) {
		t.Errorf("the audit file does not say where the prompts came from:\n%s", b)
	}
	stream := srv.URL() + "/" + fleetapproval.DefaultAuditStream
	code, out, stderr = runApprove(t, "", "verify-audit", stream)
	if code != 0 {
		t.Fatalf("verify-audit %s: exit %d: %s", stream, code, stderr)
	}
	var res audit.VerifyResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Lines != 4 || res.Subject != "fr.audit.ci.a1" || !res.OK {
		t.Errorf("verify-audit of the stream printed %s", out)
	}
	code, _, stderr = runApprove(t, "", "verify-audit", "--head", res.Last, stream)
	if code != 0 {
		t.Errorf("verify-audit --head of the stream: exit %d: %s", code, stderr)
	}
	code, _, _ = runApprove(t, "", "verify-audit", "--head", "sha256:"+strings.Repeat("0", 64), stream)
	if code != 1 {
		t.Errorf("verify-audit --head with a hash no chain holds: exit %d, want 1", code)
	}
}

// The flags of a fleet mean nothing without --nats, and a server that is not there is exit 10.
func TestFleetFlagsChecked(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\n")
	for _, tc := range []struct {
		args []string
		want int
		msg  string
	}{
		{[]string{"--policy", pol, "--pool", "x"}, 2, "--pool needs --nats"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--pool", "a.b", "--policy", pol}, 2, "only letters"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--interactive", "--policy", pol}, 2, "--interactive and --policy"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--policy", pol, "--input", "x"}, 2, "--input and --nats"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--policy", pol}, 10, "--nats"},
		{[]string{"--nats", "nats://user:pw@127.0.0.1:1", "--policy", pol}, 2, "--nats must not carry a password"},
		{[]string{"--policy", pol, "--nats-nkey", "seed"}, 2, "--nats-nkey needs --nats"},
		{[]string{"verify-audit", "nats://user:pw@127.0.0.1:1/S"}, 2, "credentials do not go in the URL"},
		{[]string{"verify-audit", "nats://127.0.0.1:1/"}, 2, "name the stream"},
	} {
		code, _, stderr := runApprove(t, "", tc.args...)
		if code != tc.want || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q; want exit %d saying %q", tc.args, code, stderr, tc.want, tc.msg)
		}
	}
}

// A broken chain in the stream is found: a line published on an approver's subject by
// someone else does not chain.
func TestFleetStreamTamperFound(t *testing.T) {
	srv := natstest.Start(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var errb testkit.SyncBuffer
	go func() {
		s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb, Getenv: func(string) string { return "" }}
		done <- Run(ctx, s, []string{"fr-approve", "--nats", srv.URL(), "--policy", pol, "--root", dir, "--approver-id", "a1", "--verbose"})
	}()
	testkit.WaitUntil(t, 30*time.Second, "fr-approve serving", func() bool { return strings.Contains(errb.String(), "answering") })
	c, _ := fleetapproval.NewClient(nc, "", fleetapproval.WithTimeout(testkit.Bound(20*time.Second)), fleetapproval.WithDeadline(testkit.Bound(40*time.Second)))
	for i := 0; i < 3; i++ {
		c.Decide(testkit.Context(t, 60*time.Second), "t", "h", "", []byte(fmt.Sprintf(`{"type":"approval_request","kind":"shell_command","command":"ls %d"}`, i)))
	}
	cancel()
	<-done
	js, _ := nc.JetStream()
	forged := `{"time":"2026-01-01T00:00:00Z","session":null,"type":"approval_request","summary":"shell: rm -rf /","decision":"allow","decider":"rule:x","policy":"","latencyMs":0,"prev":null,"hash":"sha256:` + strings.Repeat("0", 64) + `"}`
	if _, err := js.Publish(fleetapproval.AuditSubject("default", "a1"), []byte(forged)); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runApprove(t, "", "verify-audit", srv.URL()+"/"+fleetapproval.DefaultAuditStream)
	if code != 1 || !strings.Contains(stderr, "fr.audit.default.a1:4") {
		t.Errorf("verify-audit of a tampered stream: exit %d, %s", code, stderr)
	}
}

// A prompt the policy asks about reaches the person at an interactive fr-approve's terminal,
// whose answer the worker gets, decided "person"; both approvers' chains verify.
func TestFleetPersonAnswersOnTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer tty.Close()
	defer ptmx.Close()
	var scr testkit.SyncBuffer
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			scr.Write(b[:n])
			if err != nil {
				return
			}
		}
	}()
	srv := natstest.Start(t)
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\ndefault: ask\n")
	ctx, cancel := context.WithCancel(context.Background())
	var errPolicy, errPerson testkit.SyncBuffer
	done := make(chan int, 2)
	start := func(errb *testkit.SyncBuffer, args ...string) {
		go func() {
			s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: errb, Getenv: func(string) string { return "" }}
			done <- Run(ctx, s, append([]string{"fr-approve", "--nats", srv.URL(), "--pool", "ci", "--verbose"}, args...))
		}()
	}
	// urfave/cli sets shared flags while it parses: one command parses at a time
	start(&errPolicy, "--policy", pol, "--root", dir, "--approver-id", "policy")
	testkit.WaitUntil(t, 30*time.Second, "the policy approver serving", func() bool { return strings.Contains(errPolicy.String(), "answering") })
	start(&errPerson, "--interactive", "--tty", tty.Name(), "--approver-id", "alice")
	defer func() {
		cancel()
		for i := 0; i < 2; i++ {
			select {
			case <-done:
			case <-testkit.After(30 * time.Second):
				t.Fatal("fr-approve did not stop")
			}
		}
	}()
	testkit.WaitUntil(t, 30*time.Second, "both approvers serving", func() bool {
		return strings.Contains(errPolicy.String(), "answering") && strings.Contains(errPerson.String(), "answering")
	})
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c, _ := fleetapproval.NewClient(nc, "ci", fleetapproval.WithTimeout(testkit.Bound(20*time.Second)), fleetapproval.WithDeadline(testkit.Bound(60*time.Second)))
	type answer struct{ resp, by string }
	got := make(chan answer, 1)
	go func() {
		resp, by := c.Decide(testkit.Context(t, 90*time.Second), "task-7", "build-3", "", []byte(`{"type":"approval_request","kind":"shell_command","command":"make deploy"}`))
		got <- answer{string(resp), by}
	}()
	testkit.WaitUntil(t, 30*time.Second, "the prompt on the terminal", func() bool {
		return strings.Contains(scr.String(), "make deploy") && strings.Contains(scr.String(), "allow? [y/N]")
	})
	if _, err := ptmx.Write([]byte("y\r")); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-got:
		if a.resp != string(wire.ApprovalResponse(true)) || a.by != "person" {
			t.Fatalf("got %s by %s, want an allow by person", a.resp, a.by)
		}
	case <-testkit.After(60 * time.Second):
		t.Fatalf("no answer; the terminal shows:\n%s", scr.String())
	}
	code, out, stderr := runApprove(t, "", "verify-audit", srv.URL()+"/"+fleetapproval.DefaultAuditStream)
	if code != 0 || strings.Count(out, `"ok":true`) != 2 || !strings.Contains(out, "fr.audit.ci.alice") || !strings.Contains(out, "fr.audit.ci.policy") {
		t.Errorf("verify-audit: exit %d\n%s%s", code, out, stderr)
	}
}

// fr-approve --nats goes on across a restart of the server: the prompts sent after it are
// answered, and the approver's chain in the stream goes on whole.
func TestFleetApproverSurvivesServerRestart(t *testing.T) {
	srv := natstest.Start(t)
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\nrules:\n  - {name: ls, decision: allow, shell: {commands: [ls], paths: inside_root}}\n")
	ctx, cancel := context.WithCancel(context.Background())
	var errb testkit.SyncBuffer
	done := make(chan int, 1)
	go func() {
		s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb, Getenv: func(string) string { return "" }}
		done <- Run(ctx, s, []string{"fr-approve", "--nats", srv.URL(), "--policy", pol, "--root", dir, "--approver-id", "a1", "--verbose"})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-testkit.After(30 * time.Second):
			t.Error("fr-approve did not stop")
		}
	}()
	testkit.WaitUntil(t, 30*time.Second, "fr-approve serving", func() bool { return strings.Contains(errb.String(), "answering") })
	nc, err := nats.Connect(srv.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// a short try: a prompt sent while the approver reconnects is sent again soon
	c, _ := fleetapproval.NewClient(nc, "", fleetapproval.WithTimeout(200*time.Millisecond), fleetapproval.WithDeadline(testkit.Bound(60*time.Second)))
	dctx := testkit.Context(t, 90*time.Second)
	ask := func(i int) {
		t.Helper()
		resp, by := c.Decide(dctx, "t", "h", "", []byte(`{"type":"approval_request","kind":"shell_command","command":"ls"}`))
		if string(resp) != string(wire.ApprovalResponse(true)) || by != "rule:ls" {
			t.Fatalf("prompt %d: got %s by %s (stderr: %s)", i, resp, by, errb.String())
		}
	}
	for i := 0; i < 3; i++ {
		ask(i)
	}
	srv.Restart()
	for i := 3; i < 6; i++ {
		ask(i)
	}
	code, out, stderr := runApprove(t, "", "verify-audit", srv.URL()+"/"+fleetapproval.DefaultAuditStream)
	var res audit.VerifyResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Lines < 6 {
		t.Errorf("verify-audit after the restart: exit %d, %s%s", code, out, stderr)
	}
}
