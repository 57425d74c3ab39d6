package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sample is one run of one command.
type sample struct {
	wall    float64 // seconds
	cpu     float64 // user+sys seconds
	maxRSS  float64 // bytes
	floored bool    // maxRSS is no more than the harness's own peak: see rssFloor
	outB    int64
	outL    int64
	code    int
	errText string
}

// counter is the consumer at the end of the pipe: it counts bytes and lines and drops them.
type counter struct{ bytes, lines int64 }

func (c *counter) Write(p []byte) (int, error) {
	c.bytes += int64(len(p))
	c.lines += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// limited keeps the first 2 KiB of stderr for the report.
type limited struct{ b []byte }

func (l *limited) Write(p []byte) (int, error) {
	if room := 2048 - len(l.b); room > 0 {
		if len(p) < room {
			room = len(p)
		}
		l.b = append(l.b, p[:room]...)
	}
	return len(p), nil
}

func runOnce(ctx context.Context, r row, in string, env []string, timeout time.Duration) sample {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.argv[0], r.argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var f *os.File
	var err error
	if in == "" {
		in = os.DevNull
	}
	if f, err = os.Open(in); err != nil {
		return sample{code: -1, errText: err.Error()}
	}
	defer f.Close()
	cmd.Stdin = f
	out := &counter{}
	errb := &limited{}
	cmd.Stdout, cmd.Stderr = out, errb
	cmd.WaitDelay = 5 * time.Second
	floor := selfHWM()
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start).Seconds()
	s := sample{wall: wall, outB: out.bytes, outL: out.lines, errText: strings.TrimSpace(string(errb.b))}
	if cmd.ProcessState != nil {
		s.code = cmd.ProcessState.ExitCode()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			s.maxRSS = float64(ru.Maxrss) * 1024 // Linux reports KiB
			s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
			s.floored = s.maxRSS <= floor*1.02
		}
	}
	if err != nil {
		var ee *exec.ExitError
		if ctx.Err() != nil {
			s.code, s.errText = -1, "timed out after "+timeout.String()
		} else if !errors.As(err, &ee) {
			s.code, s.errText = -1, err.Error()
		}
	}
	return s
}

type runResult struct {
	Kind      string    `json:"kind"`
	Time      string    `json:"time"`
	Title     string    `json:"title"`
	Label     string    `json:"label"`
	Command   string    `json:"command"`
	Input     string    `json:"input,omitempty"`
	InBytes   int64     `json:"inputBytes,omitempty"`
	Runs      int       `json:"runs"`
	Walls     []float64 `json:"walls"`
	Median    float64   `json:"medianSeconds"`
	CPU       float64   `json:"medianCPUSeconds"`
	MaxRSS    float64   `json:"maxRSSBytes"`
	OutBytes  int64     `json:"outputBytes"`
	OutLines  int64     `json:"outputLines"`
	Base      string    `json:"base"`
	VsBase    float64   `json:"baseOverThis"`
	Failed    string    `json:"failed,omitempty"`
	Items     float64   `json:"items,omitempty"`
	ItemsName string    `json:"itemsName,omitempty"`
}

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	runs := fs.Int("runs", 5, "measured runs of each command")
	warm := fs.Int("warmup", 1, "unmeasured runs of each command first")
	in := fs.String("in", "", "stdin of every command (a file; default /dev/null)")
	title := fs.String("title", "", "table title")
	base := fs.String("base", "", "label of the row ratios are computed against (default: the first)")
	jsonOut := fs.String("json", "", "append one JSON result per row to this file")
	timeout := fs.Duration("timeout", 10*time.Minute, "time limit of one run")
	items := fs.Float64("items", 0, "work items per run (events, decisions), for a rate column")
	itemsName := fs.String("items-name", "events", "what -items counts")
	env, rows, err := parseCommands(fs, args)
	if err != nil {
		return err
	}
	var inBytes int64
	if *in != "" {
		st, err := os.Stat(*in)
		if err != nil {
			return err
		}
		if st.Mode().IsRegular() {
			inBytes = st.Size()
		}
	}
	samples := collect(context.Background(), rows, *in, env, *warm, *runs, *timeout)
	baseIdx := 0
	for i, r := range rows {
		if r.label == *base {
			baseIdx = i
		}
	}
	med := func(i int, f func(sample) float64) float64 {
		v := make([]float64, 0, len(samples[i]))
		for _, s := range samples[i] {
			v = append(v, f(s))
		}
		return median(v)
	}
	baseMed := med(baseIdx, func(s sample) float64 { return s.wall })
	rateHdr := printHeader(*title, *in, inBytes, *runs, *warm, *items, *itemsName, rows[baseIdx].label)
	fmt.Printf("|---|---:|---:|%s---:|---:|---:|---:|\n", strings.Repeat("---:|", strings.Count(rateHdr, "|")))
	for i, r := range rows {
		walls := make([]float64, 0, len(samples[i]))
		failed := ""
		var rss float64
		for _, s := range samples[i] {
			walls = append(walls, s.wall)
			rss = math.Max(rss, s.maxRSS)
			if s.code != 0 && failed == "" && !expectedNonZero(r) {
				failed = fmt.Sprintf("exit %d: %s", s.code, firstLine(s.errText))
			}
		}
		m := median(walls)
		lo, hi := minMax(walls)
		rssText := fmtBytes(rss)
		if anyFloored(samples[i]) {
			if v, ok := gnuTimeRSS(r, *in, env, *timeout); ok {
				rss = v
				rssText = fmtBytes(rss) + "†"
			} else {
				rssText = "≤ " + rssText
			}
		}
		last := samples[i][len(samples[i])-1]
		rate := ""
		if inBytes >= 1<<20 {
			rate += fmt.Sprintf(" %.0f |", float64(inBytes)/m/1e6)
		}
		if *items > 0 {
			rate += fmt.Sprintf(" %s |", human(*items/m))
		}
		label := "`" + r.label + "`"
		if failed != "" {
			label += " (FAILED: " + failed + ")"
		}
		fmt.Printf("| %s | %s | %s - %s |%s %s | %s | %s | %s, %d lines |\n", label, fmtDur(m), fmtDur(lo), fmtDur(hi),
			rate, ratio(m, baseMed), rssText, fmtDur(med(i, func(s sample) float64 { return s.cpu })),
			fmtBytes(float64(last.outB)), last.outL)
		res := runResult{Kind: "run", Time: stamp(), Title: *title, Label: r.label, Command: r.cmd, Input: *in, InBytes: inBytes,
			Runs: *runs, Walls: walls, Median: m, CPU: med(i, func(s sample) float64 { return s.cpu }), MaxRSS: rss,
			OutBytes: last.outB, OutLines: last.outL, Base: rows[baseIdx].label, VsBase: baseMed / m, Failed: failed,
			Items: *items, ItemsName: *itemsName}
		if err := appendJSON(*jsonOut, res); err != nil {
			return err
		}
	}
	if note := rssNote(rows, samples); note != "" {
		fmt.Printf("\n%s\n", note)
	}
	fmt.Println()
	fmt.Println("Commands:")
	fmt.Println()
	for _, r := range rows {
		fmt.Printf("- `%s`: `%s`\n", r.label, r.cmd)
	}
	fmt.Println()
	return nil
}

// collect runs every command warm+runs times, interleaved: every round runs each command
// once, A B C A B C ..., so a slow moment of the machine hits all of them alike. It returns
// the samples of the measured runs, by row.
func collect(ctx context.Context, rows []row, in string, env []string, warm, runs int, timeout time.Duration) [][]sample {
	samples := make([][]sample, len(rows))
	for round := 0; round < warm+runs; round++ {
		for i, r := range rows {
			s := runOnce(ctx, r, in, env, timeout)
			if round >= warm {
				samples[i] = append(samples[i], s)
			}
			if s.code != 0 && !expectedNonZero(r) {
				fmt.Fprintf(os.Stderr, "harness: %s: exit %d: %s\n", r.label, s.code, firstLine(s.errText))
			}
		}
	}
	return samples
}

// printHeader prints the table's title, what was run, and its header line; it returns the
// header of the rate columns.
func printHeader(title, in string, inBytes int64, runs, warm int, items float64, itemsName, base string) string {
	if title != "" {
		fmt.Printf("### %s\n\n", title)
	}
	desc := fmt.Sprintf("%d interleaved runs after %d warm-up", runs, warm)
	if in != "" && inBytes >= 1<<20 {
		desc += fmt.Sprintf("; input %s (%s)", filepath.Base(in), fmtBytes(float64(inBytes)))
	} else if in != "" {
		desc += fmt.Sprintf("; stdin %s", filepath.Base(in))
	}
	fmt.Printf("%s.\n\n", desc)
	rateHdr := ""
	if inBytes >= 1<<20 {
		rateHdr = " MB/s |"
	}
	if items > 0 {
		rateHdr += " " + itemsName + "/s |"
	}
	fmt.Printf("| command | median | min - max |%s vs %s | max RSS | CPU (median) | output |\n", rateHdr, base)
	return rateHdr
}

// expectedNonZero: wc, grep and friends are not expected to fail, but `false` is.
func expectedNonZero(r row) bool { return len(r.argv) > 0 && r.argv[0] == "false" }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f k", v/1e3)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// parseCommands adds -env to fs, parses args and returns -env and the LABEL=COMMAND rows.
func parseCommands(fs *flag.FlagSet, args []string) (multi, []row, error) {
	var env multi
	fs.Var(&env, "env", "K=V added to every command's environment (repeatable)")
	fs.Parse(args)
	rows, err := parseRows(fs.Args())
	return env, rows, err
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// selfHWM is the harness's own peak RSS (VmHWM) in bytes. A child started with vfork
// (as Go does) begins its life in the parent's address space, and Linux carries that
// space's peak into the child's ru_maxrss at exec: a child's rusage can never report less
// than this floor. Children at or under it are measured again under GNU time, which forks
// from a process of 2 MiB.
func selfHWM() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				v, _ := strconv.ParseFloat(f[1], 64)
				return v * 1024
			}
		}
	}
	return 0
}

func anyFloored(ss []sample) bool {
	for _, s := range ss {
		if s.floored {
			return true
		}
	}
	return false
}

func rssNote(rows []row, samples [][]sample) string {
	for i := range rows {
		if anyFloored(samples[i]) {
			if _, err := exec.LookPath(gnuTime); err == nil {
				return "\u2020 max RSS from one more run under GNU time (`" + gnuTime + " -f %M`): the harness's own rusage cannot see peaks below its own size."
			}
			return "\u2264: the command's peak is at or below the harness's own size, which rusage cannot see under (install GNU time: `apt-get install time`)."
		}
	}
	return ""
}

const gnuTime = "/usr/bin/time"

// gnuTimeRSS runs the command once under GNU time and returns its max RSS.
func gnuTimeRSS(r row, in string, env []string, timeout time.Duration) (float64, bool) {
	if _, err := exec.LookPath(gnuTime); err != nil {
		return 0, false
	}
	tmp, err := os.CreateTemp("", "harness-rss-")
	if err != nil {
		return 0, false
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	wrapped := r
	wrapped.argv = append([]string{gnuTime, "-f", "%M", "-o", tmp.Name()}, r.argv...)
	runOnce(context.Background(), wrapped, in, env, timeout)
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[len(f)-1], 64)
	if err != nil {
		return 0, false
	}
	return v * 1024, true
}
