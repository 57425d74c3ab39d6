package report

import (
	"encoding/json"
	"strings"
	"testing"
)

// A stream of two chat turns (1,843 + 2,413 tokens) against the --max-* flags.
const limitsStream = `{"type":"ready","protocolVersion":1,"sessionId":"s1","model":"sim-small","title":null,"autoTitle":null,"midTurnCommands":[]}
{"type":"turn_start","text":""}
{"type":"message_end","turnIndex":0,"toolCalls":[],"inputTokens":1800,"outputTokens":43}
{"type":"turn_start","text":""}
{"type":"message_end","turnIndex":1,"toolCalls":[],"inputTokens":2400,"outputTokens":13}
{"type":"session_end"}
`

func TestLimits(t *testing.T) {
	out, stderr, code := report(t, []byte(limitsStream), nil, "--format", "json",
		"--max-turns", "5", "--max-tokens", "4000", "--max-cost", "1", "--prices", "testdata/prices.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct{ Limits []Limit }
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, l := range r.Limits {
		got = append(got, limitText(&l))
	}
	want := "turns 2 of --max-turns 5; tokens 4,256 of --max-tokens 4,000: past; cost $0.0022 of --max-cost $1.00"
	if strings.Join(got, "; ") != want {
		t.Errorf("limits:\n got %s\nwant %s", strings.Join(got, "; "), want)
	}

	md, _, _ := report(t, []byte(limitsStream), nil, "--max-tokens", "4000", "--max-cost", "1")
	if !strings.Contains(md, "**Limits:** tokens 4,256 of --max-tokens 4,000: past; cost unknown \\(no --prices\\) of --max-cost \\$1.00.") {
		t.Errorf("markdown:\n%s", md)
	}
	gh, _, _ := report(t, []byte(limitsStream), nil, "--format", "github", "--max-tokens", "4000")
	if !strings.Contains(gh, "::warning title=fr-report%3A limit passed::tokens 4,256 of --max-tokens 4,000: past\n") {
		t.Errorf("github:\n%s", gh)
	}
	if js, _, _ := report(t, []byte(limitsStream), nil, "--format", "json"); strings.Contains(js, `"limits"`) {
		t.Error("no --max-* flag: no limits in the model")
	}
}
