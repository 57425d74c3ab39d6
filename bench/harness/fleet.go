package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/internal/fleet/embedded"
)

// fleetResult is one figure of the fleet benchmark, for results.jsonl.
type fleetResult struct {
	Kind   string  `json:"kind"` // "fleet"
	Time   string  `json:"time"`
	Title  string  `json:"title"`
	Label  string  `json:"label"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Failed string  `json:"failed,omitempty"`
}

// cmdFleet measures the fleet on this machine, on an embedded NATS server with JetStream:
// tasks over -daemons fr-sim daemons and as many fr-workers against fr-dispatch run on one
// daemon, and the events one worker relays (latency against a direct client, throughput,
// the worker's peak memory). The fr commands are taken from PATH.
func cmdFleet(args []string) error {
	fs := flag.NewFlagSet("fleet", flag.ExitOnError)
	tasks := fs.Int("tasks", 1000, "tasks of the throughput run")
	daemons := fs.Int("daemons", 10, "daemons (and workers) of the fleet")
	scenario := fs.String("scenario", "bench/fleet-scenario.yaml", "fr-sim scenario of the daemons")
	latN := fs.Int("lat-n", 2000, "events of the latency run")
	latRate := fs.Float64("lat-rate", 1000, "events per second of the latency run")
	events := fs.Int("events", 200000, "events of the throughput run through one worker")
	jsonOut := fs.String("json", "", "append every figure to this JSONL file")
	only := fs.String("only", "tasks,relay", "parts to run")
	fs.Parse(args)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("/tmp", "frbf")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	srv, err := embedded.Start("127.0.0.1:0", filepath.Join(tmp, "nats"))
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	b := &fleetBench{tmp: tmp, url: srv.URL(), self: self, json: *jsonOut}
	defer b.stopAll()
	if strings.Contains(*only, "relay") {
		if err := b.relay(*latN, *latRate, *events); err != nil {
			return err
		}
	}
	if strings.Contains(*only, "tasks") {
		if err := b.tasks(*tasks, *daemons, *scenario); err != nil {
			return err
		}
	}
	return nil
}

type fleetBench struct {
	tmp, url, self, json string
	procs                []*exec.Cmd
}

func (b *fleetBench) start(name string, env []string, argv ...string) (*exec.Cmd, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	f, err := os.Create(filepath.Join(b.tmp, name+".err"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = f
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	b.procs = append(b.procs, cmd)
	return cmd, nil
}

func (b *fleetBench) stopAll() {
	for i := len(b.procs) - 1; i >= 0; i-- {
		b.procs[i].Process.Signal(os.Interrupt)
	}
	for _, p := range b.procs {
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.Process.Kill()
		}
	}
	b.procs = nil
}

func waitFile(path string, d time.Duration) ([]byte, error) {
	deadline := time.Now().Add(d)
	for {
		if bs, err := os.ReadFile(path); err == nil && len(bs) > 0 {
			return bs, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s not written within %s", path, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (b *fleetBench) record(r fleetResult) {
	r.Kind, r.Time = "fleet", stamp()
	if b.json != "" {
		appendJSON(b.json, r)
	}
}

// worker starts an fr-worker beside socket and waits until it takes tasks.
func (b *fleetBench) worker(name, pool, socket string) (*exec.Cmd, error) {
	ready := filepath.Join(b.tmp, name+".ready")
	cmd, err := b.start(name, nil, "fr-worker", "--nats", b.url, "--pool", pool, "--host", name, "--socket", socket, "--ready-file", ready)
	if err != nil {
		return nil, err
	}
	_, err = waitFile(ready, 60*time.Second)
	return cmd, err
}

// tasks: n tasks over k daemons and workers, against fr-dispatch run on one daemon.
func (b *fleetBench) tasks(n, k int, scenario string) error {
	sc, _ := filepath.Abs(scenario)
	env := []string{"FRSIM_SCENARIO=" + sc, "FRSIM_PACE=1"}
	var lines strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&lines, "bench task %d\n", i)
	}
	// One daemon over its MCP tools, as fr-dispatch run is used today.
	ready := filepath.Join(b.tmp, "one.json")
	if _, err := b.start("one", append(env, "FUSERAFT_HOME="+filepath.Join(b.tmp, "home-one")), "fr-sim", "serve", "--socket", filepath.Join(b.tmp, "one.sock"),
		"--state-dir", filepath.Join(b.tmp, "state-one"), "--port", "0", "--ready-file", ready); err != nil {
		return err
	}
	rb, err := waitFile(ready, 60*time.Second)
	if err != nil {
		return err
	}
	var r struct{ URL string }
	json.Unmarshal(rb, &r)
	one, oneOut, err := timeRun(lines.String(), "fr-dispatch", "--url", r.URL, "run", "--parallel", "100", "--poll", "20ms", "--max-poll", "200ms")
	oneOK := checkResults(oneOut, n, "sessionId")
	// The fleet.
	for i := 1; i <= k; i++ {
		sock := filepath.Join(b.tmp, fmt.Sprintf("d%d.sock", i))
		rd := filepath.Join(b.tmp, fmt.Sprintf("d%d.json", i))
		if _, err := b.start(fmt.Sprintf("d%d", i), append(env, "FUSERAFT_HOME="+filepath.Join(b.tmp, fmt.Sprintf("home%d", i))), "fr-sim", "serve", "--socket", sock,
			"--state-dir", filepath.Join(b.tmp, fmt.Sprintf("state%d", i)), "--ready-file", rd); err != nil {
			return err
		}
		if _, err := waitFile(rd, 60*time.Second); err != nil {
			return err
		}
		if _, err := b.worker(fmt.Sprintf("w%d", i), "bench", sock); err != nil {
			return err
		}
	}
	fl, flOut, err2 := timeRun(lines.String(), "fr-dispatch", "--nats", b.url, "--pool", "bench", "run", "--parallel", strconv.Itoa(n))
	flOK := checkResults(flOut, n, "taskId")
	title := fmt.Sprintf("Fleet: %d tasks of 100ms, one fr-sim daemon vs %d daemons with a worker each, on an embedded NATS JetStream", n, k)
	fmt.Printf("### %s\n\n| run | wall | tasks/s | every task exactly once | vs one daemon |\n|---|---:|---:|---|---:|\n", title)
	row := func(label string, wall time.Duration, err error, ok string) {
		fail := ok
		if err != nil {
			fail = err.Error()
		}
		rate := float64(n) / wall.Seconds()
		vs := one.Seconds() / wall.Seconds()
		mark := "yes"
		if fail != "" {
			mark = "no: " + fail
		}
		fmt.Printf("| %s | %s | %.0f | %s | %.1fx |\n", label, fmtDur(wall.Seconds()), rate, mark, vs)
		b.record(fleetResult{Title: title, Label: label + " wall", Value: wall.Seconds(), Unit: "s", Failed: fail})
		b.record(fleetResult{Title: title, Label: label + " vs one daemon", Value: vs, Unit: "x", Failed: fail})
	}
	row("fr-dispatch run --parallel 100, one daemon (MCP)", one, err, oneOK)
	row(fmt.Sprintf("fr-dispatch --nats run, %d daemons + workers", k), fl, err2, flOK)
	fmt.Println()
	return nil
}

func timeRun(stdin string, argv ...string) (time.Duration, []byte, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		err = fmt.Errorf("%s: %v: %s", argv[0], err, firstLine(errb.String()))
	}
	return d, out.Bytes(), err
}

// checkResults says what is wrong with the result lines of n tasks: "" when there is one
// successful line per task.
func checkResults(out []byte, n int, key string) string {
	seen := map[string]bool{}
	ok := 0
	for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(l, &m) != nil {
			continue
		}
		id, _ := m[key].(string)
		if seen[id] {
			return "task " + id + " twice"
		}
		seen[id] = true
		if m["succeeded"] == true {
			ok++
		}
	}
	if len(seen) != n || ok != n {
		return fmt.Sprintf("%d results, %d succeeded, for %d tasks", len(seen), ok, n)
	}
	return ""
}

// relay: per-event latency through one worker and NATS against a client of the daemon's
// socket, throughput through one worker, and the worker's peak memory.
func (b *fleetBench) relay(latN int, rate float64, events int) error {
	nc, err := nats.Connect(b.url)
	if err != nil {
		return err
	}
	defer nc.Close()
	cl, err := fleet.Dial(context.Background(), fleet.Conn{URL: b.url})
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := cl.Setup(ctx); err != nil {
		return err
	}
	kv, err := cl.Bucket(ctx)
	if err != nil {
		return err
	}
	r := &relayBench{fleetBench: b, ctx: ctx, nc: nc, cl: cl, kv: kv}
	if err := r.latency(latN, rate); err != nil {
		return err
	}
	return r.flood(events)
}

// relayBench is what the relay's measures share: a plain NATS subscriber and a fleet client.
type relayBench struct {
	*fleetBench
	ctx context.Context
	nc  *nats.Conn
	cl  *fleet.Client
	kv  jetstream.KeyValue
}

// daemon starts an fr-sim daemon whose one task broadcasts n events at rate, and returns
// its socket.
func (r *relayBench) daemon(name string, rate float64, n int) (string, error) {
	sock := filepath.Join(r.tmp, name+".sock")
	rd := filepath.Join(r.tmp, name+".json")
	if _, err := r.start(name, nil, r.self, "serve", "-broadcast", "-socket", sock, "-ready-file", rd, "-rate", fmt.Sprint(rate), "-n", strconv.Itoa(n)); err != nil {
		return "", err
	}
	_, err := waitFile(rd, 60*time.Second)
	return sock, err
}

// subscribe follows pool's events and sends it one task.
func (r *relayBench) subscribe(pool string) (*nats.Subscription, error) {
	sub, err := r.nc.SubscribeSync(fleet.PoolEvents(pool))
	if err != nil {
		return nil, err
	}
	sub.SetPendingLimits(-1, -1)
	r.nc.Flush()
	if _, err := r.cl.Publish(r.ctx, r.kv, fleet.Task{TaskID: fleet.NewTaskID(), Task: "relay", Pool: pool}); err != nil {
		sub.Unsubscribe()
		return nil, err
	}
	return sub, nil
}

// run sends one task to pool and gathers the receive time of each event stamped "ts".
func (r *relayBench) run(pool string) (lat []float64, first, last time.Time, err error) {
	sub, err := r.subscribe(pool)
	if err != nil {
		return nil, first, last, err
	}
	defer sub.Unsubscribe()
	for {
		m, err := sub.NextMsg(2 * time.Minute)
		if err != nil {
			return lat, first, last, err
		}
		now := time.Now()
		for _, l := range bytes.Split(m.Data, []byte("\n")) {
			if bytes.Contains(l, []byte(`"type":"result"`)) {
				return lat, first, now, nil
			}
			if i := bytes.Index(l, []byte(`"ts":`)); i >= 0 {
				end := bytes.IndexByte(l[i:], '}')
				ts, _ := strconv.ParseInt(string(l[i+5:i+end]), 10, 64)
				if first.IsZero() {
					first = now
				}
				lat = append(lat, float64(now.UnixNano()-ts)/1e3)
			}
		}
	}
}

// runTimes is run, keeping each stamped event's receive time by its stamp.
func (r *relayBench) runTimes(pool string) (map[int64]time.Time, error) {
	sub, err := r.subscribe(pool)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	got := map[int64]time.Time{}
	for {
		m, err := sub.NextMsg(2 * time.Minute)
		if err != nil {
			return got, err
		}
		now := time.Now()
		for _, l := range bytes.Split(m.Data, []byte("\n")) {
			if bytes.Contains(l, []byte(`"type":"result"`)) {
				return got, nil
			}
			if ts, ok := stampOf(l); ok {
				got[ts] = now
			}
		}
	}
}

// latency measures each event through the fleet against the same event read on the
// daemon's socket, and prints the table.
func (r *relayBench) latency(latN int, rate float64) error {
	title := fmt.Sprintf("Fleet relay: %d events at %.0f/s through one fr-worker and NATS, each against the same event read on the daemon's socket", latN, rate)
	sock, err := r.daemon("lat", rate, latN)
	if err != nil {
		return err
	}
	obs, err := observe(sock)
	if err != nil {
		return err
	}
	if _, err := r.worker("wlat", "lat", sock); err != nil {
		return err
	}
	got, err := r.runTimes("lat")
	if err != nil {
		return err
	}
	direct := obs.wait()
	var added, viaFleet, dir []float64
	for ts, at := range got {
		d, ok := direct[ts]
		if !ok {
			continue
		}
		added = append(added, float64(at.Sub(d))/1e3)
		viaFleet = append(viaFleet, float64(at.UnixNano()-ts)/1e3)
		dir = append(dir, float64(d.UnixNano()-ts)/1e3)
	}
	if len(added) == 0 {
		return fmt.Errorf("no event seen on both paths")
	}
	fmt.Printf("### %s\n\n| latency | events | p50 | p99 | max |\n|---|---:|---:|---:|---:|\n", title)
	show := func(label string, v []float64) (p50, p99 float64) {
		sort.Float64s(v)
		p50, p99 = percentile(v, 0.5), percentile(v, 0.99)
		fmt.Printf("| %s | %d | %s | %s | %s |\n", label, len(v), fmtMicros(p50), fmtMicros(p99), fmtMicros(v[len(v)-1]))
		return
	}
	show("daemon → its socket (a direct client)", dir)
	show("daemon → fr-worker → NATS JetStream → subscriber", viaFleet)
	a50, a99 := show("added by the fleet (the same event, fleet minus direct)", added)
	fmt.Println()
	r.record(fleetResult{Title: title, Label: "added p50", Value: a50 / 1e3, Unit: "ms"})
	r.record(fleetResult{Title: title, Label: "added p99", Value: a99 / 1e3, Unit: "ms"})
	return nil
}

// flood measures a flood of events through one worker, as fast as the daemon sends, and
// prints the table.
func (r *relayBench) flood(events int) error {
	title := "Fleet relay: a flood of events through one fr-worker, as fast as the daemon sends"
	fmt.Printf("### %s\n\n| events in the task | events/s | worker CPU per event | worker peak RSS |\n|---|---:|---:|---:|\n", title)
	for i, n := range []int{events, events * 4} {
		name := fmt.Sprintf("flood%d", i)
		sock, err := r.daemon(name, 1e9, n)
		if err != nil {
			return err
		}
		w, err := r.worker("w"+name, name, sock)
		if err != nil {
			return err
		}
		cpu0 := cpuSeconds(w.Process.Pid)
		lat, first, last, err := r.run(name)
		if err != nil {
			return err
		}
		eps := float64(len(lat)-1) / last.Sub(first).Seconds()
		rss := peakRSS(w.Process.Pid)
		perEvent := (cpuSeconds(w.Process.Pid) - cpu0) / float64(len(lat)) * 1e6
		fmt.Printf("| %d | %.0f | %s | %s |\n", len(lat), eps, fmtMicros(perEvent), fmtBytes(rss))
		r.record(fleetResult{Title: title, Label: fmt.Sprintf("%d worker CPU per event", n), Value: perEvent, Unit: "µs"})
		r.record(fleetResult{Title: title, Label: fmt.Sprintf("%d events/s", n), Value: eps, Unit: "events/s"})
		r.record(fleetResult{Title: title, Label: fmt.Sprintf("%d worker peak RSS", n), Value: rss, Unit: "bytes"})
	}
	fmt.Println()
	return nil
}

// directLatency reads one task's events straight from the daemon's socket.
func directLatency(sock string) ([]float64, error) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	fmt.Fprintf(c, "lat\n")
	sc := bufio.NewScanner(c)
	sc.Buffer(nil, 1<<20)
	var lat []float64
	for sc.Scan() {
		now := time.Now()
		l := sc.Bytes()
		if bytes.Contains(l, []byte(`"type":"result"`)) {
			return lat, nil
		}
		if i := bytes.Index(l, []byte(`"ts":`)); i >= 0 {
			end := bytes.IndexByte(l[i:], '}')
			ts, _ := strconv.ParseInt(string(l[i+5:i+end]), 10, 64)
			lat = append(lat, float64(now.UnixNano()-ts)/1e3)
		}
	}
	return lat, sc.Err()
}

// peakRSS is a live process's peak resident set (VmHWM), in bytes.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	return 0
}

func stampOf(l []byte) (int64, bool) {
	i := bytes.Index(l, []byte(`"ts":`))
	if i < 0 {
		return 0, false
	}
	end := bytes.IndexByte(l[i:], '}')
	if end < 0 {
		return 0, false
	}
	ts, err := strconv.ParseInt(string(l[i+5:i+end]), 10, 64)
	return ts, err == nil
}

// observer is a client of the daemon's socket that only reads: the broadcast events of the
// worker's task, each with its receive time.
type observer struct {
	done chan map[int64]time.Time
}

func observe(sock string) (*observer, error) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return nil, err
	}
	o := &observer{done: make(chan map[int64]time.Time, 1)}
	sc := bufio.NewScanner(c)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() { // hello
		c.Close()
		return nil, fmt.Errorf("no hello from %s", sock)
	}
	go func() {
		defer c.Close()
		got := map[int64]time.Time{}
		last := time.Now()
		c.SetReadDeadline(time.Now().Add(5 * time.Minute))
		for sc.Scan() {
			now := time.Now()
			if ts, ok := stampOf(sc.Bytes()); ok {
				got[ts] = now
				last = now
				c.SetReadDeadline(now.Add(2 * time.Second))
			}
		}
		_ = last
		o.done <- got
	}()
	return o, nil
}

func (o *observer) wait() map[int64]time.Time { return <-o.done }

// cpuSeconds is a live process's user and system CPU time so far.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100 // clock ticks; 100 a second on Linux
}
