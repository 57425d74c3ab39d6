package wire

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Spec-shaped lines decode into their struct and encode back to the same JSON: nullable fields
// stay null, present values (false, 0, "", []) stay, optional fields absent stay absent.
func TestStructsRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		into any
		raw  string
	}{
		{"ready repl, title null", &Ready{}, `{"type":"ready","protocolVersion":1,"sessionId":"s","model":"m","title":null,"autoTitle":"Fix","midTurnCommands":["/stop"]}`},
		{"ready repl, all null", &Ready{}, `{"type":"ready","protocolVersion":1,"sessionId":"s","model":"","title":null,"autoTitle":null,"midTurnCommands":[]}`},
		{"ready repl, title set", &Ready{}, `{"type":"ready","protocolVersion":1,"sessionId":"s","model":"m","title":"Mine","autoTitle":null,"midTurnCommands":[]}`},
		{"ready run, not resumed", &Ready{}, `{"type":"ready","protocolVersion":1,"sessionId":"s","task":"t","config":"c.yaml","resumed":false,"agents":[]}`},
		{"ready run, config null", &Ready{}, `{"type":"ready","protocolVersion":1,"sessionId":"s","task":"","config":null,"resumed":false,"agents":["A"]}`},
		{"hello, position null", &Hello{}, `{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":{"sessionId":"s","task":"t","status":"running","position":null},"pendingResults":[]}`},
		{"hello, position 0", &Hello{}, `{"type":"hello","protocolVersion":1,"clientId":"c","readOnly":true,"inFlight":{"sessionId":"s","task":"t","status":"queued","position":0},"pendingResults":["p"]}`},
		{"hello, nothing in flight", &Hello{}, `{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}`},
		{"queued, position null", &Queued{}, `{"type":"queued","sessionId":"s","position":null}`},
		{"queued, position 0", &Queued{}, `{"type":"queued","sessionId":"s","position":0}`},
		{"queued, position 2", &Queued{}, `{"type":"queued","sessionId":"s","position":2}`},
		{"title", &Title{}, `{"type":"title","sessionId":"s","title":null,"autoTitle":null}`},
		{"tool_call, args null, agent set", &ToolCall{}, `{"type":"tool_call","id":"1","name":"shell","summary":"ls","args":null,"agent":"Sub"}`},
		{"tool_call, optionals absent", &ToolCall{}, `{"type":"tool_call","id":"1","name":"shell","summary":"ls"}`},
		{"message_end, no usage", &MessageEnd{}, `{"type":"message_end","turnIndex":0,"toolCalls":[]}`},
		{"shell_start, empty command", &Shell{}, `{"type":"shell_start","command":""}`},
		{"shell_output, empty text", &Shell{}, `{"type":"shell_output","text":""}`},
		{"shell_end", &Shell{}, `{"type":"shell_end"}`},
		{"run result, failed early", &RunResult{}, `{"type":"result","sessionId":null,"task":"t","config":null,"succeeded":false,"errorMessage":"no config","exitCode":1,"turns":0,"elapsedSeconds":0.1,"inputTokens":0,"outputTokens":0}`},
		{"task result", &TaskResult{}, `{"type":"result","sessionId":"s","task":"t","succeeded":true,"errorMessage":null,"lastAgent":null,"lastMessage":null}`},
		{"agent_message", &AgentMessageEvent{}, `{"type":"agent_message","message":{"agentName":"A","role":"assistant","content":"","turnIndex":0,"timestamp":"2026-11-30T10:00:00.1234567Z","inputTokens":null,"outputTokens":0,"isCompactionSummary":false,"toolCalls":[]},"elapsedMs":0}`},
		{"repl session", &ReplSession{}, `{"sessionId":"s","modelId":"m","cwd":"/w","title":null,"autoTitle":null,"startedAt":"2026-11-30T10:00:00Z","lastUpdatedAt":"2026-11-30T10:00:00Z","turnIndex":0,"firstUserMessage":""}`},
		{"scheduled job", &ScheduledJob{}, `{"name":"n","description":null,"cron":"0 * * * *","task":"t","config":null,"workDir":null,"enabled":false,"due":false,"createdAt":"2026-11-30T10:00:00Z","lastRun":null,"nextRun":null}`},
		{"validation, no config", &Validation{}, `{"path":"/c.yaml","valid":false,"issues":[],"config":null}`},
		{"config summary", &ConfigSummary{}, `{"path":"/c.yaml","name":null,"description":null,"agents":[],"selectionType":null,"error":"bad"}`},
		{"init result", &InitResult{}, `{"template":"t","model":"m","endpoint":null,"configPath":"/c","agentFiles":[]}`},
		{"session", &Session{}, `{"sessionId":"s","task":"t","workingDirectory":null,"configPath":null,"startedAt":"2026-11-30T10:00:00Z","lastUpdatedAt":"2026-11-30T10:00:00Z","isComplete":false,"turnCount":0}`},
		{"context item", &ContextItem{}, `{"name":"n","description":null,"sourcePath":"/s","importedAt":"2026-11-30T10:00:00Z","sizeBytes":0,"files":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := json.Unmarshal([]byte(tt.raw), tt.into); err != nil {
				t.Fatal(err)
			}
			// Encode both the pointer and the value: a value-receiver MarshalJSON serves both.
			for _, v := range []any{tt.into, reflect.ValueOf(tt.into).Elem().Interface()} {
				out, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				var want, got any
				if err := json.Unmarshal([]byte(tt.raw), &want); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(want, got) {
					t.Errorf("re-encoded %T differs\n got %s\nwant %s", v, out, tt.raw)
				}
			}
		})
	}
}

// A Ready built by hand encodes as the shape its fields say.
func TestReadyEncodesItsShape(t *testing.T) {
	title := "T"
	tests := []struct {
		name string
		r    Ready
		want string
	}{
		{"bare is a REPL ready", Ready{Type: TypeReady, ProtocolVersion: 1, SessionID: "s"},
			`{"type":"ready","protocolVersion":1,"sessionId":"s","model":"","title":null,"autoTitle":null,"midTurnCommands":null}`},
		{"REPL", Ready{Type: TypeReady, SessionID: "s", Model: "m", Title: &title, MidTurnCommands: []string{}},
			`{"type":"ready","protocolVersion":0,"sessionId":"s","model":"m","title":"T","autoTitle":null,"midTurnCommands":[]}`},
		{"run", Ready{Type: TypeReady, SessionID: "s", Task: "t", Agents: []string{"A"}},
			`{"type":"ready","protocolVersion":0,"sessionId":"s","task":"t","config":null,"resumed":false,"agents":["A"]}`},
		{"both", Ready{Type: TypeReady, SessionID: "s", Model: "m", Resumed: true},
			`{"type":"ready","protocolVersion":0,"sessionId":"s","model":"m","title":null,"autoTitle":null,"midTurnCommands":null,"task":"","config":null,"resumed":true,"agents":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.r)
			if err != nil || string(b) != tt.want {
				t.Errorf("got  %s %v\nwant %s", b, err, tt.want)
			}
		})
	}
}
