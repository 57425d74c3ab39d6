package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/fuseraft/fr/internal/fleetapproval"
)

// approvalsResult is the throughput figure of `harness approvals`.
type approvalsResult struct {
	Kind      string  `json:"kind"` // "approvals"
	Time      string  `json:"time"`
	Title     string  `json:"title"`
	Label     string  `json:"label"`
	Approvers int     `json:"approvers"`
	Workers   int     `json:"workers"`
	InFlight  int     `json:"inflight"`
	Prompts   int     `json:"prompts"`
	Answered  int     `json:"answered"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
	P50       float64 `json:"p50us"`
	P99       float64 `json:"p99us"`
	Failed    string  `json:"failed,omitempty"`
}

// cmdApprovals measures decisions through NATS: an embedded JetStream server, -approvers copies
// of the approver command (given --nats URL --pool bench --approver-id ID), and -workers
// fleetapproval Clients in this process. First -n prompts with -inflight waiting at once
// (throughput), then -lat-n prompts at -rate a second (latency of each decision).
func cmdApprovals(args []string) error {
	fs := flag.NewFlagSet("approvals", flag.ExitOnError)
	approver := fs.String("approver", "", "the approver command (without --nats and --pool)")
	approvers := fs.Int("approvers", 2, "approver processes")
	workers := fs.Int("workers", 3, "worker clients (each its own connection)")
	n := fs.Int("n", 20000, "prompts for the throughput run")
	inflight := fs.Int("inflight", 64, "prompts waiting for an answer at once in the throughput run")
	latN := fs.Int("lat-n", 1000, "prompts for the latency run")
	rate := fs.Float64("rate", 1000, "prompts a second in the latency run")
	in := fs.String("in", "", "JSONL of prompts (approval_request lines are used, in turn)")
	title := fs.String("title", "", "table title")
	jsonOut := fs.String("json", "", "append the results as JSON lines to this file")
	fs.Parse(args)
	argv, err := splitCommand(*approver)
	if err != nil || len(argv) == 0 {
		return fmt.Errorf("-approver: want a command")
	}
	prompts, err := readPrompts(*in)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "fr-bench-nats")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		return err
	}
	srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(20 * time.Second) {
		return fmt.Errorf("nats server not ready")
	}
	url := srv.ClientURL()
	var procs []*exec.Cmd
	var errs []*bytes.Buffer
	defer func() {
		for _, p := range procs {
			p.Process.Signal(os.Interrupt)
			p.Wait()
		}
	}()
	for i := 0; i < *approvers; i++ {
		a := append(append([]string(nil), argv[1:]...), "--nats", url, "--pool", "bench", "--approver-id", "bench"+strconv.Itoa(i+1))
		cmd := exec.Command(argv[0], a...)
		var eb bytes.Buffer
		cmd.Stderr = &eb
		if err := cmd.Start(); err != nil {
			return err
		}
		procs, errs = append(procs, cmd), append(errs, &eb)
	}
	seen := map[string]bool{}
	var seenMu sync.Mutex
	var clients []*fleetapproval.Client
	for i := 0; i < *workers; i++ {
		nc, err := nats.Connect(url)
		if err != nil {
			return err
		}
		defer nc.Close()
		c, err := fleetapproval.NewClient(nc, "bench", fleetapproval.WithTimeout(10*time.Second), fleetapproval.WithDeadline(60*time.Second),
			fleetapproval.WithLog(func(ev fleetapproval.Event) {
				seenMu.Lock()
				seen[ev.Approver] = true
				seenMu.Unlock()
			}))
		if err != nil {
			return err
		}
		clients = append(clients, c)
	}
	// every approver answers before anything is measured
	deadline := time.Now().Add(60 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(context.Background(), time.Second)
		clients[0].Decide(pctx, "probe", "", "", prompts[0])
		cancel()
		seenMu.Lock()
		delete(seen, "") // a probe nobody answered
		n := len(seen)
		seenMu.Unlock()
		if n >= *approvers {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the approvers did not all answer within 60s: %s", errs[0].String())
		}
	}
	ctx := context.Background()
	host, _ := os.Hostname()

	// throughput
	res := approvalsResult{Kind: "approvals", Time: stamp(), Title: *title, Label: fmt.Sprintf("%d approvers, %d workers", *approvers, *workers),
		Approvers: *approvers, Workers: *workers, InFlight: *inflight, Prompts: *n}
	lat := make([]float64, *n)
	var next, timeouts atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < *inflight; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			c := clients[g%len(clients)]
			for {
				i := int(next.Add(1) - 1)
				if i >= *n {
					return
				}
				t0 := time.Now()
				_, by := c.Decide(ctx, "t"+strconv.Itoa(i), host, "", prompts[i%len(prompts)])
				lat[i] = float64(time.Since(t0).Microseconds())
				if by == fleetapproval.ByTimeout {
					timeouts.Add(1)
				}
			}
		}(g)
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.Answered = *n - int(timeouts.Load())
	res.PerSecond = float64(*n) / res.Seconds
	sortFloats(lat)
	res.P50, res.P99 = percentile(lat, 0.5), percentile(lat, 0.99)
	if timeouts.Load() > 0 {
		res.Failed = fmt.Sprintf("%d prompts denied at the deadline", timeouts.Load())
	}
	if err := appendJSON(*jsonOut, res); err != nil {
		return err
	}

	// latency at a steady rate
	lr := latResult{Kind: "lat", Time: stamp(), Title: *title + " (latency)", Label: "nats-" + strconv.Itoa(*approvers) + "-approvers",
		Command: *approver + " --nats URL --pool bench", Rate: *rate, Sent: *latN}
	samples := make([]float64, *latN)
	tick := time.NewTicker(time.Duration(float64(time.Second) / *rate))
	var lwg sync.WaitGroup
	for i := 0; i < *latN; i++ {
		<-tick.C
		lwg.Add(1)
		go func(i int) {
			defer lwg.Done()
			t0 := time.Now()
			_, by := clients[i%len(clients)].Decide(ctx, "l"+strconv.Itoa(i), host, "", prompts[i%len(prompts)])
			samples[i] = float64(time.Since(t0).Microseconds())
			if by == fleetapproval.ByTimeout {
				samples[i] = -1
			}
		}(i)
	}
	lwg.Wait()
	tick.Stop()
	for _, s := range samples {
		if s >= 0 {
			lr.Samples = append(lr.Samples, s)
		}
	}
	lr.finish()
	if err := appendJSON(*jsonOut, lr.jsonSafe()); err != nil {
		return err
	}

	if *title != "" {
		fmt.Printf("### %s\n\n", *title)
	}
	fmt.Printf("An embedded NATS server with JetStream, %d approver processes (`%s --nats URL --pool bench`, each writing every decision to the audit stream before it answers), %d worker clients in the harness (internal/fleetapproval), %d prompts with %d waiting at once; then %d prompts at %.0f/s for the latency of one decision (from the worker's request to its answer).\n\n",
		*approvers, *approver, *workers, *n, *inflight, *latN, *rate)
	fmt.Println("| run | prompts | answered | time | prompts/s | p50 | p99 |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	label := res.Label
	if res.Failed != "" {
		label += " (FAILED: " + res.Failed + ")"
	}
	fmt.Printf("| throughput, %s | %d | %d | %.2f s | %.0f | %s | %s |\n", label, res.Prompts, res.Answered, res.Seconds, res.PerSecond, fmtMicros(res.P50), fmtMicros(res.P99))
	fmt.Printf("| latency at %.0f/s | %d | %d | | | %s | %s |\n\n", *rate, lr.Sent, lr.Received, fmtMicros(lr.P50), fmtMicros(lr.P99))
	return nil
}

func sortFloats(s []float64) {
	r := latResult{Samples: s}
	r.finish()
}

// readPrompts reads the approval_request lines of a JSONL file, or makes shell prompts.
func readPrompts(name string) ([][]byte, error) {
	if name == "" {
		var ps [][]byte
		for i := 0; i < 1000; i++ {
			ps = append(ps, []byte(fmt.Sprintf(`{"type":"approval_request","kind":"shell_command","command":"go test ./pkg%d/..."}`, i)))
		}
		return ps, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ps [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), []byte(`"approval_request"`)) {
			ps = append(ps, append([]byte(nil), sc.Bytes()...))
		}
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s: no approval_request lines", name)
	}
	return ps, sc.Err()
}
