// Package prices reads a table of model prices, in US dollars per million tokens, and prices
// token counts with it.
//
// The table is YAML:
//
//	version: 1
//	default: {input: 3, output: 15, cached: 0.3}   # any model the table does not name
//	models:
//	  claude-sonnet-4: {input: 3, output: 15, cached: 0.3}
//	  gpt-4.1: {input: 2, output: 8, cached: 0.5}
//
// Cached input tokens are a part of the input tokens: they are charged at "cached" and the rest
// of the input at "input". A price left out is 0. The table is read strictly: an unknown key
// or a negative price is an error naming its line.
package prices

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"gopkg.in/yaml.v3"
)

// Price is what a model costs, in USD per million tokens.
type Price struct {
	Input  float64 `yaml:"input" json:"input"`
	Output float64 `yaml:"output" json:"output"`
	Cached float64 `yaml:"cached" json:"cached"`
}

// Table maps model ids to prices; Default, when set, prices every other model.
type Table struct {
	Version int              `yaml:"version"`
	Default *Price           `yaml:"default"`
	Models  map[string]Price `yaml:"models"`
}

// Usage is a count of tokens.
type Usage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	Cached int64 `json:"cached"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{Input: u.Input + v.Input, Output: u.Output + v.Output, Cached: u.Cached + v.Cached}
}

// Zero reports whether no token was counted.
func (u Usage) Zero() bool { return u == Usage{} }

// Load reads the table in file name.
func Load(name string) (*Table, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// Parse reads a table from its YAML text.
func Parse(b []byte) (*Table, error) {
	var t Table
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(&t); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the price table is empty")
		}
		return nil, err
	}
	if t.Version != 0 && t.Version != 1 {
		return nil, fmt.Errorf("version %d: this build reads version 1", t.Version)
	}
	check := func(what string, p Price) error {
		for _, v := range []float64{p.Input, p.Output, p.Cached} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: prices must be zero or more, finite", what)
			}
		}
		return nil
	}
	if t.Default != nil {
		if err := check("default", *t.Default); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(t.Models))
	for m := range t.Models {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		if err := check("model "+m, t.Models[m]); err != nil {
			return nil, err
		}
	}
	return &t, nil
}

// Lookup returns the price of model: its own entry, else the default.
func (t *Table) Lookup(model string) (Price, bool) {
	if t == nil {
		return Price{}, false
	}
	if p, ok := t.Models[model]; ok && model != "" {
		return p, true
	}
	if t.Default != nil {
		return *t.Default, true
	}
	return Price{}, false
}

// Cost prices u at p, in USD.
func (p Price) Cost(u Usage) float64 {
	cached := u.Cached
	if cached > u.Input {
		cached = u.Input
	}
	return (float64(u.Input-cached)*p.Input + float64(cached)*p.Cached + float64(u.Output)*p.Output) / 1e6
}

// Cost prices u for model; ok is false when the table has no price for it.
func (t *Table) Cost(model string, u Usage) (usd float64, ok bool) {
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	return p.Cost(u), true
}
