package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
)

// Input is one line a client wants to send to fuseraft, classified by ParseInput.
type Input struct {
	Line []byte // the bytes to send, without a line end
	Type string // its "type": user_input, approval_response, ...; "" for a typeless object
}

// ParseInput turns a line typed or piped by a user into an Input. A line that is a JSON object
// is sent as it is; any other line is plain text and becomes a user_input. ok is false for a
// blank line, which is not sent at all.
func ParseInput(line []byte) (in Input, ok bool) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return Input{}, false
	}
	if trimmed[0] == '{' && json.Valid(trimmed) {
		t, _ := topLevelString(trimmed, "type")
		return Input{Line: append([]byte(nil), trimmed...), Type: t}, true
	}
	b, _ := UserInput(string(bytes.TrimRight(line, "\r")))
	return Input{Line: b, Type: TypeUserInput}, true
}

// Mode says which transport a Gate guards, because they read input differently.
type Mode int

const (
	// Stdio is repl --vscode: one process, one chat.
	Stdio Mode = iota
	// Serve is the serve socket or WebSocket: every message is a new task, and while this
	// client's task is queued or running the daemon reads lines as approval answers.
	Serve
	// Bridge is run --bridge: one process, one orchestration session, which reads only
	// approval_response and interrupt lines; any other line could be read as an answer, so
	// messages are dropped.
	Bridge
)

// Action is what a Gate decided for an input.
type Action int

const (
	// Send means the input may be written now.
	Send Action = iota
	// Drop means the input must not be sent at all; Decision.Reason says why.
	Drop
)

// Decision is the Gate's verdict on the next input.
type Decision struct {
	Input  Input
	Action Action
	Reason string // why it was dropped
}

// Gate keeps the state a client needs to send input safely, and encodes the protocol's hardest
// rule: a prompt (approval_request or question) is answered by the next line fuseraft reads, so
// while one is pending nothing but its answer may be sent, exactly one answer per prompt, in
// order. Inputs that may not go yet wait, in order; the answer to the pending prompt overtakes
// them. Feed it every event with Observe and every input with Push, then send what Next allows.
// A Gate is safe for concurrent use.
//
// In Stdio mode nothing is sent before ready, and messages go one turn at a time: fuseraft
// reads its stdin during a turn, and a line it has read but not yet acted on becomes the answer
// (a denial) to the next prompt of that turn. A line sent that is not an answer or an interrupt
// is a message to fuseraft and starts a turn (one whose text starts with "!" a shell escape,
// one whose text starts with "/" nothing), and the lines after it are held, in order, until the
// turn ends (message_end, cancelled, error, session_end, result) or the shell escape does
// (shell_end). While a turn runs and no prompt is pending, an interrupt and a user_input that
// is one of the ready event's midTurnCommands ("/model x" when "/model" is listed) go at once,
// ahead of the held messages. A ready event starts from a clean state. In Bridge mode only
// answers and interrupts are sent; anything else is dropped.
type Gate struct {
	mu      sync.Mutex
	mode    Mode
	prompts []string // types of the prompts awaiting an answer, oldest first
	queue   []Input

	// Stdio and Bridge: ready has come (fuseraft reads nothing before it).
	started bool
	// Stdio: a turn or a shell escape is running, and the commands that may go meanwhile.
	inTurn, inShell bool
	midTurn         []string

	readOnly       bool
	taskInFlight   bool
	taskSessionID  string          // known once queued (or from hello.inFlight)
	pendingResults map[string]bool // finished while we were away; their results are not our live task's
}

// NewGate returns a Gate for the given transport.
func NewGate(mode Mode) *Gate {
	return &Gate{mode: mode, pendingResults: map[string]bool{}}
}

// responseType is the input that answers a prompt type.
func responseType(prompt string) string {
	if prompt == TypeQuestion {
		return TypeQuestionResponse
	}
	return TypeApprovalResponse
}

// Observe updates the state from an event fuseraft sent.
func (g *Gate) Observe(ev Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch ev.Type {
	case TypeApproval, TypeQuestion:
		g.prompts = append(g.prompts, ev.Type)
	case TypeReady:
		// A session (re)starts: nothing is running and nothing is asked yet.
		g.prompts = nil
		g.started, g.inTurn, g.inShell = true, false, false
		var r struct {
			MidTurnCommands []string `json:"midTurnCommands"`
		}
		g.midTurn = nil
		if json.Unmarshal(ev.Raw, &r) == nil {
			g.midTurn = r.MidTurnCommands
		}
	case "turn_start":
		g.inTurn = true
	case "shell_start":
		g.inShell = true
	case "shell_end":
		g.inShell = false
	case TypeHello:
		// A new connection: prompts of the old one are void; the daemon asks again.
		g.prompts = nil
		var h Hello
		if json.Unmarshal(ev.Raw, &h) != nil {
			return
		}
		g.readOnly = h.ReadOnly
		g.pendingResults = map[string]bool{}
		for _, id := range h.PendingResults {
			g.pendingResults[id] = true
		}
		switch {
		case h.InFlight != nil:
			g.taskInFlight, g.taskSessionID = true, h.InFlight.SessionID
		case g.taskSessionID != "":
			// The daemon no longer knows our task as in flight; its result (if any) is
			// among pendingResults, and follows this hello.
			g.taskInFlight = g.pendingResults[g.taskSessionID]
		default:
			// A task sent just before the connection dropped that the daemon never
			// confirmed: it does not know it, so it is not in flight.
			g.taskInFlight = false
		}
	case TypeQueued:
		if g.mode == Serve && g.taskInFlight && g.taskSessionID == "" {
			var q Queued
			if json.Unmarshal(ev.Raw, &q) == nil {
				g.taskSessionID = q.SessionID
			}
		}
	case TypeResult:
		g.prompts = nil
		g.inTurn, g.inShell = false, false
		if g.mode == Serve && g.taskInFlight {
			var r TaskResult
			if json.Unmarshal(ev.Raw, &r) != nil {
				return
			}
			if r.SessionID == g.taskSessionID || (g.taskSessionID == "" && !g.pendingResults[r.SessionID]) {
				g.taskInFlight, g.taskSessionID = false, ""
			}
			delete(g.pendingResults, r.SessionID)
		}
	case TypeError:
		// A turn that fails (the model call, the provider) ends with an error and no
		// message_end; holding messages for it would hold them for ever. A prompt is still
		// answered as usual.
		g.inTurn, g.inShell = false, false
		// A read-only daemon answers a task with an error instead of queuing it.
		if g.mode == Serve && g.taskInFlight && g.taskSessionID == "" && g.readOnly {
			g.taskInFlight = false
		}
	case "message_end", "cancelled", TypeSessEnd:
		// The turn is over: fuseraft is no longer waiting for an answer.
		g.prompts = nil
		g.inTurn, g.inShell = false, false
	}
}

// Push queues an input.
func (g *Gate) Push(in Input) {
	g.mu.Lock()
	g.queue = append(g.queue, in)
	g.mu.Unlock()
}

// Next returns the next decision, removing its input from the queue: either an input that may
// be sent now (the caller must send it before calling Next again) or one that must be dropped.
// ok is false when nothing may be sent now; the remaining inputs wait for an event.
func (g *Gate) Next() (d Decision, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 || (g.mode != Serve && !g.started) {
		// Before ready, nothing is sent: whatever was sent would be read once the session
		// starts, when the state this Gate keeps would not know of it.
		return Decision{}, false
	}
	if len(g.prompts) > 0 {
		want := responseType(g.prompts[0])
		for i, in := range g.queue {
			if in.Type == want {
				g.queue = append(g.queue[:i], g.queue[i+1:]...)
				g.prompts = g.prompts[1:]
				return Decision{Input: in, Action: Send}, true
			}
		}
		return Decision{}, false
	}
	// With nothing pending, an answer is dropped at once wherever it waits: left behind held
	// input, it would be taken for the answer to a later prompt nobody has seen.
	for i, in := range g.queue {
		if in.Type == TypeApprovalResponse || in.Type == TypeQuestionResponse {
			g.queue = append(g.queue[:i], g.queue[i+1:]...)
			reason := "no approval_request is pending"
			if in.Type == TypeQuestionResponse {
				reason = "no question is pending"
			}
			return Decision{Input: in, Action: Drop, Reason: reason}, true
		}
	}
	if g.mode == Stdio && (g.inTurn || g.inShell) {
		return g.nextBusy()
	}
	in := g.queue[0]
	if in.Type == TypeInterrupt {
		g.queue = g.queue[1:]
		return Decision{Input: in, Action: Send}, true
	}
	if g.mode == Bridge {
		g.queue = g.queue[1:]
		return Decision{Input: in, Action: Drop, Reason: "run --bridge reads only approval_response and interrupt lines"}, true
	}
	if g.mode == Stdio {
		g.expectTurn(in)
	}
	if g.mode == Serve {
		// Anything else is a new task to the daemon.
		if g.readOnly {
			g.queue = g.queue[1:]
			return Decision{Input: in, Action: Drop, Reason: "the token is read-only: the daemon does not take tasks from it"}, true
		}
		if g.taskInFlight {
			return Decision{}, false
		}
		g.taskInFlight, g.taskSessionID = true, ""
	}
	g.queue = g.queue[1:]
	return Decision{Input: in, Action: Send}, true
}

// nextBusy is Next while a turn or shell escape runs and no prompt is pending: messages are
// held; everything else is decided at once, ahead of them.
func (g *Gate) nextBusy() (Decision, bool) {
	for i, in := range g.queue {
		if in.Type != TypeInterrupt && !g.isMidTurn(in) {
			continue // held until the turn ends
		}
		g.queue = append(g.queue[:i], g.queue[i+1:]...)
		return Decision{Input: in, Action: Send}, true
	}
	return Decision{}, false
}

// expectTurn marks fuseraft busy as a message goes: a plain message starts a turn and a
// !command a shell escape, and a message sent before their start event arrives would still be
// read during them. A slash command may start nothing, so it does not.
func (g *Gate) expectTurn(in Input) {
	// fuseraft takes a line's text as the message, and a line without a text string as the
	// message itself, untrimmed.
	text, ok := topLevelString(in.Line, "text")
	switch {
	case ok && strings.HasPrefix(text, "/"):
	case ok && strings.HasPrefix(text, "!"):
		g.inShell = true
	default:
		g.inTurn = true
	}
}

// isMidTurn reports whether a message is one of the slash commands ready listed as allowed
// while a reply streams: its first word is the command.
func (g *Gate) isMidTurn(in Input) bool {
	if len(g.midTurn) == 0 {
		return false
	}
	text, ok := topLevelString(in.Line, "text")
	if !ok {
		return false
	}
	for _, c := range g.midTurn {
		if c != "" && strings.HasPrefix(text, c) && (len(text) == len(c) || text[len(c)] == ' ') {
			return true
		}
	}
	return false
}

// Busy reports whether input is held until fuseraft is ready for it: before ready, and while
// a turn or a shell escape runs (Stdio).
func (g *Gate) Busy() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return (g.mode != Serve && !g.started) || (g.mode == Stdio && (g.inTurn || g.inShell))
}

// Pending returns the type of the prompt awaiting an answer (approval_request or question),
// or "" when none is.
func (g *Gate) Pending() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.prompts) == 0 {
		return ""
	}
	return g.prompts[0]
}

// Waiting returns how many inputs are held.
func (g *Gate) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// TaskInFlight reports whether this client's task is queued or running (Serve mode), and its
// session id once known.
func (g *Gate) TaskInFlight() (bool, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.taskInFlight, g.taskSessionID
}

// ReadOnly reports whether the daemon said this client's token is read-only.
func (g *Gate) ReadOnly() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.readOnly
}
