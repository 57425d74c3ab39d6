// Package fleet_test runs the fleet end to end on a real engine: an embedded NATS server with
// JetStream (natstest), several fr-sim serve daemons and several fr-workers on loopback, with
// fr-dispatch --nats and fr-attach --nats as a user runs them.
package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/cmd/attach"
	"github.com/fuseraft/fr/internal/cmd/dispatch"
	"github.com/fuseraft/fr/internal/cmd/sim/serve"
	"github.com/fuseraft/fr/internal/cmd/worker"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/internal/testkit"
)

// cmdEnv makes the test binary run one command instead of the tests: the worker a test kills.
const cmdEnv = "FR_FLEET_TEST_CMD"

func TestMain(m *testing.M) {
	if os.Getenv(cmdEnv) == "fr-worker" {
		os.Exit(worker.Run(context.Background(), cmdutil.OSStreams(), append([]string{"fr-worker"}, os.Args[1:]...)))
	}
	os.Exit(m.Run())
}

// shortDir is a temporary directory with a short path, for Unix sockets.
func shortDir(t *testing.T) string {
	d, err := os.MkdirTemp("/tmp", "frf")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

type daemonT struct {
	name, socket, url, record string
	stderr                    *testkit.SyncBuffer
	stop                      func() int
}

// startDaemon runs fr-sim serve in process with a scenario of testdata; pace "0" plays
// without delays.
func startDaemon(t *testing.T, name, scenario, pace string) *daemonT {
	t.Helper()
	return startDaemonAt(t, shortDir(t), "0", name, scenario, pace)
}

// startDaemonAt is startDaemon in dir (its socket, state and home) on port: a daemon started
// again there is the same daemon after a restart.
func startDaemonAt(t *testing.T, dir, port, name, scenario, pace string) *daemonT {
	t.Helper()
	d := &daemonT{name: name, socket: filepath.Join(dir, "d.sock"), record: filepath.Join(dir, "rec.jsonl"), stderr: &testkit.SyncBuffer{}}
	sc, _ := filepath.Abs(filepath.Join("testdata", scenario))
	vars := map[string]string{"FUSERAFT_HOME": filepath.Join(dir, "home"), "FRSIM_SCENARIO": sc, "FRSIM_RECORD": d.record, "FRSIM_PACE": pace}
	s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: d.stderr, Getenv: func(k string) string { return vars[k] }}
	ready := filepath.Join(dir, fmt.Sprintf("ready-%d.json", time.Now().UnixNano()))
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() {
		code <- serve.Run(ctx, s, []string{"--socket", d.socket, "--state-dir", filepath.Join(dir, "state"), "--port", port, "--ready-file", ready})
	}()
	testkit.WaitUntil(t, 30*time.Second, "daemon "+name+" ready", func() bool {
		b, err := os.ReadFile(ready)
		if err != nil {
			return false
		}
		var r struct{ URL string }
		json.Unmarshal(b, &r)
		d.url = r.URL
		return true
	})
	var once sync.Once
	exit := 0
	d.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case exit = <-code:
			case <-testkit.After(30 * time.Second):
				t.Errorf("daemon %s did not stop", name)
			}
		})
		return exit
	}
	t.Cleanup(func() { d.stop() })
	return d
}

// dispatched counts the tasks the daemon was sent (its input record's user_input lines).
func (d *daemonT) dispatched(t *testing.T) int {
	b, _ := os.ReadFile(d.record)
	return bytes.Count(b, []byte(`"user_input"`))
}

type workerT struct {
	name   string
	stderr *testkit.SyncBuffer
	stop   func() int
}

// startWorker runs fr-worker in process beside a daemon and waits until it takes tasks.
func startWorker(t *testing.T, name, natsURL string, d *daemonT, extra ...string) *workerT {
	t.Helper()
	dir := shortDir(t)
	ready := filepath.Join(dir, "ready.json")
	w := &workerT{name: name, stderr: &testkit.SyncBuffer{}}
	args := append([]string{"fr-worker", "--nats", natsURL, "--host", name, "--ready-file", ready, "--ack-wait", "2s", "--drain-timeout", "5s"}, extra...)
	if d != nil {
		args = append(args, "--socket", d.socket)
	}
	s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: w.stderr, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() { code <- worker.Run(ctx, s, args) }()
	testkit.WaitUntil(t, 30*time.Second, "worker "+name+" ready", func() bool {
		select {
		case c := <-code:
			t.Fatalf("worker %s exited with %d: %s", name, c, w.stderr)
		default:
		}
		_, err := os.Stat(ready)
		return err == nil
	})
	var once sync.Once
	exit := 0
	w.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case exit = <-code:
			case <-testkit.After(60 * time.Second):
				t.Errorf("worker %s did not stop: %s", name, w.stderr)
			}
		})
		return exit
	}
	t.Cleanup(func() { w.stop() })
	return w
}

// startWorkerProc runs fr-worker as a process of its own, for a test that kills it.
func startWorkerProc(t *testing.T, name, natsURL string, d *daemonT, extra ...string) (*exec.Cmd, *testkit.SyncBuffer) {
	t.Helper()
	dir := shortDir(t)
	ready := filepath.Join(dir, "ready.json")
	args := append([]string{"--nats", natsURL, "--host", name, "--ready-file", ready, "--ack-wait", "2s", "--socket", d.socket}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), cmdEnv+"=fr-worker", "GORACE=atexit_sleep_ms=0")
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	testkit.WaitUntil(t, 30*time.Second, "worker "+name+" ready", func() bool {
		_, err := os.Stat(ready)
		return err == nil
	})
	return cmd, stderr
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs an fr command in process.
func run(t *testing.T, ctx context.Context, stdin string, f func(context.Context, cmdutil.Streams, []string) int, args ...string) result {
	t.Helper()
	var out, errb testkit.SyncBuffer
	s := cmdutil.Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	code := f(ctx, s, args)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func frDispatch(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return run(t, testkit.Context(t, 120*time.Second), stdin, dispatch.Run, append([]string{"fr-dispatch"}, args...)...)
}

func frAttach(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, testkit.Context(t, 120*time.Second), "", attach.Run, append([]string{"fr-attach"}, args...)...)
}

// lines decodes JSON lines.
func lines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// client is a plain NATS client for looking inside the fleet.
func client(t *testing.T, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// resultEvents counts the result events stored for each task.
func resultEvents(t *testing.T, js jetstream.JetStream) map[string]int {
	t.Helper()
	ctx := testkit.Context(t, 60*time.Second)
	cons, err := js.OrderedConsumer(ctx, fleet.EventsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"fr.events.*.task.*"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, fleet.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := info.State.Msgs
	counts := map[string]int{}
	for i := uint64(0); i < n; i++ {
		m, err := cons.Next(jetstream.FetchMaxWait(testkit.Bound(10 * time.Second)))
		if err != nil {
			break
		}
		if typ, _ := topType(m.Data()); typ == "result" {
			counts[m.Headers().Get(fleet.HeaderTask)]++
		}
	}
	return counts
}

func topType(b []byte) (string, bool) {
	var v struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(b, &v) != nil {
		return "", false
	}
	return v.Type, true
}

func must(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
}

// bucket is the fleet's record bucket, through a client of the test's own.
func bucket(t *testing.T, url string) jetstream.KeyValue {
	t.Helper()
	_, js := client(t, url)
	kv, err := js.KeyValue(testkit.Context(t, 30*time.Second), fleet.TasksBucket)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}
