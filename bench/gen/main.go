// Command gen writes deterministic, seeded corpora for the fr benchmarks: live event
// streams as fuseraft sends them, resource-query envelopes, recorded prompt streams and
// approval policies. The same flags and seed always give the same bytes.
//
//	go run ./bench/gen -seed 1 -size 200MB -o bench/corpus/stream.jsonl
//	go run ./bench/gen -seed 1 -size 200MB -dotnet -noise -o bench/corpus/stream-dotnet.jsonl
//	go run ./bench/gen -kind envelope -size 1GiB -o bench/corpus/sessions.json
//	go run ./bench/gen -kind prompts -n 100000 -o bench/corpus/prompts.jsonl
//	go run ./bench/gen -kind policy -rules 200 -o bench/corpus/policy.yaml
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/fuseraft/fr/internal/cmd/sim/scenario"
)

type config struct {
	kind      string
	seed      uint64
	size      int64
	n         int
	rules     int
	dotnet    bool
	noise     bool
	noiseRate float64
	out       string
}

func main() {
	var c config
	var size string
	flag.StringVar(&c.kind, "kind", "stream", "what to write: stream, envelope, prompts, policy or bigline (one -size tool_result line between two tokens)")
	flag.Uint64Var(&c.seed, "seed", 1, "random seed; the same seed gives the same bytes")
	flag.StringVar(&size, "size", "200MB", "approximate output size for stream and envelope (KB, MB, GB, KiB, MiB, GiB)")
	flag.IntVar(&c.n, "n", 100000, "number of approval prompts for -kind prompts")
	flag.IntVar(&c.rules, "rules", 200, "number of rules for -kind policy")
	flag.BoolVar(&c.dotnet, "dotnet", false, "write JSON as .NET's default encoder does (\\u0022, \\u002B, non-ASCII escaped)")
	flag.BoolVar(&c.noise, "noise", false, "mix non-JSON lines into streams")
	flag.Float64Var(&c.noiseRate, "noise-rate", 0.01, "share of noise lines with -noise")
	flag.StringVar(&c.out, "o", "-", "output file; - for stdout")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(fmt.Errorf("unexpected argument %q", flag.Arg(0)))
	}
	n, err := parseSize(size)
	if err != nil {
		fail(err)
	}
	c.size = n
	if err := run(c); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "gen: error: %v\n", err)
	os.Exit(2)
}

func run(c config) error {
	var w io.Writer = os.Stdout
	var f *os.File
	if c.out != "-" {
		var err error
		if f, err = os.Create(c.out + ".tmp"); err != nil {
			return err
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	r := rand.New(rand.NewPCG(c.seed, 0x6672))
	g := &gen{r: r, c: c, w: bw}
	var err error
	switch c.kind {
	case "stream":
		err = g.stream()
	case "envelope":
		err = g.envelope()
	case "prompts":
		err = g.prompts()
	case "policy":
		err = g.policy()
	case "bigline":
		err = g.bigline()
	default:
		err = fmt.Errorf("unknown -kind %q (stream, envelope, prompts, policy, bigline)", c.kind)
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(c.out+".tmp", c.out)
		} else {
			os.Remove(c.out + ".tmp")
		}
	}
	return err
}

func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || v*float64(mult) > 1<<50 || v*float64(mult) < 1 {
		return 0, errors.New("bad -size: want a number with an optional unit, e.g. 200MB or 1GiB, at most 1 PiB")
	}
	return int64(v * float64(mult)), nil
}

type gen struct {
	r       *rand.Rand
	c       config
	w       *bufio.Writer
	p       *pool
	written int64
	buf     []byte
	callID  int
	turn    int
}

// line writes one JSON line, rewritten as .NET would with -dotnet, and sometimes a noise
// line before it with -noise.
func (g *gen) line(b []byte) error {
	if g.c.noise && g.r.Float64() < g.c.noiseRate {
		n := noise[g.r.IntN(len(noise))]
		g.w.WriteString(n)
		g.w.WriteByte('\n')
		g.written += int64(len(n) + 1)
	}
	if g.c.dotnet {
		b = scenario.DotNetJSON(b)
	}
	g.written += int64(len(b) + 1)
	g.w.Write(b)
	return g.w.WriteByte('\n')
}

// noise is what leaks onto fuseraft's stdout besides JSON: slash-command output, progress
// text, markup, half lines.
var noise = []string{
	"Compacting conversation...",
	"[dim]Model: sim-small · context 41%[/]",
	"warning: plugin git took 2.1s to load",
	"Usage: /model <id>",
	"   ",
	"{not json at all",
	"> /status",
	"Saved session 9b1e7c44.",
	"\x1b[2K\x1b[1Gthinking…",
	"Press Ctrl+C again to exit",
}
