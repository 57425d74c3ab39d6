package stream

import (
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/sessioninput"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/pkg/wire"
)

// A prompt fuseraft asks as input ends is named once on stderr, with what it asks, however the
// two cross: the Gate learns of it under the lock the end of input takes, so the end sees it
// in the Gate and in what was asked together, or in neither.
func TestUnansweredOnceAsInputEnds(t *testing.T) {
	ev, _ := wire.ParseLine([]byte(`{"type":"approval_request","kind":"shell_command","command":"go test ./... \u0026\u0026 go vet ./..."}`)).Event()
	var errb testkit.SyncBuffer
	ss := &session{o: &options{}, errw: &lockedWriter{w: &errb},
		pump: &sessioninput.Pump{Gate: wire.NewGate(wire.Stdio)}}
	ss.pump.Gate.Observe(wire.Event{Type: wire.TypeReady, Raw: []byte(`{"type":"ready","protocolVersion":1,"sessionId":"s","model":"m","title":null,"autoTitle":null,"midTurnCommands":[]}`)})
	ended := make(chan struct{})
	ss.unanswered.observe(ss, ev, func() {
		ss.pump.Observe(ev)
		if ss.unanswered.mu.TryLock() {
			ss.unanswered.mu.Unlock()
			t.Error("the Gate observes the prompt outside the lock the end of input takes")
		}
		// Input ends now, while the prompt is being observed.
		go func() {
			ss.unanswered.end(ss)
			close(ended)
		}()
	})
	select {
	case <-ended:
	case <-testkit.After(testkit.Hang):
		t.Fatal("the end of input never came")
	}
	got := errb.String()
	if n := strings.Count(got, "nobody can answer"); n != 1 || !strings.Contains(got, "(shell: go test ./... && go vet ./...)") {
		t.Errorf("stderr says it %d times, want once with its command:\n%s", n, got)
	}
}
