package scenario

import (
	"strings"
	"testing"
)

func TestDefaultLoads(t *testing.T) {
	s := Default()
	if len(s.Repl.Turns) < 4 || len(s.Run.Steps) == 0 || len(s.Serve.Tasks) == 0 {
		t.Fatalf("default scenario is missing parts: %d turns, %d run steps, %d tasks", len(s.Repl.Turns), len(s.Run.Steps), len(s.Serve.Tasks))
	}
	got := string(s.Run.Steps[3].Emit.Bytes())
	if !strings.HasPrefix(got, `{"type":"agent_message","message":{"agentName":"planner","role":"assistant"`) {
		t.Errorf("field order not kept: %s", got)
	}
}
