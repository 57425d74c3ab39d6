package report

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fuseraft/fr/internal/cmd/approve"
	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmdutil"
	goldenfile "github.com/fuseraft/fr/internal/testkit/golden"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// record plays a session of fr-sim with args, its prompts answered by fr-approve with policy
// through pipes, as `fr-stream run ... | fr-approve --output answers` does. It returns the
// session stream and the audit log's path.
func record(t *testing.T, policy string, simEnv map[string]string, args ...string) (session []byte, audit string) {
	return recordChat(t, policy, simEnv, nil, args...)
}

// turnWatcher closes the chat's input once its last turn ended (message_end), as a person
// typing Ctrl-D after the reply would.
type turnWatcher struct {
	turns int
	done  func()
	buf   []byte
}

func (w *turnWatcher) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if w.turns > 0 && bytes.Count(w.buf, []byte(`"type":"message_end"`)) >= w.turns {
		w.turns = 0
		w.done()
	}
	return len(p), nil
}

// recordChat is record for a chat: messages are typed first, and the input ends after the
// last turn.
func recordChat(t *testing.T, policy string, simEnv map[string]string, messages []string, args ...string) (session []byte, audit string) {
	t.Helper()
	dir := t.TempDir()
	audit = filepath.Join(dir, "approvals.jsonl")
	answersR, answersW := io.Pipe()
	eventsR, eventsW := io.Pipe()
	var out bytes.Buffer
	var simErr, apErr bytes.Buffer
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(1)
	// urfave/cli sets shared flags while it parses: the two commands must not parse at once, so
	// fr-sim starts once fr-approve reads its input.
	ready := make(chan struct{})
	first := &firstRead{r: eventsR, ready: ready}
	var apCode int
	go func() {
		defer wg.Done()
		apCode = approve.Run(ctx, cmdutil.Streams{In: first, Out: answersW, Err: &apErr, Getenv: env(nil)},
			[]string{"fr-approve", "--policy", policy, "--audit", audit})
		first.once.Do(func() { close(ready) }) // it ended before reading
		answersW.Close()
		io.Copy(io.Discard, eventsR)
	}()
	<-ready
	vars := map[string]string{"FRSIM_PACE": "0"}
	for k, v := range simEnv {
		vars[k] = v
	}
	var in io.Reader = answersR
	var sink io.Writer = io.Discard
	if messages != nil {
		inR, inW := io.Pipe()
		go func() {
			for _, m := range messages {
				inW.Write([]byte(`{"type":"user_input","text":"` + m + `"}` + "\n"))
			}
			io.Copy(inW, answersR)
		}()
		var once sync.Once
		sink = &turnWatcher{turns: len(messages), done: func() { once.Do(func() { inW.Close() }) }}
		in = inR
	}
	simCode := sim.Run(ctx, cmdutil.Streams{In: in, Out: io.MultiWriter(&out, eventsW, sink), Err: &simErr, Getenv: env(vars)},
		append([]string{"fr-sim"}, args...))
	eventsW.Close()
	answersR.Close()
	wg.Wait()
	if apCode != 0 {
		t.Fatalf("fr-approve: exit %d: %s", apCode, apErr.String())
	}
	_ = simCode // a failed run exits 1; the session is what counts
	return out.Bytes(), audit
}

// report runs fr-report over session (as stdin) with args and returns stdout, stderr and the
// exit code.
func report(t *testing.T, session []byte, vars map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), cmdutil.Streams{In: bytes.NewReader(session), Out: &out, Err: &errb, Getenv: env(vars)},
		append([]string{"fr-report"}, args...))
	return out.String(), errb.String(), code
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "golden", name), got)
}

func readFile2(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile2(t *testing.T, name, s string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

type firstRead struct {
	r     io.Reader
	ready chan struct{}
	once  sync.Once
}

func (f *firstRead) Read(p []byte) (int, error) {
	f.once.Do(func() { close(f.ready) })
	return f.r.Read(p)
}
