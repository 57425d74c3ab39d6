package approve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmd/approve/policy"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func manyWords(prog string, n int) string {
	var b strings.Builder
	b.WriteString(prog)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, " f%d", i)
	}
	return b.String()
}

// A plain command of any length is answered, and so is the prompt after it.
func TestLongCommandsAnswered(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\nrules:\n  - {name: ls, decision: allow, shell: [ls, gofmt -l]}\n")
	const sh = `{"type":"approval_request","kind":"shell_command","command":`
	var in strings.Builder
	for _, cmd := range []string{manyWords("ls", 71), manyWords("gofmt -l", 80), "ls", manyWords("rm", 100), "ls"} {
		in.WriteString(sh + `"` + cmd + `"}` + "\n")
	}
	code, out, errs := runApprove(t, in.String(), "--policy", pol, "--root", dir, "--audit", dir+"/audit.log")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	const yes, no = `{"type":"approval_response","approved":true}`, `{"type":"approval_response","approved":false}`
	want := strings.Join([]string{yes, yes, yes, no, yes}, "\n") + "\n"
	if out != want {
		t.Errorf("answers\n%s\nwant\n%s", out, want)
	}
}

// withDeciderHook sets deciderHook for the test.
func withDeciderHook(t *testing.T, hook func(*policy.Decider)) {
	t.Cleanup(func() { deciderHook = nil })
	deciderHook = hook
}

func auditLines(t *testing.T, name string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// A panic while deciding one prompt denies that prompt, with an audit line that says so, and
// fr-approve goes on answering the prompts after it.
func TestPanicDeniesThatPromptOnly(t *testing.T) {
	withDeciderHook(t, func(d *policy.Decider) {
		d.Probe = func(raw []byte) {
			if strings.Contains(string(raw), "boom") {
				panic("injected failure")
			}
		}
	})
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\nrules:\n  - {name: all, decision: allow}\n"+
		"questions:\n  - {name: yes, question: '*', text: 'yes'}\n")
	const sh = `{"type":"approval_request","kind":"shell_command","command":`
	in := sh + `"ls"}` + "\n" + sh + `"echo boom"}` + "\n" + sh + `"ls"}` + "\n" +
		`{"type":"question","question":"boom?"}` + "\n" + `{"type":"question","question":"go on?"}` + "\n" + sh + `"ls"}` + "\n"
	audit := filepath.Join(dir, "audit.log")
	code, out, errs := runApprove(t, in, "--policy", pol, "--root", dir, "--audit", audit)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	const yes, no = `{"type":"approval_response","approved":true}`, `{"type":"approval_response","approved":false}`
	want := strings.Join([]string{yes, no, yes, `{"type":"question_response","answer":null}`,
		`{"type":"question_response","answer":"yes"}`, yes}, "\n") + "\n"
	if out != want {
		t.Errorf("answers\n%s\nwant\n%s", out, want)
	}
	if !strings.Contains(errs, "injected failure") {
		t.Errorf("stderr does not report the panic:\n%s", errs)
	}
	recs := auditLines(t, audit)
	if len(recs) != 6 {
		t.Fatalf("%d audit lines for 6 prompts", len(recs))
	}
	for _, i := range []int{1, 3} {
		r := recs[i]
		if r["decider"] != policy.ByError || !strings.Contains(fmt.Sprint(r["reason"]), "internal error while deciding it: injected failure") {
			t.Errorf("audit line %d: %v", i+1, r)
		}
	}
	if recs[1]["decision"] != "deny" || recs[1]["summary"] != "shell: echo boom" || recs[3]["decision"] != "skip" {
		t.Errorf("audit lines: %v, %v", recs[1], recs[3])
	}
	// check reports it too, and goes on
	code, out, _ = runApprove(t, in, "check", "--policy", pol, "--root", dir)
	if code != 0 || strings.Count(out, `"decider":"error"`) != 2 || strings.Count(out, "\n") != 6 {
		t.Errorf("check: exit %d\n%s", code, out)
	}
}

// A decision that runs past --decision-timeout is denied with that reason, and answered once
// even though it goes on to finish (with an allow) afterwards. The decision's clock is
// injected: the slow one moves it past the bound.
func TestDecisionTimeout(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	withDeciderHook(t, func(d *policy.Decider) {
		d.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		d.Probe = func(raw []byte) {
			if strings.Contains(string(raw), "slow") {
				mu.Lock()
				now = now.Add(11 * time.Second)
				mu.Unlock()
			}
		}
	})
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\nrules:\n  - {name: all, decision: allow}\n")
	const sh = `{"type":"approval_request","kind":"shell_command","command":`
	in := sh + `"echo slow"}` + "\n" + sh + `"ls"}` + "\n"
	for _, c := range []struct {
		flag []string
		want string
	}{
		{nil, "no"},
		{[]string{"--decision-timeout", "10s"}, "no"},
		{[]string{"--decision-timeout", "12s"}, "yes"},
	} {
		audit := filepath.Join(t.TempDir(), "audit.log")
		code, out, errs := runApprove(t, in, append([]string{"--policy", pol, "--root", dir, "--audit", audit}, c.flag...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		first := map[string]string{"yes": `{"type":"approval_response","approved":true}`, "no": `{"type":"approval_response","approved":false}`}[c.want]
		want := first + "\n" + `{"type":"approval_response","approved":true}` + "\n"
		if out != want {
			t.Errorf("%v: answers\n%s\nwant\n%s", c.flag, out, want)
		}
		recs := auditLines(t, audit)
		if len(recs) != 2 {
			t.Fatalf("%v: %d audit lines for 2 prompts", c.flag, len(recs))
		}
		if c.want == "no" && (recs[0]["decider"] != policy.ByError || !strings.Contains(fmt.Sprint(recs[0]["reason"]), "longer than the decision timeout (10s)")) {
			t.Errorf("%v: audit line %v", c.flag, recs[0])
		}
	}
	code, _, errs := runApprove(t, in, "--policy", pol, "--decision-timeout", "0s")
	if code != 2 || !strings.Contains(errs, "--decision-timeout") {
		t.Errorf("--decision-timeout 0s: exit %d: %s", code, errs)
	}
}

// A when condition that fails denies under a deny rule and does not allow under an allow
// rule; the audit line and stderr say it failed.
func TestFailedConditionAudited(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", `version: 1
default: deny
rules:
  - {name: sleeps, decision: allow, shell: [sleep]}
  - {name: no-long-sleep, decision: deny, shell: [sleep], when: '.command | split(" ")[1] | tonumber > 600'}
  - {name: words, decision: allow, shell: [echo], when: '.command | split(" ")[1] | test("^[a-z]+$")'}
`)
	const sh = `{"type":"approval_request","kind":"shell_command","command":`
	var in strings.Builder
	for _, cmd := range []string{"sleep 5", "sleep  5", "sleep 900", "echo hi", "echo"} {
		in.WriteString(sh + `"` + cmd + `"}` + "\n")
	}
	audit := filepath.Join(dir, "audit.log")
	code, out, errs := runApprove(t, in.String(), "--policy", pol, "--root", dir, "--audit", audit)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	const yes, no = `{"type":"approval_response","approved":true}`, `{"type":"approval_response","approved":false}`
	if want := strings.Join([]string{yes, no, no, yes, no}, "\n") + "\n"; out != want {
		t.Errorf("answers\n%s\nwant\n%s", out, want)
	}
	recs := auditLines(t, audit)
	if len(recs) != 5 {
		t.Fatalf("%d audit lines for 5 prompts", len(recs))
	}
	if recs[1]["rule"] != "no-long-sleep" || !strings.Contains(fmt.Sprint(recs[1]["reason"]),
		`its when condition failed (tonumber cannot be applied to "": invalid number), which a deny rule takes as a match`) {
		t.Errorf("audit line 2: %v", recs[1])
	}
	if recs[4]["decider"] != "default" || !strings.Contains(fmt.Sprint(recs[4]["reason"]),
		"rule \"words\" would allow it, but its when condition failed (test") {
		t.Errorf("audit line 5: %v", recs[4])
	}
	if !strings.Contains(errs, "rule \"no-long-sleep\": when") || !strings.Contains(errs, "rule \"words\": when") {
		t.Errorf("stderr:\n%s", errs)
	}
}

// A decision that never comes back to a check of its time (a file system that hangs) is
// answered by the watchdog: a denial, with its audit line, while the decision is still
// running; when the decision comes back its answer is dropped, and the next prompt is
// answered. The clock and the watchdog's ticks are the test's.
func TestWatchdogAnswersStuckDecision(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	entered, release := make(chan struct{}), make(chan struct{})
	withDeciderHook(t, func(d *policy.Decider) {
		d.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		d.Probe = func(raw []byte) {
			if strings.Contains(string(raw), "stuck") {
				mu.Lock()
				now = now.Add(20 * time.Second)
				mu.Unlock()
				entered <- struct{}{}
				<-release
			}
		}
	})
	ticks := make(chan time.Time)
	watchTicks = func() <-chan time.Time { return ticks }
	t.Cleanup(func() { watchTicks = nil })

	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\nrules:\n  - {name: all, decision: allow}\n")
	audit := filepath.Join(dir, "audit.log")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), cmdutil.Streams{In: inR, Out: outW, Err: io.Discard},
			[]string{"fr-approve", "--policy", pol, "--root", dir, "--audit", audit})
		outW.Close()
	}()
	br := bufio.NewReader(outR)
	const sh = `{"type":"approval_request","kind":"shell_command","command":`
	for _, c := range []struct{ stuck, want, next string }{
		{sh + `"echo stuck"}`, `{"type":"approval_response","approved":false}`, sh + `"ls"}`},
		{`{"type":"question","question":"stuck?"}`, `{"type":"question_response","answer":null}`, sh + `"ls"}`},
	} {
		io.WriteString(inW, c.stuck+"\n")
		select {
		case <-entered:
		case <-time.After(30 * time.Second):
			t.Fatal("the decision did not begin")
		}
		ticks <- time.Time{} // the watchdog looks: the decision has run 20s of a 10s timeout
		if got := readLine(t, br); got != c.want {
			t.Fatalf("while stuck: %q", got)
		}
		release <- struct{}{} // the decision comes back, late: its answer is dropped
		io.WriteString(inW, c.next+"\n")
		if got := readLine(t, br); got != `{"type":"approval_response","approved":true}` {
			t.Fatalf("the next prompt: %q", got)
		}
	}
	inW.Close()
	rest, _ := io.ReadAll(br)
	if code := <-done; code != 0 || len(rest) != 0 {
		t.Fatalf("exit %d, more answers %q", code, rest)
	}
	recs := auditLines(t, audit)
	if len(recs) != 4 || recs[0]["decider"] != policy.ByError || recs[0]["summary"] != "shell: echo stuck" ||
		!strings.Contains(fmt.Sprint(recs[0]["reason"]), "longer than the decision timeout (10s) and did not stop") ||
		recs[1]["decision"] != "allow" || recs[2]["decider"] != policy.ByError || recs[2]["summary"] != "question: stuck?" ||
		recs[2]["decision"] != "skip" || recs[3]["decision"] != "allow" {
		t.Errorf("audit lines: %v", recs)
	}
}
