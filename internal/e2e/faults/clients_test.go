package faults

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// selfAnswered is an fr-attach whose prompts the test answers itself, by the policy, as soon
// as they arrive.
type selfAnswered struct {
	p      *proc
	events *lines
	done   sync.WaitGroup
}

func (h *harness) selfAnsweredClient(args ...string) *selfAnswered {
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	c := &selfAnswered{events: newLines()}
	c.p = h.start("fr-attach", inR, outW, args...)
	inR.Close()
	outW.Close()
	c.done.Add(1)
	go func() {
		defer c.done.Done()
		defer inW.Close()
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<30)
		for sc.Scan() {
			line := sc.Text()
			c.events.add(line)
			if jsonField(line, "type") == "approval_request" {
				fmt.Fprintf(inW, `{"type":"approval_response","approved":%v}`+"\n", verdict(jsonField(line, "command")))
			}
		}
		c.events.close()
	}()
	return c
}

// TestManyClients: many clients at once over both transports, each with a task of its own:
// every client gets its own prompts and exactly one result, its own.
func TestManyClients(t *testing.T) {
	n := 20
	if full {
		n = 200
	}
	h := newHarness(t)
	scen := h.write("scenario.yaml", taskScenario(2, 0))
	d := h.startDaemon("--scenario", scen)
	clients := make([]*selfAnswered, n)
	for i := range clients {
		task := fmt.Sprintf("task %d", i)
		args := []string{"--socket", d.sock}
		if i%2 == 1 {
			args = []string{"--url", d.url, "--client-id", fmt.Sprintf("c%d", i)}
		}
		clients[i] = h.selfAnsweredClient(append(args, "--task", task, "--exit-on-result")...)
	}
	for i, c := range clients {
		if code := c.p.wait(t, 5*time.Minute); code != 0 {
			t.Errorf("client %d exited %d", i, code)
		}
		c.done.Wait()
	}
	d.stop(syscall.SIGTERM)
	for i, c := range clients {
		task := fmt.Sprintf("task %d", i)
		events := c.events.snapshot()
		checkOneResult(t, events, task)
		var queued, result string
		prompts := 0
		for _, e := range events {
			switch jsonField(e, "type") {
			case "queued":
				if queued == "" {
					queued = jsonField(e, "sessionId")
				}
			case "result":
				if result != "" {
					t.Errorf("client %d got a second result: %s", i, e)
				}
				result = jsonField(e, "sessionId")
				if jsonField(e, "task") != task {
					t.Errorf("client %d got another client's result: %s", i, e)
				}
			case "approval_request":
				prompts++
			}
		}
		if queued == "" || result != queued {
			t.Errorf("client %d: queued as %q, result for %q", i, queued, result)
		}
		if prompts != 2 {
			t.Errorf("client %d was asked %d approvals, want its task's 2", i, prompts)
		}
	}
}

// TestStoppedReader: a client whose own reader stops while the daemon floods it holds up no
// one: another client's task finishes, the daemon's memory stays bounded, and the stuck
// client does not exit 0 as if nothing was lost.
func TestStoppedReader(t *testing.T) {
	count := 200000
	// The stuck client gives up --output-timeout after its stdout stopped taking anything:
	// 10s here, the default 30s in make chaos.
	stuckArgs := []string{"--socket", "", "--output-timeout", "10s"}
	if full {
		count = 1000000
		stuckArgs = stuckArgs[:2]
	}
	h := newHarness(t)
	scen := h.write("scenario.yaml", fmt.Sprintf(`version: 1
serve:
  tasks:
    - match: flood
      steps:
        - flood: {count: %d, type: token, text: "%s"}
      result: {succeeded: true, lastAgent: coder, lastMessage: flooded}
    - match: ""
      steps:
        - approval: {kind: shell_command, command: "go test ./p1"}
      result: {succeeded: true, lastAgent: coder, lastMessage: done}
`, count, strings.Repeat("x", 200)))
	d := h.startDaemon("--scenario", scen)
	// the stuck client: nobody reads its stdout, and its stdin stays open
	stuckOutR, stuckOutW, _ := os.Pipe()
	stuckInR, stuckInW, _ := os.Pipe()
	stuckArgs[1] = d.sock
	stuck := h.start("fr-attach", stuckInR, stuckOutW, stuckArgs...)
	stuckOutW.Close()
	stuckInR.Close()
	flooder := h.selfAnsweredClient("--socket", d.sock, "--task", "flood", "--exit-on-result")
	if code := flooder.p.wait(t, 3*time.Minute); code != 0 {
		t.Errorf("the flooding client exited %d", code)
	}
	other := h.selfAnsweredClient("--socket", d.sock, "--task", "other", "--exit-on-result")
	if code := other.p.wait(t, 60*time.Second); code != 0 {
		t.Errorf("another client's task did not finish while one reader was stopped: exit %d", code)
	}
	flooder.done.Wait()
	other.done.Wait()
	checkOneResult(t, other.events.snapshot(), "other")
	// Whatever the stuck client did meanwhile, it must not claim success: events were lost.
	stuckInW.Close()
	code := stuck.wait(t, 2*time.Minute)
	go io.Copy(io.Discard, stuckOutR)
	if code == 0 || !strings.Contains(stuck.stderr.String(), "cannot keep up") {
		t.Errorf("the client whose reader stopped exited %d without saying its output could not keep up; stderr:\n%s", code, stuck.stderr)
	}
	stuckOutR.Close()
	d.stop(syscall.SIGTERM)
}

// TestDemoPipeline: the demo, again and again, always ends the same way and leaves nothing
// behind.
func TestDemoPipeline(t *testing.T) {
	runs := 2
	if full {
		runs = 100
	}
	h := newHarness(t)
	script, _ := filepath.Abs(filepath.Join("..", "..", "..", "demo", "run.sh"))
	for i := 0; i < runs; i++ {
		p := h.startCmd("demo", exec.Command("bash", script), nil, io.Discard)
		if code := p.wait(t, 2*time.Minute); code != 0 {
			t.Fatalf("run %d: the demo exited %d:\n%s", i+1, code, p.stderr)
		}
	}
}
