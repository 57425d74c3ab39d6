package otel

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// TestAttrSet: the sets a sink keeps are told apart by every key, value and value type, and
// the same attributes give the same set.
func TestAttrSet(t *testing.T) {
	k := &sdkSink{sets: map[string]attribute.Set{}}
	lists := [][]attribute.KeyValue{
		{attribute.String("gen_ai.tool.name", "read"), attribute.String("fr.outcome", "ok")},
		{attribute.String("gen_ai.tool.name", "read"), attribute.String("fr.outcome", "error")},
		{attribute.String("gen_ai.tool.name", "read\x00fr.outcome"), attribute.String("x", "ok")},
		{attribute.String("fr.outcome", "ok"), attribute.String("gen_ai.tool.name", "read"), attribute.String("a", "")},
		{attribute.String("n", "1")},
		{attribute.Int("n", 1)},
		{attribute.StringSlice("n", []string{"1"})},
		{},
	}
	for i, a := range lists {
		want := attribute.NewSet(a...)
		for range 2 {
			if got := k.attrSet(a); !got.Equals(&want) {
				t.Errorf("list %d: set %v, want %v", i, got.Encoded(attribute.DefaultEncoder()), want.Encoded(attribute.DefaultEncoder()))
			}
		}
	}
	if len(k.sets) != len(lists) {
		t.Errorf("%d sets kept for %d lists", len(k.sets), len(lists))
	}
	for i := range maxSets + 10 {
		k.attrSet([]attribute.KeyValue{attribute.Int("i", i)})
	}
	if len(k.sets) > maxSets {
		t.Errorf("%d sets kept, more than %d", len(k.sets), maxSets)
	}
}
