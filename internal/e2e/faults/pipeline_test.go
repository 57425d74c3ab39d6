package faults

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The policy every approver here applies: go test is allowed, anything else denied. Each
// prompt's command says which answer it must get.
const policy = `version: 1
default: deny
rules:
  - name: tests
    decision: allow
    shell: ["go test"]
`

// verdict is what the policy answers for a command.
func verdict(command string) bool { return strings.HasPrefix(command, "go test ") }

// taskScenario is a serve scenario whose task asks n approvals, alternately ones the policy
// allows and ones it denies, each naming its number so that an answer can be checked
// against the prompt it reached.
func taskScenario(n int, pause time.Duration) string {
	var b strings.Builder
	b.WriteString("version: 1\nserve:\n  tasks:\n    - match: \"\"\n      steps:\n")
	for i := 1; i <= n; i++ {
		cmd := fmt.Sprintf("go test ./p%d", i)
		if i%2 == 0 {
			cmd = fmt.Sprintf("curl http://x/p%d", i)
		}
		fmt.Fprintf(&b, "        - approval: {kind: shell_command, command: %q}\n", cmd)
		fmt.Fprintf(&b, "          allow: [{emit: {type: info, text: \"p%d allowed\"}}]\n", i)
		fmt.Fprintf(&b, "          deny: [{emit: {type: info, text: \"p%d denied\"}}]\n", i)
		if pause > 0 {
			fmt.Fprintf(&b, "        - delay: %s\n", pause)
		}
	}
	b.WriteString("      result: {succeeded: true, lastAgent: coder, lastMessage: done}\n")
	return b.String()
}

func (h *harness) write(name, content string) string {
	h.t.Helper()
	p := h.path(name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// pipeline is fr-attach | (a pipe that delivers each line `delay` late) | fr-approve, whose
// answers go back to fr-attach's stdin: an approver that takes its time, as a person or a
// slow policy does.
type pipeline struct {
	attach, approve *proc
	events          *lines // what fr-attach printed
	prompts         *lines // the approval_requests delivered to fr-approve, in order
	answers         *lines // what fr-approve wrote, in order
	wg              sync.WaitGroup
}

func (h *harness) approvedClient(delay time.Duration, attachArgs ...string) *pipeline {
	h.t.Helper()
	pol := h.path("policy.yaml")
	if _, err := os.Stat(pol); err != nil {
		h.write("policy.yaml", policy)
	}
	pl := &pipeline{events: newLines(), prompts: newLines(), answers: newLines()}
	attachInR, attachInW, _ := os.Pipe()
	attachOutR, attachOutW, _ := os.Pipe()
	approveInR, approveInW, _ := os.Pipe()
	approveOutR, approveOutW, _ := os.Pipe()
	pl.attach = h.start("fr-attach", attachInR, attachOutW, attachArgs...)
	pl.approve = h.start("fr-approve", approveInR, approveOutW, "--policy", pol)
	for _, f := range []*os.File{attachInR, attachOutW, approveInR, approveOutW} {
		f.Close()
	}
	type due struct {
		line string
		at   time.Time
	}
	slow := make(chan due, 1<<16)
	pl.wg.Add(3)
	go func() { // fr-attach's events, into the slow pipe
		defer pl.wg.Done()
		defer close(slow)
		sc := bufio.NewScanner(attachOutR)
		sc.Buffer(make([]byte, 1<<20), 1<<30)
		for sc.Scan() {
			pl.events.add(sc.Text())
			slow <- due{sc.Text(), time.Now().Add(delay)}
		}
		pl.events.close()
	}()
	go func() { // the slow pipe, into fr-approve
		defer pl.wg.Done()
		defer approveInW.Close()
		for d := range slow {
			time.Sleep(time.Until(d.at))
			if jsonField(d.line, "type") == "approval_request" {
				pl.prompts.add(d.line)
			}
			fmt.Fprintln(approveInW, d.line)
		}
	}()
	go func() { // fr-approve's answers, back to fr-attach
		defer pl.wg.Done()
		defer attachInW.Close()
		sc := bufio.NewScanner(approveOutR)
		for sc.Scan() {
			pl.answers.add(sc.Text())
			fmt.Fprintln(attachInW, sc.Text())
		}
		pl.answers.close()
	}()
	return pl
}

// finish waits for both commands and returns fr-attach's exit code.
func (pl *pipeline) finish(t *testing.T, within time.Duration) int {
	t.Helper()
	code := pl.attach.wait(t, within)
	pl.approve.wait(t, 30*time.Second)
	pl.wg.Wait()
	return code
}

// checkApprover: fr-approve gave exactly one answer per prompt it read, the one the policy
// gives, in order.
func (pl *pipeline) checkApprover(t *testing.T) {
	t.Helper()
	prompts, answers := pl.prompts.snapshot(), pl.answers.snapshot()
	if len(prompts) != len(answers) {
		t.Fatalf("fr-approve read %d prompts and wrote %d answers", len(prompts), len(answers))
	}
	for i := range prompts {
		want := fmt.Sprintf(`"approved":%v`, verdict(jsonField(prompts[i], "command")))
		if !strings.Contains(answers[i], want) {
			t.Errorf("answer %d to %s is %s, want %s", i+1, prompts[i], answers[i], want)
		}
	}
}
