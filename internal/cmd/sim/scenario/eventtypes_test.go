package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fuseraft/fr/pkg/wire"
)

// A scenario can make fr-sim send every event type of the protocol: for each type of
// wire.EventTypes, an emit step plays one event of it, which comes out as one line of that type
// and decodes, strictly (no field the struct does not know), into pkg/wire's struct for it.
func TestEveryEventTypeCanBeEmitted(t *testing.T) {
	// The fields of each example are the protocol page's; into is nil for a type with no fields.
	examples := map[string]struct {
		emit string
		into any
	}{
		wire.TypeReady:        {`{type: ready, protocolVersion: 1, sessionId: s, model: m, title: null, autoTitle: null, midTurnCommands: []}`, &wire.Ready{}},
		wire.TypeHello:        {`{type: hello, protocolVersion: 1, clientId: null, readOnly: false, inFlight: null, pendingResults: []}`, &wire.Hello{}},
		wire.TypeTurnStart:    {`{type: turn_start, text: hi}`, &wire.TurnStart{}},
		wire.TypeToken:        {`{type: token, text: hi}`, &wire.Token{}},
		wire.TypeThinking:     {`{type: thinking, text: hmm}`, &wire.Token{}},
		wire.TypeToolCall:     {`{type: tool_call, id: "1", name: shell, summary: ls, args: {command: ls}}`, &wire.ToolCall{}},
		wire.TypeToolResult:   {`{type: tool_result, id: "1", name: shell, ok: true, output: x}`, &wire.ToolResult{}},
		wire.TypeFileChanged:  {`{type: file_changed, path: a.go, sigil: M, added: 1, removed: 2}`, &wire.FileChanged{}},
		wire.TypeFileChanges:  {`{type: file_changes, changes: [{sigil: A, path: b.go}]}`, &wire.FileChanges{}},
		wire.TypeMessageEnd:   {`{type: message_end, turnIndex: 0, toolCalls: [], inputTokens: 3, outputTokens: 4}`, &wire.MessageEnd{}},
		wire.TypeCancelled:    {`{type: cancelled}`, nil},
		wire.TypeRetrying:     {`{type: retrying, attempt: 1, max: 3}`, &wire.Retrying{}},
		wire.TypeInterjection: {`{type: interjection, status: joined, count: 1}`, &wire.Interjection{}},
		wire.TypeStatus:       {`{type: status, model: m, turn: 1, context: 0.5, level: ok, modes: [], input: 1, output: 2, cached: 0}`, &wire.Status{}},
		wire.TypeCompacted:    {`{type: compacted}`, nil},
		wire.TypePlan:         {`{type: plan, steps: [a, b]}`, &wire.Plan{}},
		wire.TypeStepStatus:   {`{type: step_status, step: 1, total: 2, status: done, stepsLeft: 1}`, &wire.StepStatus{}},
		wire.TypeShellStart:   {`{type: shell_start, command: ls}`, &wire.Shell{}},
		wire.TypeShellOutput:  {`{type: shell_output, text: x}`, &wire.Shell{}},
		wire.TypeShellEnd:     {`{type: shell_end}`, &wire.Shell{}},
		wire.TypeReplay:       {`{type: replay, total: 1, compacted: false, turns: [{user: u, assistant: a, toolCalls: []}]}`, &wire.Replay{}},
		wire.TypeTitle:        {`{type: title, sessionId: s, title: T, autoTitle: null}`, &wire.Title{}},
		wire.TypeApplied:      {`{type: applied, command: /model, message: ok}`, &wire.Applied{}},
		wire.TypeCopy:         {`{type: copy, text: x}`, &wire.Copy{}},
		wire.TypeText:         {`{type: text, text: x}`, &wire.Message{}},
		wire.TypeInfo:         {`{type: info, text: x}`, &wire.Message{}},
		wire.TypeWarning:      {`{type: warning, text: x}`, &wire.Message{}},
		wire.TypeError:        {`{type: error, text: x}`, &wire.Message{}},
		wire.TypeSessEnd:      {`{type: session_end}`, nil},

		wire.TypeAgentStarting:      {`{type: agent_starting, agent: A}`, &wire.AgentStarting{}},
		wire.TypeToolCalling:        {`{type: tool_calling, agent: A, tool: shell, argsSummary: ls}`, &wire.ToolCalling{}},
		wire.TypeTokenBudgetWarning: {`{type: token_budget_warning, agent: A, inputTokens: 9, warnThreshold: 8}`, &wire.TokenBudgetWarning{}},
		wire.TypeAgentMessage:       {`{type: agent_message, message: {agentName: A, role: assistant, content: x, turnIndex: 0, timestamp: "2026-11-30T10:00:00Z", inputTokens: null, outputTokens: 0, isCompactionSummary: false, toolCalls: []}, elapsedMs: 5}`, &wire.AgentMessageEvent{}},
		wire.TypeResult:             {`{type: result, sessionId: s, task: t, succeeded: true, errorMessage: null, lastAgent: null, lastMessage: null}`, &wire.TaskResult{}},

		wire.TypeApproval: {`{type: approval_request, kind: shell_command, command: ls}`, nil},
		wire.TypeQuestion: {`{type: question, question: "Which?", options: [a, b], allowOther: false}`, &wire.Question{}},

		wire.TypeQueued:         {`{type: queued, sessionId: s, position: 1}`, &wire.Queued{}},
		wire.TypeAutoDispatched: {`{type: auto_dispatched, sessionId: s, objectiveId: o, task: t}`, &wire.AutoDispatched{}},
		wire.TypeA2ACall:        {`{type: a2a_call, agent: A, sessionId: s}`, &wire.A2ACall{}},
		wire.TypeTaskResumed:    {`{type: task_resumed, sessionId: s, task: t}`, &wire.TaskResumed{}},
	}
	types := wire.EventTypes()
	if len(examples) != len(types) {
		t.Errorf("%d examples for %d event types", len(examples), len(types))
	}
	for _, typ := range types {
		t.Run(typ, func(t *testing.T) {
			ex, ok := examples[typ]
			if !ok {
				t.Fatalf("no example emits %s: add one", typ)
			}
			src := "version: 1\nrun:\n  steps:\n    - emit: " + ex.emit + "\n"
			s, err := Parse("every.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			p := &fakePeer{}
			out, err := Play(context.Background(), s.Run.Steps, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.lines) != 1 || out.Emitted[typ] != 1 {
				t.Fatalf("emitted %q (by type %v), want one %s line", p.lines, out.Emitted, typ)
			}
			ev, ok := wire.ParseLine([]byte(p.lines[0])).Event()
			if !ok || ev.Type != typ {
				t.Fatalf("line %s is not a %s event", p.lines[0], typ)
			}
			if typ == wire.TypeApproval {
				req, err := wire.DecodeApprovalRequest(ev.Raw)
				if err != nil || req.Kind != wire.KindShellCommand || req.Command != "ls" {
					t.Fatalf("approval_request decodes to %+v, %v", req, err)
				}
				return
			}
			if ex.into == nil {
				if strings.Count(p.lines[0], ":") != 1 {
					t.Errorf("%s has fields: %s", typ, p.lines[0])
				}
				return
			}
			dec := json.NewDecoder(bytes.NewReader(ev.Raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(ex.into); err != nil {
				t.Fatalf("%s into %T: %v", p.lines[0], ex.into, err)
			}
			re, err := json.Marshal(ex.into)
			if err != nil {
				t.Fatal(err)
			}
			var want, got any
			if json.Unmarshal(ev.Raw, &want) != nil || json.Unmarshal(re, &got) != nil || !jsonEqual(want, got) {
				t.Errorf("%T re-encodes %s as %s", ex.into, ev.Raw, re)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
