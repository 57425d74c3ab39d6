package prices

import (
	"math"
	"strings"
	"testing"
)

func TestParseAndCost(t *testing.T) {
	tab, err := Parse([]byte("version: 1\ndefault: {input: 3, output: 15, cached: 0.3}\nmodels:\n  small: {input: 1, output: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		model string
		u     Usage
		want  float64
	}{
		{"small", Usage{Input: 1_000_000, Output: 500_000}, 1 + 1},
		{"other", Usage{Input: 1_000_000, Output: 1_000_000, Cached: 500_000}, 1.5 + 0.15 + 15},
		{"", Usage{Input: 2_000_000}, 6},
		// more cached than input (a provider counting them apart) never goes negative
		{"other", Usage{Input: 100, Cached: 1000}, 100 * 0.3 / 1e6},
	}
	for _, tt := range tests {
		got, ok := tab.Cost(tt.model, tt.u)
		if !ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Cost(%q, %+v) = %v, %v; want %v", tt.model, tt.u, got, ok, tt.want)
		}
	}
	noDefault, err := Parse([]byte("models:\n  small: {input: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := noDefault.Cost("big", Usage{Input: 1}); ok {
		t.Error("a model without a price and no default was priced")
	}
	var nilTable *Table
	if _, ok := nilTable.Cost("x", Usage{}); ok {
		t.Error("no table priced a model")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "empty"},
		{"defualt: {input: 1}\n", "defualt"},
		{"models:\n  m: {input: -1}\n", "model m"},
		{"models:\n  m: {inptu: 1}\n", "inptu"},
		{"version: 2\n", "version 2"},
		{"default: {input: .nan}\n", "default"},
		{"default: [1]\n", "line 1"},
	} {
		_, err := Parse([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v; want an error with %q", tt.in, err, tt.want)
		}
	}
}
