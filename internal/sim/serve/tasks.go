package serve

import (
	"strconv"
	"strings"
)

// A plan is what one task does: steps played in order, then a result.
type plan struct {
	steps []step
	agent string // lastAgent of the result
	fail  string // when set, the task ends with succeeded:false and this errorMessage
}

type stepKind int

const (
	stepEvent    stepKind = iota // a progress event, broadcast to every client
	stepApproval                 // an approval_request to the dispatching client; deny ends the task
	stepFlood                    // n progress events as fast as they can go
)

type step struct {
	kind  stepKind
	event []byte // stepEvent, stepApproval
	n     int    // stepFlood
}

// planFor returns the built-in plan for a task text. The first word picks it:
//
//	flood N   N tool_calling events, then a successful result (for throughput tests)
//	quick     progress events and a successful result, no approval
//	fail      progress events and a failed result
//	route     a route_approval between two agents; deny fails the task
//	unknown   an approval_request of a kind no client knows; deny fails the task
//	anything  progress events, a shell_command approval (echo TEXT); deny fails the task
func planFor(text string) plan {
	word, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
	word = strings.ToLower(word)
	starting := func(agent string) step {
		return step{kind: stepEvent, event: encodeEvent("agent_starting", field{"agent", agent})}
	}
	calling := func(agent, tool, args string) step {
		return step{kind: stepEvent, event: encodeEvent("tool_calling",
			field{"agent", agent}, field{"tool", tool}, field{"argsSummary", args})}
	}
	switch word {
	case "flood":
		n, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || n < 0 {
			n = 1000
		}
		return plan{agent: "Flooder", steps: []step{starting("Flooder"), {kind: stepFlood, n: n}}}
	case "quick":
		return plan{agent: "Worker", steps: []step{starting("Worker"), calling("Worker", "read_file", "README.md")}}
	case "fail":
		return plan{agent: "Worker", fail: "the task failed: " + text,
			steps: []step{starting("Worker"), calling("Worker", "run_tests", "go test ./...")}}
	case "route":
		return plan{agent: "Reviewer", steps: []step{
			starting("Planner"),
			{kind: stepApproval, event: encodeEvent("approval_request", field{"kind", "route_approval"},
				field{"keyword", "REVIEW"}, field{"sourceAgent", "Planner"}, field{"targetAgent", "Reviewer"})},
			starting("Reviewer"),
		}}
	case "unknown":
		return plan{agent: "Worker", steps: []step{
			starting("Worker"),
			{kind: stepApproval, event: encodeEvent("approval_request", field{"kind", "teleport"},
				field{"destination", "mars"})},
		}}
	}
	return plan{agent: "Developer", steps: []step{
		starting("Planner"),
		calling("Planner", "read_file", "README.md"),
		{kind: stepEvent, event: encodeEvent("token_budget_warning", field{"agent", "Planner"},
			field{"inputTokens", 90500}, field{"warnThreshold", 90000})},
		starting("Developer"),
		{kind: stepApproval, event: encodeEvent("approval_request", field{"kind", "shell_command"},
			field{"command", "echo " + shellQuote(text)})},
		calling("Developer", "shell", "echo "+shellQuote(text)),
	}}
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
