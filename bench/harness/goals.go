package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

// cmdGoals checks the figures of one run (results.jsonl) against the goals the toolkit set
// itself, and prints them as a Markdown table: goal, measured, met or not.
func cmdGoals(args []string) error {
	fs := flag.NewFlagSet("goals", flag.ExitOnError)
	fs.Parse(args)
	if fs.NArg() != 1 {
		return fmt.Errorf("want one results.jsonl")
	}
	runs, lats, approvalRuns, err := readResults(fs.Arg(0))
	if err != nil {
		return err
	}
	run := func(title, label string) *runResult {
		for i := range runs {
			if strings.Contains(runs[i].Title, title) && runs[i].Label == label && runs[i].Failed == "" {
				return &runs[i]
			}
		}
		return nil
	}
	lat := func(title, label string) *latResult {
		for i := range lats {
			if strings.Contains(lats[i].Title, title) && lats[i].Label == label && lats[i].Failed == "" && lats[i].Received > 0 {
				return &lats[i]
			}
		}
		return nil
	}
	fmt.Println("### Goals")
	fmt.Println()
	fmt.Println("| goal | measured | met |")
	fmt.Println("|---|---:|:---:|")
	row := func(goal string, measured string, ok, known bool) {
		mark := "no"
		if ok {
			mark = "yes"
		}
		if !known {
			measured, mark = "not measured", "-"
		}
		fmt.Printf("| %s | %s | %s |\n", strings.ReplaceAll(goal, "|", "\\|"), measured, mark)
	}
	speed := func(goal, title, a, b string, want float64) {
		ra, rb := run(title, a), run(title, b)
		if ra == nil || rb == nil {
			row(goal, "", false, false)
			return
		}
		x := rb.Median / ra.Median
		row(goal, fmt.Sprintf("%.2f×", x), x >= want, true)
	}
	const typeT = "fr-filter --type approval_request"
	speed("`fr-filter --type approval_request` ≥ 5× the throughput of jq", typeT, "fr-filter", "jq", 5)
	speed("... ≥ 3× that of gojq", typeT, "fr-filter", "gojq", 3)
	speed("... within 2× of a plain Go line scan (≥ 0.5×)", typeT, "fr-filter", "go-scan", 0.5)
	speed("`fr-filter 'select(.type==\"tool_result\" and .ok==false) | {id,name}'` at least as fast as gojq", "tool_result", "fr-filter", "gojq", 1)
	speed("`fr-filter -r 'select(.type==\"token\") | .text'` at least as fast as gojq", "-r 'select", "fr-filter", "gojq", 1)
	if l := lat("pipe at 100 events/s", "fr-filter-type"); l != nil {
		row("fr-filter added latency at 100 events/s: p99 < 1 ms (`--type`)", fmtMicros(l.P99), l.P99 < 1000, true)
	} else {
		row("fr-filter added latency at 100 events/s: p99 < 1 ms", "", false, false)
	}
	if l := lat("pipe at 100 events/s", "fr-filter-jq"); l != nil {
		row("... with a jq filter (`-r .text`)", fmtMicros(l.P99), l.P99 < 1000, true)
	}
	if r := run("fr-filter --type approval_request", "fr-filter"); r != nil {
		row("fr-filter peak memory bounded by a constant plus the largest line, not by the input", fmtBytes(r.MaxRSS)+" on "+fmtBytes(float64(r.InBytes)), r.MaxRSS < 64<<20, true)
	}
	if r := run("fr-ls", "fr-ls"); r != nil {
		row("fr-ls peak memory under 64 MiB on a 1 GiB envelope", fmtBytes(r.MaxRSS)+" on "+fmtBytes(float64(r.InBytes)), r.MaxRSS < 64<<20 && r.InBytes >= 1<<30, true)
	} else {
		row("fr-ls peak memory under 64 MiB on a 1 GiB envelope", "", false, false)
	}
	speed("fr-ls at least as fast as `jq -c '.items[]'`", "fr-ls", "fr-ls", "jq", 1)
	if r := run("fr-approve:", "fr-approve"); r != nil && r.Items > 0 {
		v := r.Items / r.Median
		row("fr-approve over 100,000 decisions/s (200-rule policy)", human(v)+"/s", v > 100000, true)
	} else {
		row("fr-approve over 100,000 decisions/s (200-rule policy)", "", false, false)
	}
	speed("... within 1.5× of a Go read-and-decode floor (`harness answer -decode`, ≥ 0.67×)", "fr-approve:", "fr-approve", "answer-decode", 1/1.5)
	speed("... faster than jq answering yes to all", "fr-approve:", "fr-approve", "jq-answer-all", 1)
	if l := lat("decision latency", "fr-approve"); l != nil {
		row("fr-approve p99 decision latency under 1 ms", fmtMicros(l.P99), l.P99 < 1000, true)
	} else {
		row("fr-approve p99 decision latency under 1 ms", "", false, false)
	}
	approvalsGoals(row, lat, approvalRuns)
	otelGoals(row, run, lat)
	const streamT, attachT = "fr-stream: a child flooding", "fr-attach: a flood"
	speed("fr-stream on a flood (the 200 MB corpus) within 1.5× of reading the child directly (≥ 0.67×)", streamT, "fr-stream", "direct", 1/1.5)
	speed("... within 1.5× of a relay that only copies (`harness relay`, ≥ 0.67×)", streamT, "fr-stream", "relay-copy", 1/1.5)
	speed("... within 1.5× of a relay that looks at every line and moves it with splice (`harness relay -peek`, ≥ 0.67×)", streamT, "fr-stream", "relay-peek", 1/1.5)
	speed("fr-stream on fr-sim's flood of token events within 1.5× of direct (≥ 0.67×)", "fr-sim repl flooding", "fr-stream", "fr-sim-direct", 1/1.5)
	speed("fr-attach on a flood over the Unix socket within 1.5× of a raw socket client (≥ 0.67×)", attachT, "fr-attach-socket", "raw-socket", 1/1.5)
	speed("... over the WebSocket within 1.5× of a raw client of the same library (≥ 0.67×)", attachT, "fr-attach-websocket", "raw-websocket", 1/1.5)
	fmt.Println()
	fmt.Println("Ratios are median against median from the tables below (throughput of the first named command over the other's).")
	fmt.Println()
	return nil
}

// readResults reads the results of one run (results.jsonl), by kind.
func readResults(name string) (runs []runResult, lats []latResult, approvalRuns []approvalsResult, err error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var k struct{ Kind string }
		json.Unmarshal(sc.Bytes(), &k)
		if k.Kind == "approvals" {
			var r approvalsResult
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				approvalRuns = append(approvalRuns, r)
			}
		} else if k.Kind == "run" {
			var r runResult
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				runs = append(runs, r)
			}
		} else {
			var r latResult
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				lats = append(lats, r)
			}
		}
	}
	return runs, lats, approvalRuns, sc.Err()
}

// approvalsGoals adds the rows of the fleet's goals: decisions through NATS.
func approvalsGoals(row func(goal, measured string, ok, known bool), lat func(title, label string) *latResult, approvalRuns []approvalsResult) {
	if len(approvalRuns) > 0 && approvalRuns[0].Failed == "" {
		row("decisions through NATS: at least 20k prompts/s with two approvers", human(approvalRuns[0].PerSecond)+"/s", approvalRuns[0].PerSecond >= 20000, true)
	} else {
		row("decisions through NATS: at least 20k prompts/s with two approvers", "", false, false)
	}
	if pipe, nl := lat("fleet: fr-approve on a pipe", "fr-approve-pipe"), lat("fleet: decisions through NATS", "nats-2-approvers"); pipe != nil && nl != nil {
		added := nl.P99 - pipe.P99
		const goal = "... added latency p99 under 2 ms over fr-approve on a pipe"
		both := fmt.Sprintf("%s (p99 %s through NATS, %s on the pipe)", fmtMicros(added), fmtMicros(nl.P99), fmtMicros(pipe.P99))
		if added < 0 {
			// the pipe's run met a slower moment of the machine than the fleet's: not a figure
			row(goal, "not comparable: p99 "+fmtMicros(nl.P99)+" through NATS, "+fmtMicros(pipe.P99)+" on the pipe", false, true)
		} else {
			row(goal, both, added < 2000, true)
		}
	} else {
		row("... added latency p99 under 2 ms over fr-approve on a pipe", "", false, false)
	}
}

// otelGoals are fr-otel's: its CPU beside fr-filter --type's on the same session, its peak
// memory, and the latency it adds to a line.
func otelGoals(row func(goal, measured string, ok, known bool), run func(title, label string) *runResult, lat func(title, label string) *latResult) {
	const overT = "fr-otel over a"
	filter := run(overT, "fr-filter-type")
	for _, r := range []struct{ label, what string }{{"fr-otel-dead", "a dead collector"}, {"fr-otel-file", "`--otlp-file`"}} {
		goal := "fr-otel CPU at most 2× fr-filter `--type`'s on the same session (" + r.what + ")"
		o := run(overT, r.label)
		if o == nil || filter == nil || filter.CPU <= 0 {
			row(goal, "", false, false)
			continue
		}
		x := o.CPU / filter.CPU
		row(goal, fmt.Sprintf("%.1f× (%.2f s against %.2f s)", x, o.CPU, filter.CPU), x <= 2, true)
		row("... its peak memory under 100 MiB ("+r.what+")", fmtBytes(o.MaxRSS)+" on "+fmtBytes(float64(o.InBytes)), o.MaxRSS < 100<<20, true)
	}
	for _, l := range []struct{ title, what string }{{"fr-otel added latency per line: token", "token events"}, {"fr-otel added latency per line: approval", "approval requests"}} {
		goal := "fr-otel added latency per line p99 under 1 ms (" + l.what + " at 1,000/s, `--otlp-file`)"
		if r := lat(l.title, "fr-otel"); r != nil {
			measured := fmtMicros(r.P99)
			if c := lat(l.title, "cat"); c != nil {
				// the machine's share: what a pipe through cat took in the same run
				measured += " (cat: " + fmtMicros(c.P99) + ")"
			}
			row(goal, measured, r.P99 < 1000, true)
		} else {
			row(goal, "", false, false)
		}
	}
}
