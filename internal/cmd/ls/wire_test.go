package ls

import (
	"reflect"
	"slices"
	"testing"
)

// Every resource's item is a pkg/wire struct, and every default column (and the field it falls
// back to) is one of its fields: a column fr-ls shows names a field fuseraft sends.
func TestColumnsAreWireFields(t *testing.T) {
	for _, r := range append(append([]*resource{}, resources...), initResult) {
		t.Run(r.name, func(t *testing.T) {
			if typ := reflect.TypeOf(r.of); typ.PkgPath() != "github.com/fuseraft/fr/pkg/wire" || typ.Kind() != reflect.Struct {
				t.Fatalf("item %v is not a pkg/wire struct", typ)
			}
			if len(r.columns) == 0 {
				t.Error("no default columns")
			}
			for _, c := range r.columns {
				if !slices.Contains(r.fields, c.field) {
					t.Errorf("column %s (%s) is not a field of wire.%s %q", c.field, c.label, r.item, r.fields)
				}
				if c.fallback != "" && !slices.Contains(r.fields, c.fallback) {
					t.Errorf("column %s falls back to %s, not a field of wire.%s", c.field, c.fallback, r.item)
				}
			}
		})
	}
}

// The fields are the protocol page's, in its order, an embedded struct's in its place.
func TestFieldsAreThePagesOrder(t *testing.T) {
	for name, want := range map[string][]string{
		"sessions":      {"sessionId", "task", "workingDirectory", "configPath", "startedAt", "lastUpdatedAt", "isComplete", "turnCount"},
		"session":       {"sessionId", "task", "workingDirectory", "configPath", "startedAt", "lastUpdatedAt", "isComplete", "messages"},
		"repl-sessions": {"sessionId", "modelId", "cwd", "title", "autoTitle", "startedAt", "lastUpdatedAt", "turnIndex", "firstUserMessage"},
		"memory":        {"guid", "name", "type", "description", "body"},
	} {
		r := lookup(name)
		if r == nil || !slices.Equal(r.fields, want) {
			t.Errorf("%s: fields %v, want %q", name, r, want)
		}
	}
	if initResult.item != "InitResult" || lookup("sessions").item != "Session" {
		t.Errorf("items %q, %q", initResult.item, lookup("sessions").item)
	}
}
