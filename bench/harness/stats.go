package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"time"

	"mvdan.cc/sh/v3/shell"
)

// splitCommand splits a command line as a shell would (quotes, backslashes, $VAR), without
// running a shell, so the measured process is the command itself.
func splitCommand(s string) ([]string, error) {
	return shell.Fields(s, os.Getenv)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// percentile returns the nearest-rank q-quantile (0 < q <= 1) of sorted v.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	return sorted[i]
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return
}

// fmtDur prints seconds with a unit that keeps 3 significant digits.
func fmtDur(sec float64) string {
	switch {
	case math.IsNaN(sec):
		return "-"
	case sec >= 1:
		return fmt.Sprintf("%.2f s", sec)
	case sec >= 1e-3:
		return fmt.Sprintf("%.1f ms", sec*1e3)
	default:
		return fmt.Sprintf("%.0f µs", sec*1e6)
	}
}

func fmtMicros(us float64) string {
	if math.IsNaN(us) {
		return "-"
	}
	if us >= 1000 {
		return fmt.Sprintf("%.2f ms", us/1000)
	}
	return fmt.Sprintf("%.0f µs", us)
}

func fmtBytes(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	default:
		return fmt.Sprintf("%.0f KiB", b/(1<<10))
	}
}

// ratio describes a/b times as "N× faster" or "N× slower" than the base.
func ratio(row, base float64) string {
	if math.IsNaN(row) || math.IsNaN(base) || row <= 0 || base <= 0 {
		return "-"
	}
	if row == base {
		return "1.00 (base)"
	}
	if row < base {
		return fmt.Sprintf("%.2f× faster", base/row)
	}
	return fmt.Sprintf("%.2f× slower", row/base)
}

// appendJSON appends v as one JSON line to path (when path is not empty).
func appendJSON(path string, v any) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(v)
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func stamp() string { return time.Now().UTC().Format(time.RFC3339) }
