package main

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestNumField(t *testing.T) {
	for _, c := range []struct {
		line string
		want int64
	}{
		{`{"type":"token","seq":12,"ts":1700000000000000001}`, 12},
		{`{"seq": 7}`, 7},
		{`{"type":"approval_response","approved":true}`, -1},
		{`{"seq":"x"}`, -1},
	} {
		if got := numField([]byte(c.line), `"seq":`); got != c.want {
			t.Errorf("numField(%s) = %d, want %d", c.line, got, c.want)
		}
	}
	if got := numField([]byte(`{"ts":1700000000000000001}`), `"ts":`); got != 1700000000000000001 {
		t.Errorf("ts = %d", got)
	}
}

func TestStats(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median = %v", m)
	}
	v := make([]float64, 100)
	for i := range v {
		v[i] = float64(i + 1)
	}
	if p := percentile(v, 0.99); p != 99 {
		t.Errorf("p99 = %v", p)
	}
	if p := percentile(v, 0.5); p != 50 {
		t.Errorf("p50 = %v", p)
	}
	if !math.IsNaN(percentile(nil, 0.5)) {
		t.Error("percentile of nothing is not NaN")
	}
	if r := ratio(1, 4); r != "4.00× faster" {
		t.Errorf("ratio = %q", r)
	}
	if r := ratio(3, 1.5); r != "2.00× slower" {
		t.Errorf("ratio = %q", r)
	}
}

func TestParseRows(t *testing.T) {
	rows, err := parseRows([]string{`jq=jq -c 'select(.type=="x")'`, "direct=-"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows[0].argv) != 3 || rows[0].argv[2] != `select(.type=="x")` || rows[1].argv != nil {
		t.Fatalf("rows = %#v", rows)
	}
	if _, err := parseRows([]string{"no-label"}); err == nil {
		t.Error("a row without = was accepted")
	}
}

// FuzzNumField: any line a command prints is read without a panic, and a number found is
// really there after the key.
func FuzzNumField(f *testing.F) {
	for _, s := range []string{`{"seq":12}`, `{"seq": 7,"ts":1}`, `{"seq":`, `"seq":99999999999999999999999`, `{"seq":-1}`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		v := numField([]byte(line), `"seq":`)
		if v >= 0 && !strings.Contains(line, strconv.FormatInt(v, 10)) {
			t.Fatalf("numField(%q) = %d, not in the line", line, v)
		}
	})
}
