// Command harness runs the fr benchmarks: it runs commands interleaved (A B A B ...),
// measures wall time and peak memory (max RSS, from the child's rusage), measures latency
// through pipes with timestamps embedded in the events, and prints Markdown tables.
//
//	harness run  -runs 5 -in corpus.jsonl jq='jq -c .' fr-filter='fr-filter .'
//	harness lat  -rate 100 -n 500 direct=- cat=cat fr-filter='fr-filter --type token'
//	harness tap  -o rt.json          (in a pipeline: approval round trips)
//	harness sock -socket PATH -task 'flood 100000'
//	harness ws   -url ws://127.0.0.1:PORT/attach -task 'flood 100000'
//	harness answer                    (answers every approval_request with approved:true)
//	harness answer -decode            (the same, decoding each approval_request with encoding/json first)
//	harness report -title T rt1.json rt2.json
//	harness scan -type approval_request   (the floor: a bytes.Contains line scan)
//	harness relay [-valid] CMD ARGS   (the floor of a relay: the child's stdout copied, or its valid JSON lines)
//	harness goals results.jsonl       (the figures against the toolkit's goals)
//	harness approvals -approver CMD -approvers 2 -n 20000   (decisions through NATS: throughput and latency)
//	harness serve -socket PATH -rate 1000 -n 2000   (a daemon whose events carry their send time)
//	harness fleet -tasks 1000 -daemons 10   (the fleet on an embedded NATS JetStream: tasks and relayed events)
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmds := map[string]func([]string) error{
		"run": cmdRun, "lat": cmdLat, "tap": cmdTap, "sock": cmdSock, "ws": cmdWS,
		"answer": cmdAnswer, "report": cmdReport, "relay": cmdRelay, "scan": cmdScan, "serve": cmdServe, "goals": cmdGoals, "fleet": cmdFleet, "approvals": cmdApprovals,
	}
	f, ok := cmds[os.Args[1]]
	if !ok {
		usage()
	}
	if err := f(os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "harness %s: error: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: harness run|lat|tap|sock|ws|answer|report|scan|relay|serve|goals|fleet [flags] [LABEL=COMMAND...]")
	os.Exit(2)
}

// row is one LABEL=COMMAND argument.
type row struct {
	label string
	cmd   string
	argv  []string
}

func parseRows(args []string) ([]row, error) {
	var rows []row
	for _, a := range args {
		label, cmd, ok := strings.Cut(a, "=")
		if !ok || label == "" {
			return nil, fmt.Errorf("want LABEL=COMMAND, got %q", a)
		}
		r := row{label: label, cmd: cmd}
		if cmd != "-" {
			argv, err := splitCommand(cmd)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", label, err)
			}
			if len(argv) == 0 {
				return nil, fmt.Errorf("%s: empty command", label)
			}
			r.argv = argv
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no LABEL=COMMAND rows")
	}
	return rows, nil
}
