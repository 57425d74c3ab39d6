package ls

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fuseraft/fr/pkg/wire"
)

// jsonFields is the JSON names of struct v's fields, in order, those of an embedded struct
// in its place.
func jsonFields(v any) []string { return typeFields(reflect.TypeOf(v)) }

func typeFields(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			names = append(names, typeFields(f.Type)...)
		} else if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// Every resource's fields are its pkg/wire item's, in the same order, and every default column
// (and the field it falls back to) is one of them: a column fr-ls shows names a field fuseraft
// sends.
func TestColumnsAreWireFields(t *testing.T) {
	items := map[string]any{
		"Session": wire.Session{}, "SessionDetail": wire.SessionDetail{}, "ReplSession": wire.ReplSession{},
		"Memory": wire.Memory{}, "MemoryAgent": wire.MemoryAgent{}, "ContextItem": wire.ContextItem{},
		"ScheduledJob": wire.ScheduledJob{}, "Plugin": wire.Plugin{}, "Model": wire.Model{},
		"ConfigSummary": wire.ConfigSummary{}, "Validation": wire.Validation{}, "Template": wire.Template{},
		"InitResult": wire.InitResult{},
	}
	for _, r := range append(append([]*resource{}, resources...), initResult) {
		t.Run(r.name, func(t *testing.T) {
			item, ok := items[r.item]
			if !ok {
				t.Fatalf("item %s has no pkg/wire struct in this test", r.item)
			}
			tags := jsonFields(item)
			if !slices.Equal(r.fields, tags) {
				t.Errorf("fields %q, want wire.%s's %q", r.fields, r.item, tags)
			}
			if len(r.columns) == 0 {
				t.Error("no default columns")
			}
			for _, c := range r.columns {
				if !slices.Contains(tags, c.field) {
					t.Errorf("column %s (%s) is not a field of wire.%s %q", c.field, c.label, r.item, tags)
				}
				if c.fallback != "" && !slices.Contains(tags, c.fallback) {
					t.Errorf("column %s falls back to %s, not a field of wire.%s", c.field, c.fallback, r.item)
				}
			}
		})
	}
}
