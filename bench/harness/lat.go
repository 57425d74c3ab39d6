package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"sync/atomic"
	"time"
)

type latResult struct {
	Kind     string    `json:"kind"`
	Time     string    `json:"time"`
	Title    string    `json:"title"`
	Label    string    `json:"label"`
	Command  string    `json:"command"`
	Rate     float64   `json:"rate,omitempty"`
	Sent     int       `json:"sent"`
	Received int       `json:"received"`
	P50      float64   `json:"p50us"`
	P90      float64   `json:"p90us"`
	P99      float64   `json:"p99us"`
	Max      float64   `json:"maxus"`
	Mean     float64   `json:"meanus"`
	Failed   string    `json:"failed,omitempty"`
	Samples  []float64 `json:"samples,omitempty"`
}

// finish sorts the samples (µs) and fills the percentiles.
func (r *latResult) finish() {
	s := r.Samples
	sort.Float64s(s)
	r.Received = len(s)
	r.P50, r.P90, r.P99 = percentile(s, 0.5), percentile(s, 0.9), percentile(s, 0.99)
	r.Max, r.Mean = math.NaN(), math.NaN()
	if len(s) > 0 {
		r.Max = s[len(s)-1]
		var sum float64
		for _, v := range s {
			sum += v
		}
		r.Mean = sum / float64(len(s))
	}
}

func (r latResult) jsonSafe() latResult {
	r.Samples = nil
	for _, p := range []*float64{&r.P50, &r.P90, &r.P99, &r.Max, &r.Mean} {
		if math.IsNaN(*p) {
			*p = -1
		}
	}
	return r
}

// seqOf reads the "seq" number embedded in an event line, or -1.
func seqOf(line []byte) int { return int(numField(line, `"seq":`)) }

// numField returns the integer after key in line, or -1.
func numField(line []byte, key string) int64 {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return -1
	}
	j := i + len(key)
	for j < len(line) && line[j] == ' ' {
		j++
	}
	k := j
	for k < len(line) && line[k] >= '0' && line[k] <= '9' {
		k++
	}
	v, err := strconv.ParseInt(string(line[j:k]), 10, 64)
	if err != nil {
		return -1
	}
	return v
}

func eventLine(b []byte, kind string, seq int) []byte {
	ts := time.Now().UnixNano()
	switch kind {
	case "approval":
		return fmt.Appendf(b, `{"type":"approval_request","kind":"shell_command","command":"tool%03d sub%d --flag1 arg%d","seq":%d,"ts":%d}`+"\n",
			seq%260, seq%260%7, seq%100, seq, ts)
	default:
		return fmt.Appendf(b, `{"type":"token","text":"hello","seq":%d,"ts":%d}`+"\n", seq, ts)
	}
}

// latFeed writes n events at rate per second into the command (or, for "-", straight into a
// pipe the harness reads itself) and times each one from its write to the moment its line
// comes out at the other end. Output lines are matched to input events by their embedded
// "seq" or, when the command does not pass it on (fr-approve answers), by order.
func latFeed(r row, rate float64, n, warm int, kind string, env []string) latResult {
	res := latResult{Kind: "lat", Time: stamp(), Label: r.label, Command: r.cmd, Rate: rate, Sent: n}
	var w io.WriteCloser
	var rd io.Reader
	var cmd *exec.Cmd
	limit := time.Duration(float64(n)/rate*float64(time.Second)) + 60*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	errb := &limited{}
	if r.cmd == "-" {
		pr, pw, err := os.Pipe()
		if err != nil {
			res.Failed = err.Error()
			return res
		}
		defer pr.Close()
		w, rd = pw, pr
	} else {
		cmd = exec.CommandContext(ctx, r.argv[0], r.argv[1:]...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stderr = errb
		cmd.WaitDelay = 5 * time.Second
		var err error
		if w, err = cmd.StdinPipe(); err != nil {
			res.Failed = err.Error()
			return res
		}
		if rd, err = cmd.StdoutPipe(); err != nil {
			res.Failed = err.Error()
			return res
		}
		if err := cmd.Start(); err != nil {
			res.Failed = err.Error()
			return res
		}
	}
	sent := make([]atomic.Int64, n)
	base := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	go func() {
		defer w.Close()
		var buf []byte
		for i := 0; i < n; i++ {
			if d := time.Until(base.Add(time.Duration(i) * interval)); d > 0 {
				time.Sleep(d)
			}
			buf = eventLine(buf[:0], kind, i)
			sent[i].Store(int64(time.Since(base)))
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}()
	br := bufio.NewReaderSize(rd, 1<<16)
	k := 0
	// HARNESS_DUMP=FILE appends "label seq sent-µs latency-µs" for every event, to look
	// into a distribution.
	var dump *bufio.Writer
	if path := os.Getenv("HARNESS_DUMP"); path != "" {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			defer f.Close()
			dump = bufio.NewWriter(f)
			defer dump.Flush()
		}
	}
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 && !errors.Is(err, bufio.ErrBufferFull) {
			now := int64(time.Since(base))
			seq := seqOf(line)
			if seq < 0 {
				seq = k
			}
			if seq < n && seq >= warm {
				if s := sent[seq].Load(); s > 0 || seq == 0 {
					res.Samples = append(res.Samples, float64(now-s)/1e3)
					if dump != nil {
						fmt.Fprintf(dump, "%s %d %.0f %.0f\n", r.label, seq, float64(s)/1e3, float64(now-s)/1e3)
					}
				}
			}
			k++
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	if cmd != nil {
		if err := cmd.Wait(); err != nil && ctx.Err() != nil {
			res.Failed = "timed out"
		} else if err != nil {
			res.Failed = fmt.Sprintf("%v: %s", err, firstLine(string(errb.b)))
		}
	}
	res.Sent = n - warm
	res.finish()
	return res
}

// latChild runs a command that produces events with "ts" (Unix nanoseconds at the moment
// they were written, e.g. bench/fakeraft) and times each from that stamp to its arrival.
func latChild(r row, env []string, in string, limit time.Duration) latResult {
	res := latResult{Kind: "lat", Time: stamp(), Label: r.label, Command: r.cmd}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.argv[0], r.argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	errb := &limited{}
	cmd.Stderr = errb
	cmd.WaitDelay = 5 * time.Second
	if in == "" {
		in = os.DevNull
	}
	f, err := os.Open(in)
	if err != nil {
		res.Failed = err.Error()
		return res
	}
	defer f.Close()
	cmd.Stdin = f
	rd, err := cmd.StdoutPipe()
	if err != nil {
		res.Failed = err.Error()
		return res
	}
	if err := cmd.Start(); err != nil {
		res.Failed = err.Error()
		return res
	}
	br := bufio.NewReaderSize(rd, 1<<16)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 && !errors.Is(err, bufio.ErrBufferFull) {
			now := time.Now().UnixNano()
			if ts := numField(line, `"ts":`); ts > 0 {
				res.Samples = append(res.Samples, float64(now-ts)/1e3)
				res.Sent++
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		res.Failed = fmt.Sprintf("%v: %s", err, firstLine(string(errb.b)))
	}
	res.finish()
	return res
}

func cmdLat(args []string) error {
	fs := flag.NewFlagSet("lat", flag.ExitOnError)
	rate := fs.Float64("rate", 100, "events per second written into each command")
	n := fs.Int("n", 500, "events per run")
	warm := fs.Int("warmup", 10, "first events of each run not counted")
	runs := fs.Int("runs", 1, "interleaved runs of each command (samples are pooled)")
	kind := fs.String("event", "token", "event written: token or approval (shell_command approval_request)")
	child := fs.Bool("child", false, "the command makes its own events with \"ts\" stamps; nothing is fed to it")
	in := fs.String("in", "", "stdin of the command with -child")
	title := fs.String("title", "", "table title")
	jsonOut := fs.String("json", "", "append one JSON result per row to this file")
	timeout := fs.Duration("timeout", 5*time.Minute, "time limit of one -child run")
	env, rows, err := parseCommands(fs, args)
	if err != nil {
		return err
	}
	results := make([]latResult, len(rows))
	for round := 0; round < *runs; round++ {
		for i, r := range rows {
			var res latResult
			if *child {
				res = latChild(r, env, *in, *timeout)
			} else {
				res = latFeed(r, *rate, *n, *warm, *kind, env)
			}
			if res.Failed != "" {
				fmt.Fprintf(os.Stderr, "harness: %s: %s\n", r.label, res.Failed)
			}
			if round == 0 {
				results[i] = res
			} else {
				results[i].Samples = append(results[i].Samples, res.Samples...)
				results[i].Sent += res.Sent
				if results[i].Failed == "" {
					results[i].Failed = res.Failed
				}
			}
		}
	}
	for i := range results {
		results[i].Title = *title
		results[i].finish()
		if err := appendJSON(*jsonOut, results[i].jsonSafe()); err != nil {
			return err
		}
	}
	if *title != "" {
		fmt.Printf("### %s\n\n", *title)
	}
	if *child {
		fmt.Printf("Each event carries the Unix time it was written (\"ts\"); latency = arrival at the harness - ts. %d interleaved runs.\n\n", *runs)
	} else {
		fmt.Printf("%d events at %.0f/s per run (first %d not counted), %d interleaved runs; latency = time the line comes out of the command - time it was written into it.\n\n", *n, *rate, *warm, *runs)
	}
	printLatTable(results)
	fmt.Println("Commands:")
	fmt.Println()
	for _, r := range rows {
		c := r.cmd
		if c == "-" {
			c = "(none: the harness's own pipe, write to read)"
		}
		fmt.Printf("- `%s`: `%s`\n", r.label, c)
	}
	fmt.Println()
	return nil
}

func printLatTable(results []latResult) {
	fmt.Println("| path | events | p50 | p90 | p99 | max | mean |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		label := "`" + r.Label + "`"
		if r.Failed != "" {
			label += " (FAILED: " + r.Failed + ")"
		}
		fmt.Printf("| %s | %d/%d | %s | %s | %s | %s | %s |\n", label, r.Received, r.Sent,
			fmtMicros(r.P50), fmtMicros(r.P90), fmtMicros(r.P99), fmtMicros(r.Max), fmtMicros(r.Mean))
	}
	fmt.Println()
}

// cmdReport prints a latency table from JSON results (e.g. written by tap).
func cmdReport(args []string) error {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	title := fs.String("title", "", "table title")
	fs.Parse(args)
	var results []latResult
	for _, path := range fs.Args() {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var r latResult
			if err := json.Unmarshal(l, &r); err != nil {
				return fmt.Errorf("%s: %v", path, err)
			}
			for _, p := range []*float64{&r.P50, &r.P90, &r.P99, &r.Max, &r.Mean} {
				if *p < 0 {
					*p = math.NaN()
				}
			}
			merged := false
			for i := range results {
				if results[i].Label == r.Label && len(r.Samples) > 0 {
					results[i].Samples = append(results[i].Samples, r.Samples...)
					results[i].Sent += r.Sent
					results[i].finish()
					merged = true
				}
			}
			if !merged {
				if len(r.Samples) > 0 {
					r.finish()
				}
				results = append(results, r)
			}
		}
	}
	if *title != "" {
		fmt.Printf("### %s\n\n", *title)
	}
	printLatTable(results)
	return nil
}
