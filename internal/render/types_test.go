package render

import (
	"testing"

	"github.com/fuseraft/fr/pkg/wire"
)

// Every event type pkg/wire names has a handler, so no event of the protocol is shown as an
// unknown one.
func TestEveryWireTypeHasAHandler(t *testing.T) {
	for _, typ := range []string{wire.TypeReady, wire.TypeHello, wire.TypeError, wire.TypeWarning, wire.TypeInfo,
		wire.TypeText, wire.TypeApproval, wire.TypeQuestion, wire.TypeResult, wire.TypeQueued, wire.TypeSessEnd,
		wire.TypeUserInput, wire.TypeApprovalResponse, wire.TypeQuestionResponse, wire.TypeInterrupt} {
		if _, ok := handlers[typ]; !ok {
			t.Errorf("no render handler for %q", typ)
		}
	}
	if got := Types(); len(got) != len(handlers) || got[0] > got[len(got)-1] {
		t.Errorf("Types() = %v", got)
	}
}
