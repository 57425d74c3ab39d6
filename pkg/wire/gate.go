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
// Answers are paired with prompts by their order: the k-th approval_response pushed answers the
// k-th approval_request observed, and the k-th question_response the k-th question, so call
// Observe before the prompt reaches whoever answers it (before writing it out). A prompt that
// is no longer pending when its answer comes (its connection dropped and the daemon will ask
// again, its turn or task ended, the session restarted) is void: its answer is dropped, and a
// copy asked again waits for an answer of its own. An answer pushed when every prompt of its
// kind already has one answers nothing and is dropped at once. So an answer written for one
// prompt never answers another, however late it comes.
//
// In Stdio mode nothing is sent before ready, and messages go one turn at a time: fuseraft
// reads its stdin during a turn, and a line it has read but not yet acted on becomes the answer
// (a denial) to the next prompt of that turn. A line sent that is not an answer or an interrupt
// is a message to fuseraft and starts a turn (one whose text starts with "!" a shell escape,
// one whose text starts with "/" nothing), and the lines after it are held, in order, until the
// turn ends (message_end, cancelled, error, session_end, result) or the shell escape does
// (shell_end). While a turn runs and no prompt is pending, an interrupt and a user_input that
// is one of the ready event's midTurnCommands ("/model x" when "/model" is listed) go at once,
// ahead of the held messages. In Bridge mode only answers and interrupts are sent; anything
// else is dropped.
//
// ready is the handshake of one process, and one process is one session: a second ready from
// the same process (or stream) breaks the contract, since the answers written for the prompts
// before it could be read by fuseraft for those after it. A client must stop there rather than
// guess (a Conn returns a *ProtocolError, fr-stream exits 3), and not feed it to the Gate. A
// Gate fed a ready again (a new connection over a transport that reconnects) starts from a
// clean state: every prompt still pending is void.
type Gate struct {
	mu      sync.Mutex
	mode    Mode
	prompts []prompt // prompts observed and not yet matched with an answer, oldest first
	// asked and answered count, per kind of prompt, the prompts observed and the answers pushed
	// for them: the k-th answer is for the k-th prompt.
	asked, answered [2]int
	queue           []queued

	// Stdio and Bridge: ready has come (fuseraft reads nothing before it).
	started bool
	// Stdio: a turn or a shell escape is running, and the commands that may go meanwhile.
	inTurn, inShell bool
	midTurn         []string
	// Stdio and Bridge: fuseraft says it runs something an interrupt would cancel.
	running bool

	// denying, once Deny was called, is why nothing is approved any more.
	denying string

	readOnly       bool
	taskInFlight   bool
	taskSessionID  string          // known once queued (or from hello.inFlight)
	pendingResults map[string]bool // finished while we were away; their results are not our live task's
}

// prompt is one prompt observed: its kind, its number among the prompts of that kind, and, once
// it is no longer pending, why.
type prompt struct {
	typ  string
	seq  int
	void string
}

// queued is an input waiting in the Gate; an answer carries the number of the prompt it
// answers (0 for none: it came when every prompt of its kind had an answer).
type queued struct {
	in  Input
	seq int
}

// maxVoid bounds the void prompts remembered for the reason their late answers are dropped;
// an answer to one forgotten is still dropped.
const maxVoid = 1024

// answerKind numbers the kind of prompt an input type answers: 0 approval_request, 1
// question; -1 for an input that answers neither.
func answerKind(inputType string) int {
	switch inputType {
	case TypeApprovalResponse:
		return 0
	case TypeQuestionResponse:
		return 1
	}
	return -1
}

// promptKind numbers a prompt's event type as answerKind does.
func promptKind(eventType string) int {
	if eventType == TypeQuestion {
		return 1
	}
	return 0
}

// voidAll marks every pending prompt void for why, forgetting the oldest void ones past maxVoid.
func (g *Gate) voidAll(why string) {
	for i := range g.prompts {
		if g.prompts[i].void == "" {
			g.prompts[i].void = why
		}
	}
	if n := len(g.prompts) - maxVoid; n > 0 {
		g.prompts = append(g.prompts[:0], g.prompts[n:]...)
	}
}

// live returns the oldest prompt still pending, or nil.
func (g *Gate) live() *prompt {
	for i := range g.prompts {
		if g.prompts[i].void == "" {
			return &g.prompts[i]
		}
	}
	return nil
}

// find returns the index of the prompt an answer of kind k numbered seq answers, or -1 when it
// is forgotten.
func (g *Gate) find(k, seq int) int {
	for i, p := range g.prompts {
		if promptKind(p.typ) == k && p.seq == seq {
			return i
		}
	}
	return -1
}

// NewGate returns a Gate for the given transport.
func NewGate(mode Mode) *Gate {
	return &Gate{mode: mode, pendingResults: map[string]bool{}}
}

// Observe updates the state from an event fuseraft sent.
func (g *Gate) Observe(ev Event) {
	if !ChangesGate(ev.Type) {
		// A flood of tokens takes no lock.
		return
	}
	g.mu.Lock()
	g.observe(ev)
	g.mu.Unlock()
}

// ChangesGate reports whether an event of type t can change a Gate, and so let an input held
// in it go: a handshake, a prompt, an event that ends prompts or turns (EndsPrompts,
// EndsTurn), turn_start, shell_start, shell_end, queued. Observe does nothing with any other
// type, known or not.
func ChangesGate(t string) bool {
	switch t {
	case TypeReady, TypeHello, TypeTurnStart, TypeMessageEnd, TypeCancelled, TypeError,
		TypeSessEnd, TypeResult, TypeApproval, TypeQuestion, TypeShellStart, TypeShellEnd,
		TypeQueued:
		return true
	}
	return false
}

// observe is Observe with g.mu held.
func (g *Gate) observe(ev Event) {
	if EndsPrompts(ev.Type) {
		g.voidAll(voidReason(ev.Type))
	}
	if EndsTurn(ev.Type) {
		g.inTurn, g.inShell = false, false
		if g.mode == Stdio || ev.Type == TypeResult || ev.Type == TypeSessEnd {
			g.running = false
		}
	}
	switch ev.Type {
	case TypeApproval, TypeQuestion:
		k := promptKind(ev.Type)
		g.asked[k]++
		g.prompts = append(g.prompts, prompt{typ: ev.Type, seq: g.asked[k]})
	case TypeReady:
		// A session (re)starts: nothing is running and nothing is asked yet; a run starts.
		g.started, g.inTurn, g.inShell, g.running = true, false, false, g.mode == Bridge
		var r struct {
			MidTurnCommands []string `json:"midTurnCommands"`
		}
		g.midTurn = nil
		if json.Unmarshal(ev.Raw, &r) == nil {
			g.midTurn = r.MidTurnCommands
		}
	case TypeTurnStart:
		g.inTurn, g.running = true, true
	case TypeShellStart:
		g.inShell, g.running = true, true
	case TypeShellEnd:
		g.inShell = false
		if g.mode == Stdio {
			g.running = false
		}
	case TypeHello:
		g.observeHello(ev)
	case TypeQueued:
		if g.mode == Serve && g.taskInFlight && g.taskSessionID == "" {
			var q Queued
			if json.Unmarshal(ev.Raw, &q) == nil {
				g.taskSessionID = q.SessionID
			}
		}
	case TypeResult:
		g.observeResult(ev)
	case TypeError:
		// A read-only daemon answers a task with an error instead of queuing it.
		if g.mode == Serve && g.taskInFlight && g.taskSessionID == "" && g.readOnly {
			g.taskInFlight = false
		}
	}
}

// voidReason says why a prompt is void after an event for which EndsPrompts is true.
func voidReason(eventType string) string {
	switch eventType {
	case TypeReady:
		return "the session restarted (ready) before it was answered"
	case TypeHello:
		// A new connection: the daemon asks again.
		return "it was asked on a connection that dropped before the answer was sent; the daemon asks again"
	case TypeResult:
		return "its task ended (result) before it was answered"
	}
	return "its turn ended (" + eventType + ") before it was answered"
}

// observeHello takes in what a hello says of this client's tasks (g.mu held).
func (g *Gate) observeHello(ev Event) {
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
}

// observeResult ends this client's task in flight when the result is its (Serve; g.mu held).
func (g *Gate) observeResult(ev Event) {
	if g.mode != Serve || !g.taskInFlight {
		return
	}
	var r TaskResult
	if json.Unmarshal(ev.Raw, &r) != nil {
		return
	}
	if r.SessionID == g.taskSessionID || (g.taskSessionID == "" && !g.pendingResults[r.SessionID]) {
		g.taskInFlight, g.taskSessionID = false, ""
	}
	delete(g.pendingResults, r.SessionID)
}

// Push queues an input. An answer is numbered here, as the answer to the next prompt of its
// kind that has none.
func (g *Gate) Push(in Input) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := queued{in: in}
	if k := answerKind(in.Type); k >= 0 && g.answered[k] < g.asked[k] {
		g.answered[k]++
		q.seq = g.answered[k]
	}
	g.queue = append(g.queue, q)
}

// Answer queues in, an approval_response or question_response, as the answer to the oldest
// prompt of its kind still pending. It is for a client that shows prompts itself and knows
// which one was answered, such as one asking a person, or one denying a prompt nobody can
// answer any more: the answers never pushed for prompts voided meanwhile do not shift the
// answers after it. With no prompt of its kind pending it answers nothing and is dropped.
func (g *Gate) Answer(in Input) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := queued{in: in}
	if k := answerKind(in.Type); k >= 0 {
		for _, p := range g.prompts {
			if p.void == "" && promptKind(p.typ) == k {
				q.seq = p.seq
				if g.answered[k] < p.seq {
					g.answered[k] = p.seq
				}
				break
			}
		}
	}
	g.queue = append(g.queue, q)
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
	if d, ok := g.nextAnswer(); ok {
		return d, true
	}
	if d, ok := g.nextRefused(); ok {
		return d, true
	}
	if g.live() != nil {
		// Only the pending prompt's answer may go; it has not come yet.
		return Decision{}, false
	}
	if g.mode == Stdio && (g.inTurn || g.inShell) {
		return g.nextBusy()
	}
	in := g.queue[0].in
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

// nextAnswer decides the first answer in the queue that can be decided now: the answer to the
// pending prompt goes; one whose prompt is void, or that answers no prompt, is dropped at once
// wherever it waits (left behind held input, it could only be taken for the answer to a prompt
// it was not written for). An answer to a pending prompt behind an older one waits.
func (g *Gate) nextAnswer() (Decision, bool) {
	live := g.live()
	for i, q := range g.queue {
		k := answerKind(q.in.Type)
		if k < 0 {
			continue
		}
		what := "approval_request"
		if k == 1 {
			what = "question"
		}
		reason := ""
		switch j := g.find(k, q.seq); {
		case q.seq == 0:
			reason = "no " + what + " is pending"
		case j < 0:
			reason = "the " + what + " it answers is no longer pending"
		case g.prompts[j].void != "":
			reason = "the " + what + " it answers is void: " + g.prompts[j].void
			g.prompts = append(g.prompts[:j], g.prompts[j+1:]...)
		case &g.prompts[j] == live:
			g.prompts = append(g.prompts[:j], g.prompts[j+1:]...)
			g.queue = append(g.queue[:i], g.queue[i+1:]...)
			return Decision{Input: g.denied(q.in), Action: Send}, true
		default:
			continue // its prompt waits behind an older one
		}
		g.queue = append(g.queue[:i], g.queue[i+1:]...)
		return Decision{Input: q.in, Action: Drop, Reason: reason}, true
	}
	return Decision{}, false
}

// Deny makes the Gate approve nothing from now on, for a client that must stop (a limit it
// was held to is reached, say): every answer it sends is a denial, an approval_response with
// approved false, or a skip, a question_response with a null answer, whatever was pushed or
// queued before; and every input that is neither an answer nor an interrupt is dropped, with
// why as the Decision's Reason. Prompts are still paired with answers as before, one answer
// each: a prompt nobody answers waits for the client to Answer it (with a denial). Calling it
// again keeps the first why.
func (g *Gate) Deny(why string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.denying == "" {
		g.denying = why
		if why == "" {
			g.denying = "nothing more is sent"
		}
	}
}

// DenyUnanswered is Deny(why), and answers every pending prompt that has no answer yet with a
// denial (a skip for a question), each paired with its own prompt: for a client that can no
// longer ask anyone (its reader has gone). It returns how many prompts it answered.
func (g *Gate) DenyUnanswered(why string) int {
	g.Deny(why)
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, p := range g.prompts {
		k := promptKind(p.typ)
		if p.void != "" || p.seq <= g.answered[k] {
			continue
		}
		in := Input{Line: ApprovalResponse(false), Type: TypeApprovalResponse}
		if k == 1 {
			in = Input{Line: QuestionResponse(nil), Type: TypeQuestionResponse}
		}
		g.answered[k] = p.seq
		g.queue = append(g.queue, queued{in: in, seq: p.seq})
		n++
	}
	return n
}

// denied is an answer as it may go: a denial or a skip once Deny was called (g.mu held).
func (g *Gate) denied(in Input) Input {
	if g.denying == "" {
		return in
	}
	switch in.Type {
	case TypeApprovalResponse:
		return Input{Line: ApprovalResponse(false), Type: TypeApprovalResponse}
	case TypeQuestionResponse:
		return Input{Line: QuestionResponse(nil), Type: TypeQuestionResponse}
	}
	return in
}

// nextRefused drops the first queued input that is neither an answer nor an interrupt once Deny
// was called, wherever it waits (g.mu held).
func (g *Gate) nextRefused() (Decision, bool) {
	if g.denying == "" {
		return Decision{}, false
	}
	for i, q := range g.queue {
		if answerKind(q.in.Type) >= 0 || q.in.Type == TypeInterrupt {
			continue
		}
		g.queue = append(g.queue[:i], g.queue[i+1:]...)
		return Decision{Input: q.in, Action: Drop, Reason: g.denying}, true
	}
	return Decision{}, false
}

// nextBusy is Next while a turn or shell escape runs and no prompt is pending: messages are
// held; everything else is decided at once, ahead of them.
func (g *Gate) nextBusy() (Decision, bool) {
	for i, q := range g.queue {
		in := q.in
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

// Running reports whether fuseraft runs something an interrupt would cancel, as its events
// say: a turn or a shell escape (Stdio: from turn_start or shell_start to the event that ends
// it, see EndsTurn), the run (Bridge: from ready to result or session_end), or this client's
// task (Serve: TaskInFlight). Unlike Busy it does not count a message sent whose turn has not
// started yet.
func (g *Gate) Running() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mode == Serve {
		return g.taskInFlight
	}
	return g.running
}

// Pending returns the type of the prompt awaiting an answer (approval_request or question),
// or "" when none is.
func (g *Gate) Pending() string {
	g.mu.Lock()
	t := ""
	if p := g.live(); p != nil {
		t = p.typ
	}
	g.mu.Unlock()
	return t
}

// Unanswered returns the event types of the prompts still waiting for an answer, oldest
// first: asked, not answered, and not ended by an event (message_end, cancelled, ...).
func (g *Gate) Unanswered() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ts []string
	for _, p := range g.prompts {
		if p.void == "" && p.seq > g.answered[promptKind(p.typ)] {
			ts = append(ts, p.typ)
		}
	}
	return ts
}

// Waiting returns how many inputs are held.
func (g *Gate) Waiting() int {
	g.mu.Lock()
	n := len(g.queue)
	g.mu.Unlock()
	return n
}

// TaskInFlight reports whether this client's task is queued or running (Serve mode), and its
// session id once known.
func (g *Gate) TaskInFlight() (bool, string) {
	g.mu.Lock()
	inFlight, id := g.taskInFlight, g.taskSessionID
	g.mu.Unlock()
	return inFlight, id
}

// ReadOnly reports whether the daemon said this client's token is read-only.
func (g *Gate) ReadOnly() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.readOnly
}
