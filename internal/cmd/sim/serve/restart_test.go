package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/pkg/wire"
)

// TestMain runs the daemon itself when the test binary is started as a child (see
// startChild), so that tests can kill it with SIGKILL.
func TestMain(m *testing.M) {
	if os.Getenv("FRSIM_SERVE_TEST_CHILD") == "1" {
		os.Exit(Run(context.Background(), cmdutil.OSStreams(), os.Args[1:]))
	}
	os.Exit(m.Run())
}

type childDaemon struct {
	cmd    *exec.Cmd
	url    string
	stderr *testkit.SyncBuffer
}

// startChild runs fr-sim serve as a process of its own on dir's socket, state and record.
func startChild(t *testing.T, dir, scenario string, args ...string) *childDaemon {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(dir, fmt.Sprintf("ready-%d.json", time.Now().UnixNano()))
	all := append([]string{"--socket", filepath.Join(dir, "d.sock"), "--state-dir", filepath.Join(dir, "state"),
		"--port", "0", "--ready-file", ready, "--record", filepath.Join(dir, "rec.jsonl"),
		"--trace", filepath.Join(dir, "trace.jsonl")}, args...)
	cmd := exec.Command(exe, all...)
	cmd.Env = append(os.Environ(), "FRSIM_SERVE_TEST_CHILD=1", "FUSERAFT_HOME="+filepath.Join(dir, "home"),
		"FRSIM_SCENARIO="+scenario, "FRSIM_FAULTS=", "FRSIM_RECORD=", "FRSIM_PACE=", "GORACE=atexit_sleep_ms=0")
	c := &childDaemon{cmd: cmd, stderr: &testkit.SyncBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(testTimeout)
	for {
		b, err := os.ReadFile(ready)
		if err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			var r struct{ URL string }
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			c.url = r.URL
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not start: %s", c.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (c *childDaemon) kill(t *testing.T) {
	t.Helper()
	c.cmd.Process.Kill()
	c.cmd.Wait()
}

// fortyScenario is a task of n approvals in a row, each its own step.
func fortyScenario(t *testing.T, n int) string {
	var b strings.Builder
	b.WriteString("version: 1\nserve:\n  tasks:\n    - match: \"\"\n      steps:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "        - approval: {kind: shell_command, command: \"step %d\"}\n", i)
		fmt.Fprintf(&b, "          deny:\n            - fail: \"step %d denied\"\n", i)
	}
	b.WriteString("      result: {lastAgent: Worker, lastMessage: \"all done\"}\n")
	p := filepath.Join(t.TempDir(), "forty.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// nextOf returns the next event of one of the types.
func (c *testClient) nextOf(types ...string) wire.Event {
	c.t.Helper()
	timer := time.NewTimer(testTimeout)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				c.t.Fatalf("connection closed waiting for %v", types)
			}
			for _, typ := range types {
				if ev.Type == typ {
					return ev
				}
			}
		case <-timer.C:
			c.t.Fatalf("timed out waiting for %v", types)
		}
	}
}

// countLines counts the lines of file containing s.
func countLines(t *testing.T, file, s string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			n++
		}
	}
	return n
}

// A task of 40 approvals, the daemon killed (SIGKILL) and started again 20 times, half of them
// between a prompt and its answer, half right after the daemon read an answer: every approval
// is answered exactly once, only one pending at a kill is asked again (once), and the result
// reaches its client exactly once. (The last kill comes before the last approval: a daemon
// killed in the moment between writing a result and saving that it did sends it again after
// the next hello, rather than risk losing it.)
func TestKilledTwentyTimesEachApprovalAnsweredOnce(t *testing.T) {
	const n = 40
	dir, err := os.MkdirTemp("/tmp", "frk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sc := fortyScenario(t, n)
	rec := filepath.Join(dir, "rec.jsonl")
	h := http.Header{"Fuseraft-Client-Id": {"forty"}}
	d := startChild(t, dir, sc)
	c := dialWS(t, d.url, h)
	c.next("hello")
	c.send("forty approvals")
	asked := map[int]int{}
	pendingAtKill := map[int]bool{} // asked, not answered when the daemon was killed
	killedBefore := map[int]bool{}
	kills, results := 0, 0
	step := func(ev wire.Event) int {
		var k int
		fmt.Sscanf(fieldOf[string](t, ev, "command"), "step %d", &k)
		return k
	}
	restart := func() {
		d.kill(t)
		kills++
		// What the killed daemon wrote before it died still counts.
		for ev := range c.events {
			switch ev.Type {
			case "approval_request":
				asked[step(ev)]++
				pendingAtKill[step(ev)] = true
			case "result":
				results++
			}
		}
		d = startChild(t, dir, sc)
		c = dialWS(t, d.url, h)
		c.next("hello")
	}
	for results == 0 {
		if kills > 30 {
			t.Fatal("more than 30 kills")
		}
		ev := c.nextOf("approval_request", "result")
		if ev.Type == "result" {
			results++
			if !fieldOf[bool](t, ev, "succeeded") || fieldOf[string](t, ev, "lastMessage") != "all done" {
				t.Errorf("result: %s", ev.Raw)
			}
			break
		}
		k := step(ev)
		asked[k]++
		switch {
		case k%4 == 1 && !killedBefore[k]:
			// killed between the prompt and its answer
			killedBefore[k] = true
			pendingAtKill[k] = true
			restart()
			continue
		case k%4 == 3 && asked[k] == 1:
			// killed once the daemon has read the answer
			c.send(fmt.Sprintf(`{"type":"approval_response","approved":true,"for":"step %d"}`, k))
			deadline := time.Now().Add(testTimeout)
			for countLines(t, rec, fmt.Sprintf(`"for":"step %d"`, k)) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the daemon did not read the answer to step %d", k)
				}
				time.Sleep(time.Millisecond)
			}
			restart()
			continue
		}
		c.send(fmt.Sprintf(`{"type":"approval_response","approved":true,"for":"step %d"}`, k))
	}
	if kills != 20 {
		t.Errorf("%d kills, want 20", kills)
	}
	for k := 1; k <= n; k++ {
		want := 1
		if pendingAtKill[k] {
			want = 2
		}
		if asked[k] != want || (killedBefore[k] && asked[k] != 2) {
			t.Errorf("step %d asked %d times, want %d", k, asked[k], want)
		}
		if got := countLines(t, rec, fmt.Sprintf(`"for":"step %d"`, k)); got != 1 {
			t.Errorf("step %d answered %d times in the record, want 1", k, got)
		}
	}
	// Once more: the result, delivered, is not delivered again. (A daemon killed after writing
	// a result and before saving so sends it again: a result is never lost.)
	trace := filepath.Join(dir, "trace.jsonl")
	deadline := time.Now().Add(testTimeout)
	for countLines(t, trace, `"event":"delivered"`) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no delivered result in the trace")
		}
		time.Sleep(time.Millisecond)
	}
	restart()
	select {
	case ev := <-c.events:
		t.Errorf("after the result was delivered, a restarted daemon sent %s", ev.Raw)
	case <-time.After(300 * time.Millisecond):
	}
	if results != 1 {
		t.Errorf("%d results, want 1", results)
	}
}

// A daemon killed with SIGKILL leaves its socket file and pidfile (and maybe a half-written
// state file) behind; the next start on the same paths is not stopped by them.
func TestRestartAfterSIGKILL(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "frk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := startChild(t, dir, "testdata/serve.yaml")
	c := dialWS(t, d.url, http.Header{"Fuseraft-Client-Id": {"k"}})
	c.next("hello")
	c.send("deploy it")
	c.next("approval_request")
	d.kill(t)
	for _, f := range []string{"d.sock", "state/serve.pid"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v (a killed daemon leaves it)", f, err)
		}
	}
	half := filepath.Join(dir, "state", ".serve-state.json.123")
	os.WriteFile(half, []byte(`{"tasks":[`), 0o600)
	d = startChild(t, dir, "testdata/serve.yaml")
	if _, err := os.Stat(half); err == nil {
		t.Error("the half-written state file of the killed daemon is left")
	}
	c = dialWS(t, d.url, http.Header{"Fuseraft-Client-Id": {"k"}})
	c.next("hello")
	c.next("approval_request")
	c.send(`{"type":"approval_response","approved":true}`)
	if r := c.next("result"); !fieldOf[bool](t, r, "succeeded") {
		t.Errorf("result: %s", r.Raw)
	}
	s := dialSocket(t, filepath.Join(dir, "d.sock"))
	s.next("hello")
}

// --trace says, per connection, what was asked, what answered it and where results went.
func TestTrace(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "frk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := startDaemon(t, dir, nil, "--trace", filepath.Join(dir, "trace.jsonl"))
	spectator := dialSocket(t, d.socket)
	spectator.next("hello")
	c := dialWS(t, d.url, http.Header{"Fuseraft-Client-Id": {"tracer"}})
	c.next("hello")
	c.send("deploy it")
	id := fieldOf[string](t, c.next("queued"), "sessionId")
	c.next("approval_request")
	c.send(`{"type":"approval_response","approved":true}`)
	c.next("result")
	d.stop()
	b, err := os.ReadFile(filepath.Join(dir, "trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		Event, Prompt, SessionID string
		Conn                     *int
		Client                   *string
		Line                     json.RawMessage
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e ev
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		conn, client := "-", "-"
		if e.Conn != nil {
			conn = fmt.Sprint(*e.Conn)
		}
		if e.Client != nil {
			client = *e.Client
		}
		s := e.Event + " conn=" + conn + " client=" + client
		if e.Prompt != "" {
			s += " prompt=" + e.Prompt
		}
		if e.SessionID != "" {
			s += " session=" + e.SessionID
		}
		if e.Event == "answered" || e.Event == "asked" {
			s += " " + string(e.Line)
		}
		if e.Event == "closed" {
			// Connections close when the daemon stops, which the test does as soon as it has
			// the result: that may come before "delivered" is traced, which follows the write.
			continue
		}
		got = append(got, s)
	}
	want := []string{
		"connected conn=1 client=-",
		"connected conn=2 client=tracer",
		"read conn=2 client=tracer",
		"dispatched conn=2 client=tracer session=" + id,
		"asked conn=2 client=tracer prompt=" + id + `/1/0 {"type":"approval_request","kind":"shell_command","command":"make deploy"}`,
		"read conn=2 client=tracer",
		"answered conn=2 client=tracer prompt=" + id + `/1/0 {"type":"approval_response","approved":true}`,
		"delivered conn=2 client=tracer session=" + id,
	}
	if len(got) < len(want) || strings.Join(got[:len(want)], "\n") != strings.Join(want, "\n") {
		t.Errorf("trace:\n%s\nwant it to start with:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
