package render

import "testing"

// Types lists every type with a handler, sorted: what fr-filter --type completes.
func TestTypesListsTheHandlers(t *testing.T) {
	if got := Types(); len(got) != len(handlers) || got[0] > got[len(got)-1] {
		t.Errorf("Types() = %v", got)
	}
}
