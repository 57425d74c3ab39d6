package wire

import (
	"encoding/json"
	"fmt"
)

// Event is one event of a live stream, kept as its original bytes. Passing Raw on writes the
// event exactly as fuseraft sent it: field order, escapes and unknown fields intact.
type Event struct {
	Type string
	Raw  []byte
}

// Decode unmarshals the event into v, one of the event structs of this package (or any type).
func (e Event) Decode(v any) error {
	if err := json.Unmarshal(e.Raw, v); err != nil {
		return fmt.Errorf("decoding %s event: %w", e.Type, err)
	}
	return nil
}

// Event types of the protocol page, section "Live sessions", and the input lines. New types
// may arrive in any release; clients pass on or ignore types they do not know.
const (
	// Handshake events.
	TypeReady = "ready" // repl --vscode and run --bridge
	TypeHello = "hello" // the serve socket and WebSocket

	// Turn events (stdio).
	TypeTurnStart    = "turn_start"
	TypeToken        = "token"
	TypeThinking     = "thinking"
	TypeToolCall     = "tool_call"
	TypeToolResult   = "tool_result"
	TypeFileChanged  = "file_changed"
	TypeFileChanges  = "file_changes"
	TypeMessageEnd   = "message_end"
	TypeCancelled    = "cancelled"
	TypeRetrying     = "retrying"
	TypeInterjection = "interjection"
	TypeStatus       = "status"
	TypeCompacted    = "compacted"
	TypePlan         = "plan"
	TypeStepStatus   = "step_status"
	TypeShellStart   = "shell_start"
	TypeShellOutput  = "shell_output"
	TypeShellEnd     = "shell_end"
	TypeReplay       = "replay"
	TypeTitle        = "title"
	TypeApplied      = "applied"
	TypeCopy         = "copy"
	TypeText         = "text"
	TypeInfo         = "info"
	TypeWarning      = "warning"
	TypeError        = "error"
	TypeSessEnd      = "session_end"

	// Run events (run --bridge); the serve daemon sends the first three too.
	TypeAgentStarting      = "agent_starting"
	TypeToolCalling        = "tool_calling"
	TypeTokenBudgetWarning = "token_budget_warning"
	TypeAgentMessage       = "agent_message"
	TypeResult             = "result" // also the serve daemon's, for a task

	// Prompts.
	TypeApproval = "approval_request"
	TypeQuestion = "question"

	// Daemon events (serve).
	TypeQueued         = "queued"
	TypeAutoDispatched = "auto_dispatched"
	TypeA2ACall        = "a2a_call"
	TypeTaskResumed    = "task_resumed"

	// Input lines (client to fuseraft).
	TypeUserInput        = "user_input"
	TypeApprovalResponse = "approval_response"
	TypeQuestionResponse = "question_response"
	TypeInterrupt        = "interrupt"
)

// EventTypes returns every event type the protocol page lists, in its order (input lines
// are not events and are not among them). The slice is new at each call.
func EventTypes() []string {
	return []string{
		TypeReady, TypeHello,
		TypeTurnStart, TypeToken, TypeThinking, TypeToolCall, TypeToolResult, TypeFileChanged,
		TypeFileChanges, TypeMessageEnd, TypeCancelled, TypeRetrying, TypeInterjection, TypeStatus,
		TypeCompacted, TypePlan, TypeStepStatus, TypeShellStart, TypeShellOutput, TypeShellEnd,
		TypeReplay, TypeTitle, TypeApplied, TypeCopy, TypeText, TypeInfo, TypeWarning, TypeError,
		TypeSessEnd,
		TypeAgentStarting, TypeToolCalling, TypeTokenBudgetWarning, TypeAgentMessage, TypeResult,
		TypeApproval, TypeQuestion,
		TypeQueued, TypeAutoDispatched, TypeA2ACall, TypeTaskResumed,
	}
}

// EndsTurn reports whether an event of type t ends what fuseraft is running: a turn
// (message_end, cancelled, or error: a turn whose model call fails ends with an error and no
// message_end), the session (session_end), or a run or daemon task (result). Input held for
// the end of a turn may go after it. A !shell escape ends with shell_end instead.
func EndsTurn(t string) bool {
	switch t {
	case TypeMessageEnd, TypeCancelled, TypeError, TypeSessEnd, TypeResult:
		return true
	}
	return false
}

// EndsPrompts reports whether an event of type t leaves no prompt pending: what the prompt
// belonged to ended (message_end, cancelled, session_end, result: fuseraft waits for no
// answer any more), or a session or connection started afresh (ready; hello, after which the
// daemon asks a prompt still open again). An error ends a turn but not its prompt, which is
// still answered as usual.
func EndsPrompts(t string) bool {
	switch t {
	case TypeReady, TypeHello, TypeMessageEnd, TypeCancelled, TypeSessEnd, TypeResult:
		return true
	}
	return false
}

// The event structs below are for reading events. To pass an event on, write its Raw bytes:
// re-encoding a struct loses unknown fields and the original escapes. A re-encoded struct does
// keep the fields the protocol page lists for its event: a nullable field is written as null,
// not left out, and a false or empty value stays; only the fields the page marks optional (?)
// are left out when absent.

// Ready is the first event of repl --vscode and of run --bridge. The two shapes share one
// struct: a REPL sets Model, Title, AutoTitle and MidTurnCommands; a run sets Task, Config,
// Resumed and Agents.
//
// Encoding writes the run shape's fields when any of them is set (Task non-empty, Config or
// Agents non-nil, Resumed), the REPL shape's when any of its own is set or when none of the run
// shape's is, so both shapes round-trip as decoded: Title, AutoTitle and Config stay null when
// null, Resumed stays false, empty lists stay [].
type Ready struct {
	Type            string  `json:"type"`
	ProtocolVersion int     `json:"protocolVersion"`
	SessionID       string  `json:"sessionId"`
	Model           string  `json:"model"`
	Title           *string `json:"title"`
	AutoTitle       *string `json:"autoTitle"`
	// MidTurnCommands lists slash commands that may be sent while a reply streams.
	MidTurnCommands []string `json:"midTurnCommands"`
	Task            string   `json:"task"`
	Config          *string  `json:"config"`
	Resumed         bool     `json:"resumed"`
	Agents          []string `json:"agents"`
}

// MarshalJSON writes the shape (or shapes) r holds; see Ready.
func (r Ready) MarshalJSON() ([]byte, error) {
	// A nil outer pointer leaves a field out; a non-nil one writes it, null included.
	type shape struct {
		Type            string    `json:"type"`
		ProtocolVersion int       `json:"protocolVersion"`
		SessionID       string    `json:"sessionId"`
		Model           *string   `json:"model,omitempty"`
		Title           **string  `json:"title,omitempty"`
		AutoTitle       **string  `json:"autoTitle,omitempty"`
		MidTurnCommands *[]string `json:"midTurnCommands,omitempty"`
		Task            *string   `json:"task,omitempty"`
		Config          **string  `json:"config,omitempty"`
		Resumed         *bool     `json:"resumed,omitempty"`
		Agents          *[]string `json:"agents,omitempty"`
	}
	out := shape{Type: r.Type, ProtocolVersion: r.ProtocolVersion, SessionID: r.SessionID}
	run := r.Task != "" || r.Config != nil || r.Resumed || r.Agents != nil
	if !run || r.Model != "" || r.Title != nil || r.AutoTitle != nil || r.MidTurnCommands != nil {
		out.Model, out.Title, out.AutoTitle, out.MidTurnCommands = &r.Model, &r.Title, &r.AutoTitle, &r.MidTurnCommands
	}
	if run {
		out.Task, out.Config, out.Resumed, out.Agents = &r.Task, &r.Config, &r.Resumed, &r.Agents
	}
	return json.Marshal(out)
}

// InFlight is a client's task that is still queued or running, as sent in Hello. Position is
// nil when the daemon sent null; nil is not 0.
type InFlight struct {
	SessionID string `json:"sessionId"`
	Task      string `json:"task"`
	Status    string `json:"status"`
	Position  *int   `json:"position"`
}

// Hello is the first event on the serve socket and WebSocket.
type Hello struct {
	Type            string    `json:"type"`
	ProtocolVersion int       `json:"protocolVersion"`
	ClientID        *string   `json:"clientId"`
	ReadOnly        bool      `json:"readOnly"`
	InFlight        *InFlight `json:"inFlight"`
	PendingResults  []string  `json:"pendingResults"`
}

// Message is the text, info, warning and error events.
type Message struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// TurnStart begins a REPL turn.
type TurnStart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Token is a streamed chunk of the reply; Thinking has the same shape.
type Token struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ToolCall is a tool call in a REPL turn. Args is kept raw: it can be a whole file, or null.
type ToolCall struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Summary string          `json:"summary"`
	Args    json.RawMessage `json:"args,omitempty"`
	Agent   *string         `json:"agent,omitempty"`
}

// ToolResult is the outcome of a ToolCall; Output is capped at 100,000 characters.
type ToolResult struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Output string `json:"output"`
}

// FileChanged reports one changed file with line counts.
type FileChanged struct {
	Type    string `json:"type"`
	Path    string `json:"path"`
	Sigil   string `json:"sigil"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// FileChange is one element of FileChanges.
type FileChange struct {
	Sigil string `json:"sigil"`
	Path  string `json:"path"`
}

// FileChanges lists every file a turn changed, sent at its end.
type FileChanges struct {
	Type    string       `json:"type"`
	Changes []FileChange `json:"changes"`
}

// MessageEnd ends a REPL turn. The token counts are absent when the provider gave none.
type MessageEnd struct {
	Type                      string          `json:"type"`
	TurnIndex                 int             `json:"turnIndex"`
	ToolCalls                 json.RawMessage `json:"toolCalls"`
	InputTokens               *int            `json:"inputTokens,omitempty"`
	OutputTokens              *int            `json:"outputTokens,omitempty"`
	CachedInputTokens         *int            `json:"cachedInputTokens,omitempty"`
	CumulativeCacheReadTokens *int            `json:"cumulativeCacheReadTokens,omitempty"`
}

// Retrying says the stream dropped and is being retried.
type Retrying struct {
	Type    string `json:"type"`
	Attempt int    `json:"attempt"`
	Max     int    `json:"max"`
}

// Interjection says what happened to messages sent while a reply was streaming.
type Interjection struct {
	Type   string `json:"type"`
	Status string `json:"status"` // joined, carried or dropped
	Count  int    `json:"count"`
}

// Status carries the status-line numbers.
type Status struct {
	Type    string   `json:"type"`
	Model   string   `json:"model"`
	Turn    int      `json:"turn"`
	Context float64  `json:"context"`
	Level   string   `json:"level"`
	Modes   []string `json:"modes"`
	Input   int      `json:"input"`
	Output  int      `json:"output"`
	Cached  int      `json:"cached"`
}

// Plan lists a plan's steps.
type Plan struct {
	Type  string   `json:"type"`
	Steps []string `json:"steps"`
}

// StepStatus reports progress through a plan.
type StepStatus struct {
	Type      string `json:"type"`
	Step      int    `json:"step"`
	Total     int    `json:"total"`
	Status    string `json:"status"`
	StepsLeft int    `json:"stepsLeft"`
}

// Shell is shell_start (Command), shell_output (Text) and shell_end. Encoding writes the field
// of its Type, empty or not, and leaves out the other.
type Shell struct {
	Type    string `json:"type"`
	Command string `json:"command,omitempty"`
	Text    string `json:"text,omitempty"`
}

// MarshalJSON writes the field s.Type carries; see Shell.
func (s Shell) MarshalJSON() ([]byte, error) {
	type plain Shell // no methods: the default encoding with omitempty
	switch s.Type {
	case "shell_start":
		return json.Marshal(struct {
			Type    string `json:"type"`
			Command string `json:"command"`
		}{s.Type, s.Command})
	case "shell_output":
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{s.Type, s.Text})
	}
	return json.Marshal(plain(s))
}

// ReplayTurn is one earlier turn in Replay.
type ReplayTurn struct {
	User      string          `json:"user"`
	Assistant string          `json:"assistant"`
	ToolCalls json.RawMessage `json:"toolCalls"`
}

// Replay re-sends earlier turns after a resume.
type Replay struct {
	Type      string       `json:"type"`
	Total     int          `json:"total"`
	Compacted bool         `json:"compacted"`
	Turns     []ReplayTurn `json:"turns"`
}

// Title says the chat's name changed, or the chat now runs as another session.
type Title struct {
	Type      string  `json:"type"`
	SessionID string  `json:"sessionId"`
	Title     *string `json:"title"`
	AutoTitle *string `json:"autoTitle"`
}

// Applied says a mid-turn command took effect.
type Applied struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Message string `json:"message"`
}

// Copy carries text the user asked to copy.
type Copy struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// AgentStarting, on the run bridge and the serve socket.
type AgentStarting struct {
	Type  string `json:"type"`
	Agent string `json:"agent"`
}

// ToolCalling, on the run bridge and the serve socket.
type ToolCalling struct {
	Type        string `json:"type"`
	Agent       string `json:"agent"`
	Tool        string `json:"tool"`
	ArgsSummary string `json:"argsSummary"`
}

// TokenBudgetWarning, on the run bridge and the serve socket.
type TokenBudgetWarning struct {
	Type          string `json:"type"`
	Agent         string `json:"agent"`
	InputTokens   int    `json:"inputTokens"`
	WarnThreshold int    `json:"warnThreshold"`
}

// AgentMessageEvent is one completed turn of a run.
type AgentMessageEvent struct {
	Type      string       `json:"type"`
	Message   AgentMessage `json:"message"`
	ElapsedMs int64        `json:"elapsedMs"`
}

// RunResult is the last event of run --bridge. SessionID is null when the run failed before it
// started; the process exits with ExitCode.
type RunResult struct {
	Type           string  `json:"type"`
	SessionID      *string `json:"sessionId"`
	Task           string  `json:"task"`
	Config         *string `json:"config"`
	Succeeded      bool    `json:"succeeded"`
	ErrorMessage   *string `json:"errorMessage"`
	ExitCode       int     `json:"exitCode"`
	Turns          int     `json:"turns"`
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	InputTokens    int     `json:"inputTokens"`
	OutputTokens   int     `json:"outputTokens"`
}

// Queued says the daemon accepted this client's task. Position is how many tasks are ahead of
// it, or nil when the daemon sent null (position unknown); nil is not 0.
type Queued struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	Position  *int   `json:"position"`
}

// AutoDispatched says the daemon started a task on its own.
type AutoDispatched struct {
	Type        string `json:"type"`
	SessionID   string `json:"sessionId"`
	ObjectiveID string `json:"objectiveId"`
	Task        string `json:"task"`
}

// A2ACall says an A2A caller started a call to a hosted agent.
type A2ACall struct {
	Type      string `json:"type"`
	Agent     string `json:"agent"`
	SessionID string `json:"sessionId"`
}

// TaskResumed says the daemon restarted and is resuming a task from its saved session.
type TaskResumed struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	Task      string `json:"task"`
}

// TaskResult is the serve socket's result: this client's task finished.
type TaskResult struct {
	Type         string  `json:"type"`
	SessionID    string  `json:"sessionId"`
	Task         string  `json:"task"`
	Succeeded    bool    `json:"succeeded"`
	ErrorMessage *string `json:"errorMessage"`
	LastAgent    *string `json:"lastAgent"`
	LastMessage  *string `json:"lastMessage"`
}

// Question asks the user; answer it with QuestionResponse.
type Question struct {
	Type       string   `json:"type"`
	Question   string   `json:"question"`
	Options    []string `json:"options"`
	AllowOther bool     `json:"allowOther"`
}
