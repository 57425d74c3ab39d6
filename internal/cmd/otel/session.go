package otel

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/fuseraft/fr/internal/prices"
	"github.com/fuseraft/fr/internal/redact"
	"github.com/fuseraft/fr/pkg/wire"
)

// The mapping from a session's events to spans, logs and metrics, following the GenAI semantic
// conventions (gen_ai.*) where they have a name, and fr.* where they do not. See docs/otel.md.

// mapOptions are what the command line decides about the mapping.
type mapOptions struct {
	capture bool              // --capture-content
	red     *redact.Redactor  // applied to all content captured
	prices  *prices.Table     // --prices
	parent  trace.SpanContext // $TRACEPARENT, when valid
	audit   *auditLog         // --audit
	warn    func(string, ...any)
}

// Session kinds, as fr.session.kind.
const (
	kindChat = "chat" // repl --vscode
	kindRun  = "run"  // run --bridge
	kindTask = "task" // a daemon's task (serve, or a fleet's)
)

// transports of one input, learned from its first handshake.
const (
	transportUnknown = iota
	transportStdio
	transportBridge
	transportDaemon
)

// maxHeld bounds the spans one session holds open at once (tool calls never answered, say);
// past it the oldest are ended where they stand.
const maxHeld = 1024

// maxCapture bounds one captured text (after redaction).
const maxCapture = 64 << 10

// mapper turns the lines of one or more inputs into spans, logs and metrics.
type mapper struct {
	o     mapOptions
	sink  sink
	fleet map[string]*session // by the fleet's taskId, across inputs
	open  []*session          // every session not ended, in the order started
}

func newMapper(o mapOptions, s sink) *mapper {
	if o.warn == nil {
		o.warn = func(string, ...any) {}
	}
	return &mapper{o: o, sink: s, fleet: map[string]*session{}}
}

// input is one input's state: which transport it is and its current session.
type input struct {
	m         *mapper
	name      string
	transport int
	cur       *session   // the chat or run being read
	tasks     []*session // a daemon's tasks not finished, oldest first
	unnamed   int        // sessions of this input started without a session id
	last      time.Time
	badVer    bool  // a handshake of an unsupported protocolVersion was seen
	ev        event // the line being read, decoded (one for all, not one made for each)
}

func (m *mapper) input(name string) *input { return &input{m: m, name: name} }

// session is one session: its root span and what is open in it.
type session struct {
	m       *mapper
	key     string // what its ids derive from: the session id, else where it was read
	id      string // the session id, when known
	kind    string
	traceID trace.TraceID
	root    *span
	model   string
	agent   string // a run's or task's agent of the current turn

	turn      *span // the chat turn, or the agent's turn, being read
	turnKind  string
	turnStart time.Time
	tokens    int64 // token events of the current turn
	thinking  int64 // thinking events of the current turn
	reply     strings.Builder

	tools     map[string]*span // a chat's tool calls waiting for their result, by id
	toolOrder []*span          // the same, oldest first
	calling   *span            // the last tool_calling not yet followed by another event of its turn
	pending   []*span          // a run's tool spans of the current turn, waiting for their outcome
	lastTool  *span            // the tool call an approval_request gates
	approval  *span            // the approval_request waiting for its answer

	n     map[string]int // counters for span paths
	usage prices.Usage
	last  time.Time
	ended bool
}

func (m *mapper) newSession(key, id, kind string, at time.Time) *session {
	s := &session{m: m, key: key, id: id, kind: kind, tools: map[string]*span{}, n: map[string]int{}, last: at}
	if m.o.parent.IsValid() {
		s.traceID = m.o.parent.TraceID()
	} else {
		s.traceID = traceIDFor(key)
	}
	op := "invoke_workflow"
	if kind == kindChat {
		op = "invoke_agent"
	}
	s.root = &span{name: op, kind: trace.SpanKindInternal, traceID: s.traceID, id: spanIDFor(s.traceID, key, "session"), start: at}
	if m.o.parent.IsValid() {
		s.root.parent, s.root.remote = m.o.parent.SpanID(), true
	}
	s.root.set(attribute.String("gen_ai.operation.name", op), attribute.String("fr.session.kind", kind))
	if id != "" {
		s.root.set(attribute.String("gen_ai.conversation.id", id))
	}
	m.open = append(m.open, s)
	return s
}

// child returns a new span under parent (the root when nil), its id derived from what and the
// count of such spans so far.
func (s *session) child(parent *span, what, name string, at time.Time) *span {
	if parent == nil {
		parent = s.root
	}
	s.n[what]++
	sp := &span{name: name, kind: trace.SpanKindInternal, traceID: s.traceID,
		id: spanIDFor(s.traceID, s.key, what+"/"+strconv.Itoa(s.n[what])), parent: parent.id, start: at}
	if s.id != "" {
		sp.set(attribute.String("gen_ai.conversation.id", s.id))
	}
	return sp
}

func (s *session) endSpan(sp *span, at time.Time) {
	if sp == nil || sp.ended {
		return
	}
	sp.ended = true
	if at.Before(sp.start) {
		at = sp.start
	}
	sp.end = at
	s.m.sink.span(sp)
}

// inner is the innermost span open: where an event that belongs to no span of its own goes.
func (s *session) inner() *span {
	switch {
	case s.approval != nil:
		return s.approval
	case s.calling != nil:
		return s.calling
	case s.turn != nil:
		return s.turn
	}
	return s.root
}

// line reads one line of the input, which arrived (or was recorded arriving) at.
func (in *input) line(raw []byte, at time.Time) {
	in.last = at
	l := wire.ParseLine(raw)
	if l.Kind != wire.EventLine {
		return
	}
	// The bulk of a chat: streamed chunks, counted on their turn without a full decode.
	if l.Type == wire.TypeToken || l.Type == wire.TypeThinking {
		s := in.cur
		if s == nil || s.ended {
			return
		}
		s.last = at
		in.endApproval(s, at)
		if l.Type == wire.TypeToken {
			s.tokens++
			if in.m.o.capture && s.reply.Len() < maxCapture {
				if t, ok := wire.TopLevelString(raw, "text"); ok {
					s.reply.WriteString(t)
				}
			}
		} else {
			s.thinking++
		}
		return
	}
	ev := &in.ev
	*ev = event{}
	if decodeEvent(raw, in.m.o.capture, ev) != nil {
		return
	}
	ev.Type = l.Type
	in.event(ev, raw, at)
}

func (in *input) endApproval(s *session, at time.Time) { s.endApproval(at) }

// sessionFor finds (or starts) the session an event belongs to.
func (in *input) sessionFor(ev *event, at time.Time) *session {
	m := in.m
	if ev.TaskID != "" {
		return m.fleetTask(ev, at)
	}
	switch ev.Type {
	case wire.TypeReady:
		if in.cur != nil && !in.cur.ended {
			in.finish(in.cur, at)
		}
		kind := kindChat
		in.transport = transportStdio
		if ev.Agents != nil || ev.Task != nil {
			kind, in.transport = kindRun, transportBridge
		}
		in.cur = m.newSession(in.keyFor(ev.sessionID()), ev.sessionID(), kind, at)
		return in.cur
	case wire.TypeHello:
		in.transport = transportDaemon
		return nil
	case "queued", "auto_dispatched", "task_resumed":
		in.transport = transportDaemon
		if s := in.task(ev.sessionID()); s != nil {
			return s
		}
		s := m.newSession(in.keyFor(ev.sessionID()), ev.sessionID(), kindTask, at)
		in.tasks = append(in.tasks, s)
		return s
	case "result":
		return in.resultSession(ev, at)
	}
	if in.transport == transportDaemon {
		if len(in.tasks) == 0 {
			// attached while a task ran: a trace of its own, named after where it was read
			s := m.newSession(in.keyFor(""), "", kindTask, at)
			in.tasks = append(in.tasks, s)
		}
		return in.tasks[0]
	}
	if in.cur == nil || in.cur.ended {
		kind := kindChat
		switch ev.Type {
		case "agent_starting", "tool_calling", "agent_message", "token_budget_warning":
			kind = kindRun
		}
		in.cur = m.newSession(in.keyFor(""), "", kind, at)
	}
	return in.cur
}

// fleetTask finds (or starts) the session of a fleet's task.
func (m *mapper) fleetTask(ev *event, at time.Time) *session {
	s := m.fleet[ev.TaskID]
	if s != nil && !s.ended {
		return s
	}
	key := ev.sessionID()
	if key == "" {
		key = "task:" + ev.TaskID
	}
	s = m.newSession(key, ev.sessionID(), kindTask, at)
	s.root.set(attribute.String("fr.task.id", ev.TaskID))
	if ev.Host != "" {
		s.root.set(attribute.String("host.name", ev.Host))
	}
	if ev.Pool != "" {
		s.root.set(attribute.String("fr.pool", ev.Pool))
	}
	m.fleet[ev.TaskID] = s
	return s
}

// resultSession finds (or starts) the session a result event ends: a daemon's task, or a run.
func (in *input) resultSession(ev *event, at time.Time) *session {
	if in.transport == transportDaemon || (in.transport == transportUnknown && ev.ExitCode == nil) {
		if s := in.task(ev.sessionID()); s != nil {
			return s
		}
		if ev.sessionID() == "" && len(in.tasks) > 0 {
			return in.tasks[0]
		}
		s := in.m.newSession(in.keyFor(ev.sessionID()), ev.sessionID(), kindTask, at)
		in.tasks = append(in.tasks, s)
		return s
	}
	if in.cur == nil || in.cur.ended {
		// A run that failed before it started sends only its result (sessionId null).
		key := ev.sessionID()
		if key == "" {
			key = "unstarted\x00" + str(ev.Task) + "\x00" + str(ev.Config) + "\x00" + strconv.Itoa(in.unnamed)
			in.unnamed++
		}
		in.transport = transportBridge
		in.cur = in.m.newSession(key, ev.sessionID(), kindRun, at)
	}
	return in.cur
}

// keyFor is the key of a session with id, or, without one, of the next unnamed session of
// this input.
func (in *input) keyFor(id string) string {
	if id != "" {
		return id
	}
	in.unnamed++
	return "input\x00" + in.name + "\x00" + strconv.Itoa(in.unnamed)
}

// task returns the daemon task of this input with the given session id, if it is open.
func (in *input) task(id string) *session {
	if id == "" {
		return nil
	}
	for _, s := range in.tasks {
		if s.id == id && !s.ended {
			return s
		}
	}
	return nil
}

func (in *input) event(ev *event, raw []byte, at time.Time) {
	if ev.Type == wire.TypeReady || ev.Type == wire.TypeHello {
		if ev.ProtocolVersion != nil && wire.CheckVersion(*ev.ProtocolVersion, "the "+ev.Type+" event") != nil {
			in.badVer = true
		}
	}
	s := in.sessionFor(ev, at)
	if s == nil {
		in.log(nil, ev, raw, at, nil)
		return
	}
	s.last = at
	if ev.Type != "approval_request" {
		in.endApproval(s, at)
	}
	where := s.apply(ev, at)
	in.log(s, ev, raw, at, where)
	if s.ended {
		in.forget(s)
	}
}

// forget drops an ended session from the input's and the mapper's lists.
func (in *input) forget(s *session) {
	for i, t := range in.tasks {
		if t == s {
			in.tasks = append(in.tasks[:i:i], in.tasks[i+1:]...)
			break
		}
	}
	for k, t := range in.m.fleet {
		if t == s {
			delete(in.m.fleet, k)
		}
	}
	for i, t := range in.m.open {
		if t == s {
			in.m.open = append(in.m.open[:i:i], in.m.open[i+1:]...)
			break
		}
	}
}

// finish ends a session whose end was not seen (a new one started in its place).
func (in *input) finish(s *session, at time.Time) {
	s.close(at, true)
	in.forget(s)
}

// finishAll ends every session still open at the end of the input.
func (m *mapper) finishAll() {
	for len(m.open) > 0 {
		s := m.open[0]
		m.open = m.open[1:]
		s.close(s.last, true)
	}
	m.fleet = map[string]*session{}
}

// apply maps one decoded event and returns the span it happened in.
func (s *session) apply(ev *event, at time.Time) *span {
	if f := appliers[ev.Type]; f != nil {
		return f(s, ev, at)
	}
	return s.onOther(ev, at)
}

// appliers map the events that open, end or describe spans, one method per event type;
// every other event is an event on the innermost span open (onOther).
var appliers = map[string]func(*session, *event, time.Time) *span{
	wire.TypeReady:    (*session).onReady,
	"queued":          (*session).onQueued,
	"auto_dispatched": (*session).onQueued,
	"task_resumed":    (*session).onQueued,

	// a chat
	"turn_start":  (*session).onTurnStart,
	"tool_call":   (*session).onToolCall,
	"tool_result": (*session).onToolResult,
	"message_end": (*session).onMessageEnd,
	"cancelled":   (*session).onCancelled,
	"status":      (*session).onStatus,
	"title":       (*session).onTitle,
	"session_end": (*session).onSessionEnd,

	// a run, a daemon's task
	"agent_starting": (*session).onAgentStarting,
	"tool_calling":   (*session).onToolCalling,
	"agent_message":  (*session).onAgentMessage,
	"result":         (*session).onResult,

	// prompts
	"approval_request": (*session).onApprovalRequest,
}

func (s *session) onReady(ev *event, at time.Time) *span {
	if ev.Model != "" {
		s.model = ev.Model
		s.root.set(attribute.String("gen_ai.request.model", ev.Model))
	}
	if ev.Config != nil {
		s.root.set(attribute.String("fr.config", *ev.Config))
	}
	if ev.Task != nil && s.m.o.capture {
		s.root.set(attribute.String("fr.task", s.m.text(*ev.Task)))
	}
	if len(ev.Agents) > 0 {
		s.root.set(attribute.StringSlice("fr.agents", ev.Agents))
	}
	return s.root
}

func (s *session) onQueued(ev *event, at time.Time) *span {
	if s.id == "" && ev.sessionID() != "" {
		s.id = ev.sessionID()
		s.root.set(attribute.String("gen_ai.conversation.id", s.id))
	}
	s.root.event(ev.Type, at)
	if ev.Task != nil && s.m.o.capture {
		s.root.set(attribute.String("fr.task", s.m.text(*ev.Task)))
	}
	return s.root
}

func (s *session) onTurnStart(_ *event, at time.Time) *span {
	s.endTurn(at, "")
	s.openTurn("chat", "chat", at)
	return s.turn
}

// toolSpan starts a chat's tool call span under parent.
func (s *session) toolSpan(parent *span, ev *event, at time.Time) *span {
	sp := s.child(parent, "tool", "execute_tool "+ev.Name, at)
	sp.set(attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", ev.Name),
		attribute.String("gen_ai.tool.call.id", ev.ID))
	return sp
}

func (s *session) onToolCall(ev *event, at time.Time) *span {
	m := s.m
	sp := s.toolSpan(s.turn, ev, at)
	if ev.Agent != "" {
		sp.set(attribute.String("gen_ai.agent.name", ev.Agent))
	}
	if m.o.capture {
		if ev.Summary != "" {
			sp.set(attribute.String("fr.tool.summary", m.text(ev.Summary)))
		}
		if len(ev.Args) > 0 && string(ev.Args) != "null" {
			sp.set(attribute.String("gen_ai.tool.call.arguments", m.text(string(ev.Args))))
		}
	}
	if old := s.tools[ev.ID]; old != nil {
		s.endTool(old, at, nil)
	}
	s.tools[ev.ID] = sp
	s.toolOrder = append(s.toolOrder, sp)
	if len(s.toolOrder) > maxHeld {
		s.endTool(s.toolOrder[0], at, nil)
	}
	s.lastTool = sp
	return sp
}

func (s *session) onToolResult(ev *event, at time.Time) *span {
	sp := s.tools[ev.ID]
	if sp == nil {
		// a result without its call (read from its middle): a span of no length
		sp = s.toolSpan(s.turn, ev, at)
	}
	if s.m.o.capture && len(ev.Output) > 0 {
		var out string
		if json.Unmarshal(ev.Output, &out) == nil {
			sp.set(attribute.String("gen_ai.tool.call.result", s.m.text(out)))
		}
	}
	s.endTool(sp, at, ev.OK)
	return sp
}

func (s *session) onMessageEnd(ev *event, at time.Time) *span {
	if s.turn == nil {
		s.openTurn("chat", "chat", at)
	}
	if ev.TurnIndex != nil {
		s.turn.set(attribute.Int("fr.turn.index", *ev.TurnIndex))
	}
	s.usageOn(s.turn, ev.InputTokens, ev.OutputTokens, ev.CachedInputTokens)
	s.endTurn(at, "")
	return s.root
}

func (s *session) onCancelled(_ *event, at time.Time) *span {
	sp := s.turn
	s.endTurn(at, "cancelled")
	if sp == nil {
		s.root.event("cancelled", at)
	}
	return s.root
}

func (s *session) onStatus(ev *event, _ time.Time) *span {
	if ev.Model != "" && ev.Model != s.model {
		s.model = ev.Model
		if s.turn == nil {
			s.root.set(attribute.String("gen_ai.request.model", ev.Model))
		}
	}
	return s.inner()
}

func (s *session) onTitle(ev *event, at time.Time) *span {
	if id := ev.sessionID(); id != "" && s.id != "" && id != s.id {
		s.root.event("session_switched", at, attribute.String("fr.session.next", id))
	}
	return s.root
}

func (s *session) onSessionEnd(_ *event, at time.Time) *span {
	s.close(at, false)
	return s.root
}

// openAgentTurn starts an agent's turn span ("invoke_agent NAME") at start.
func (s *session) openAgentTurn(agent string, start time.Time) {
	s.agent = agent
	s.openTurn("agent", "invoke_agent "+agent, start)
	s.turn.set(attribute.String("gen_ai.agent.name", agent))
}

func (s *session) onAgentStarting(ev *event, at time.Time) *span {
	s.endTurn(at, "")
	s.openAgentTurn(ev.Agent, at)
	return s.turn
}

func (s *session) onToolCalling(ev *event, at time.Time) *span {
	s.endCalling(at)
	if s.turn == nil && ev.Agent != "" {
		s.openAgentTurn(ev.Agent, at)
	}
	sp := s.child(s.turn, "tool", "execute_tool "+ev.Tool, at)
	sp.set(attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", ev.Tool))
	if ev.Agent != "" {
		sp.set(attribute.String("gen_ai.agent.name", ev.Agent))
	}
	if s.m.o.capture && ev.ArgsSummary != "" {
		sp.set(attribute.String("fr.tool.summary", s.m.text(ev.ArgsSummary)))
	}
	s.calling, s.lastTool = sp, sp
	return sp
}

func (s *session) onAgentMessage(ev *event, at time.Time) *span {
	s.endCalling(at)
	msg := ev.Message
	if msg == nil {
		return s.inner()
	}
	if msg.Role != "assistant" {
		// a human's message, or the orchestrator's routing correction
		s.root.event("agent_message", at, attribute.String("gen_ai.agent.name", msg.AgentName), attribute.String("fr.role", msg.Role))
		return s.root
	}
	if s.turn == nil || s.agent != msg.AgentName {
		s.endTurn(at, "")
		start := at
		if ev.ElapsedMs != nil && *ev.ElapsedMs > 0 {
			start = at.Add(-time.Duration(*ev.ElapsedMs) * time.Millisecond)
		}
		s.openAgentTurn(msg.AgentName, start)
	}
	if msg.TurnIndex != nil {
		s.turn.set(attribute.Int("fr.turn.index", *msg.TurnIndex))
	}
	if msg.IsCompactionSummary {
		s.turn.set(attribute.Bool("fr.compaction_summary", true))
	}
	if s.m.o.capture && msg.Content != "" {
		s.turn.set(attribute.String("fr.reply", s.m.text(msg.Content)))
	}
	s.outcomes(msg)
	s.usageOn(s.turn, msg.InputTokens, msg.OutputTokens, nil)
	s.endTurn(at, "")
	return s.root
}

func (s *session) onResult(ev *event, at time.Time) *span {
	s.resultOn(ev)
	s.close(at, false)
	return s.root
}

func (s *session) onApprovalRequest(ev *event, at time.Time) *span {
	s.endApproval(at)
	sp := s.child(s.turnOrRoot(), "approval", "approval "+ev.Kind, at)
	sp.set(attribute.String("fr.approval.kind", ev.Kind))
	if s.lastTool != nil {
		// the tool call it gates (a sibling: a link that repeated the parent would show
		// as a second parent in some backends, so the turn is the parent, the tool a link)
		sp.links = append(sp.links, s.lastTool.id)
	}
	if s.m.o.capture {
		if sum := promptSummary(ev); sum != "" {
			sp.set(attribute.String("fr.approval.summary", s.m.text(sum)))
		}
	}
	sp.approvalKind = ev.Kind
	s.approval = sp
	return sp
}

// onOther maps every other event: an event on the innermost span open.
func (s *session) onOther(ev *event, at time.Time) *span {
	where := s.inner()
	if ev.Type == "error" && where == s.root {
		where.event("exception", at, attribute.String("exception.type", "fuseraft.error"))
	}
	where.event(ev.Type, at, s.eventAttrs(ev)...)
	return where
}

// eventAttrs are the attributes of an event mapped to a span event.
func (s *session) eventAttrs(ev *event) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	switch ev.Type {
	case "file_changed":
		attrs = append(attrs, attribute.String("fr.file.path", ev.Path), attribute.String("fr.file.sigil", ev.Sigil))
		if ev.Added != nil {
			attrs = append(attrs, attribute.Int("fr.file.added", *ev.Added))
		}
		if ev.Removed != nil {
			attrs = append(attrs, attribute.Int("fr.file.removed", *ev.Removed))
		}
	case "retrying":
		if ev.Attempt != nil {
			attrs = append(attrs, attribute.Int("fr.retry.attempt", *ev.Attempt))
		}
	case "token_budget_warning":
		attrs = append(attrs, attribute.String("gen_ai.agent.name", ev.Agent))
		if ev.InputTokens != nil {
			attrs = append(attrs, attribute.Int64("gen_ai.usage.input_tokens", *ev.InputTokens))
		}
	case "a2a_call":
		attrs = append(attrs, attribute.String("gen_ai.agent.name", ev.Agent))
	case "interjection":
		attrs = append(attrs, attribute.String("fr.interjection.status", ev.Status))
	case "error", "warning", "info", "text":
		if s.m.o.capture && ev.Text != "" {
			attrs = append(attrs, attribute.String("fr.text", s.m.text(ev.Text)))
		}
	}
	return attrs
}

func (s *session) turnOrRoot() *span {
	if s.turn != nil {
		return s.turn
	}
	return s.root
}

// endApproval ends the approval_request waiting: the session's next event comes after its
// answer, so the audit log, when given, has its decision by then.
func (s *session) endApproval(at time.Time) {
	sp := s.approval
	if sp == nil {
		return
	}
	s.approval = nil
	decision, decider := "unknown", ""
	if s.m.o.audit != nil {
		decision, decider = s.m.o.audit.next(sp.approvalKind, s.id)
	}
	sp.set(attribute.String("fr.approval.decision", decision))
	if decider != "" {
		sp.set(attribute.String("fr.approval.decider", decider))
	}
	if decision == "deny" {
		sp.fail("denied", "denied")
	}
	s.m.sink.metric(metricApprovals, 1, attribute.String("fr.approval.kind", sp.approvalKind), attribute.String("fr.approval.decision", decision))
	s.endSpan(sp, at)
}

// openTurn starts a turn span: a chat's turn ("chat MODEL") or an agent's ("invoke_agent NAME").
func (s *session) openTurn(kind, name string, at time.Time) {
	op := "invoke_agent"
	if kind == "chat" {
		op = "chat"
		if s.model != "" {
			name = "chat " + s.model
		}
	}
	s.turn = s.child(s.root, "turn", name, at)
	s.turn.set(attribute.String("gen_ai.operation.name", op))
	if s.model != "" {
		s.turn.set(attribute.String("gen_ai.request.model", s.model))
	}
	s.turnKind, s.turnStart = kind, at
	s.tokens, s.thinking = 0, 0
	s.reply.Reset()
}

// endTurn ends the turn open, if any: its tool calls still open, its chunks counted, and its
// duration measured. errType, when set, fails it (a cancelled turn).
func (s *session) endTurn(at time.Time, errType string) {
	s.endCalling(at)
	s.flushPending()
	for len(s.toolOrder) > 0 {
		s.endTool(s.toolOrder[0], at, nil)
	}
	sp := s.turn
	if sp == nil {
		return
	}
	s.turn = nil
	if s.tokens > 0 || s.thinking > 0 {
		sp.set(attribute.Int64("fr.reply.chunks", s.tokens), attribute.Int64("fr.thinking.chunks", s.thinking))
	}
	if s.m.o.capture && s.reply.Len() > 0 {
		sp.set(attribute.String("fr.reply", s.m.text(s.reply.String())))
	}
	if s.tokens > 0 || s.thinking > 0 {
		rec := &logRecord{at: at, eventName: "fuseraft.reply", severity: log.SeverityInfo, traceID: s.traceID, spanID: sp.id,
			attrs: []attribute.KeyValue{attribute.Int64("fr.reply.chunks", s.tokens), attribute.Int64("fr.thinking.chunks", s.thinking)}}
		if s.m.o.capture {
			rec.body = s.m.text(s.reply.String())
		}
		if s.id != "" {
			rec.attrs = append(rec.attrs, attribute.String("gen_ai.conversation.id", s.id))
		}
		s.m.sink.log(rec)
	}
	if errType != "" {
		sp.fail(errType, errType)
	}
	s.endSpan(sp, at)
	op := "chat"
	if s.turnKind == "agent" {
		op = "invoke_agent"
	}
	attrs := s.metricAttrs(op)
	if errType != "" {
		attrs = append(attrs, attribute.String("error.type", errType))
	}
	s.m.sink.metric(metricDuration, sp.end.Sub(sp.start).Seconds(), attrs...)
}

func (s *session) metricAttrs(op string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attribute.String("gen_ai.operation.name", op)}
	if s.model != "" {
		attrs = append(attrs, attribute.String("gen_ai.request.model", s.model))
	}
	if op == "invoke_agent" && s.agent != "" && s.kind != kindChat {
		attrs = append(attrs, attribute.String("gen_ai.agent.name", s.agent))
	}
	return attrs
}

// usageOn puts a turn's tokens on its span and in the metrics, and counts them for the cost.
func (s *session) usageOn(sp *span, in, out, cached *int64) {
	op := "chat"
	if s.turnKind == "agent" {
		op = "invoke_agent"
	}
	var u prices.Usage
	if in != nil {
		sp.set(attribute.Int64("gen_ai.usage.input_tokens", *in))
		s.m.sink.metric(metricTokens, float64(*in), append(s.metricAttrs(op), attribute.String("gen_ai.token.type", "input"))...)
		u.Input = *in
	}
	if out != nil {
		sp.set(attribute.Int64("gen_ai.usage.output_tokens", *out))
		s.m.sink.metric(metricTokens, float64(*out), append(s.metricAttrs(op), attribute.String("gen_ai.token.type", "output"))...)
		u.Output = *out
	}
	if cached != nil {
		sp.set(attribute.Int64("gen_ai.usage.cache_read.input_tokens", *cached))
		u.Cached = *cached
	}
	s.usage = s.usage.Add(u)
	if s.m.o.prices != nil && !u.Zero() {
		if usd, ok := s.m.o.prices.Cost(s.model, u); ok {
			sp.set(attribute.Float64("fr.cost.usd", usd))
			attrs := []attribute.KeyValue{}
			if s.model != "" {
				attrs = append(attrs, attribute.String("gen_ai.request.model", s.model))
			}
			s.m.sink.metric(metricCost, usd, attrs...)
		}
	}
}

// endTool ends a chat's tool call, with its outcome when known.
func (s *session) endTool(sp *span, at time.Time, ok *bool) {
	for i, t := range s.toolOrder {
		if t == sp {
			s.toolOrder = append(s.toolOrder[:i:i], s.toolOrder[i+1:]...)
			break
		}
	}
	for id, t := range s.tools {
		if t == sp {
			delete(s.tools, id)
		}
	}
	s.outcome(sp, ok)
	s.endSpan(sp, at)
}

// outcome sets a tool span's status and counts the call.
func (s *session) outcome(sp *span, ok *bool) {
	result := "unknown"
	switch {
	case ok == nil:
	case *ok:
		result = "ok"
		sp.status = codes.Ok
	default:
		result = "error"
		sp.fail("tool_error", "the tool call failed")
	}
	name := ""
	for _, a := range sp.attrs {
		if a.Key == "gen_ai.tool.name" {
			name = a.Value.AsString()
		}
	}
	s.m.sink.metric(metricToolCalls, 1, attribute.String("gen_ai.tool.name", name), attribute.String("fr.outcome", result))
}

// endCalling ends the tool_calling span open. In a run it waits for its outcome, which the
// turn's agent_message brings; over a daemon no outcome comes.
func (s *session) endCalling(at time.Time) {
	sp := s.calling
	if sp == nil {
		return
	}
	s.calling = nil
	sp.end = at
	if s.kind == kindRun {
		s.pending = append(s.pending, sp)
		if len(s.pending) > maxHeld {
			s.flushPending()
		}
		return
	}
	s.outcome(sp, nil)
	s.endSpan(sp, at)
}

// outcomes gives a run's tool spans of the turn their outcome from agent_message.toolCalls,
// matched by name in order.
func (s *session) outcomes(msg *agentMessage) {
	used := make([]bool, len(msg.ToolCalls))
	for _, sp := range s.pending {
		var ok *bool
		name := ""
		for _, a := range sp.attrs {
			if a.Key == "gen_ai.tool.name" {
				name = a.Value.AsString()
			}
		}
		for i, tc := range msg.ToolCalls {
			if !used[i] && tc.Name == name {
				used[i], ok = true, tc.Succeeded
				break
			}
		}
		s.outcome(sp, ok)
		s.endSpan(sp, sp.end)
	}
	s.pending = s.pending[:0]
}

// flushPending ends a run's tool spans whose outcome did not come.
func (s *session) flushPending() {
	for _, sp := range s.pending {
		s.outcome(sp, nil)
		s.endSpan(sp, sp.end)
	}
	s.pending = s.pending[:0]
}

// resultOn puts a run's or task's outcome on its root.
func (s *session) resultOn(ev *event) {
	r := s.root
	if s.id == "" && ev.sessionID() != "" {
		s.id = ev.sessionID()
		r.set(attribute.String("gen_ai.conversation.id", s.id))
	}
	if ev.ExitCode != nil {
		r.set(attribute.Int("fr.exit_code", *ev.ExitCode))
	}
	if ev.LastAgent != "" {
		r.set(attribute.String("gen_ai.agent.name", ev.LastAgent))
	}
	if ev.Config != nil && s.kind == kindRun {
		r.set(attribute.String("fr.config", *ev.Config))
	}
	if ev.InputTokens != nil {
		r.set(attribute.Int64("gen_ai.usage.input_tokens", *ev.InputTokens))
	}
	if ev.OutputTokens != nil {
		r.set(attribute.Int64("gen_ai.usage.output_tokens", *ev.OutputTokens))
	}
	if ev.Task != nil && s.m.o.capture {
		r.set(attribute.String("fr.task", s.m.text(*ev.Task)))
	}
	outcome := "unknown"
	if ev.Succeeded != nil {
		outcome = "succeeded"
		if *ev.Succeeded {
			r.status = codes.Ok
		} else {
			outcome = "failed"
			msg := "failed"
			if ev.ErrorMessage != nil && *ev.ErrorMessage != "" {
				msg = s.m.o.red.String(cut(*ev.ErrorMessage, 1024))
			}
			r.fail("failed", msg)
		}
	}
	r.set(attribute.String("fr.outcome", outcome))
}

// close ends the session: what is open in it, then its root. incomplete says its end was not
// seen (the input ended, or another session began in its place).
func (s *session) close(at time.Time, incomplete bool) {
	if s.ended {
		return
	}
	s.endApproval(at)
	s.endTurn(at, "")
	s.flushPending()
	s.ended = true
	outcome := "unknown"
	for _, a := range s.root.attrs {
		if a.Key == "fr.outcome" {
			outcome = a.Value.AsString()
		}
	}
	if incomplete {
		s.root.set(attribute.Bool("fr.incomplete", true))
	}
	if s.kind == kindChat && !incomplete {
		outcome = "ended"
	}
	if s.usage.Input > 0 || s.usage.Output > 0 {
		if !hasAttr(s.root, "gen_ai.usage.input_tokens") {
			s.root.set(attribute.Int64("gen_ai.usage.input_tokens", s.usage.Input), attribute.Int64("gen_ai.usage.output_tokens", s.usage.Output))
		}
	}
	s.endSpan(s.root, at)
	s.m.sink.metric(metricSessions, 1, attribute.String("fr.session.kind", s.kind), attribute.String("fr.outcome", outcome))
}

func hasAttr(sp *span, key attribute.Key) bool {
	for _, a := range sp.attrs {
		if a.Key == key {
			return true
		}
	}
	return false
}

// log writes the event as a log record tied to the span it happened in.
func (in *input) log(s *session, ev *event, raw []byte, at time.Time, where *span) {
	rec := &logRecord{at: at, eventName: "fuseraft." + ev.Type, severity: log.SeverityInfo}
	switch ev.Type {
	case "error":
		rec.severity = log.SeverityError
	case "warning", "token_budget_warning", "cancelled":
		rec.severity = log.SeverityWarn
	case "result":
		if ev.Succeeded != nil && !*ev.Succeeded {
			rec.severity = log.SeverityError
		}
	}
	rec.attrs = append(rec.attrs, attribute.String("fr.event.type", ev.Type))
	if s != nil {
		rec.traceID = s.traceID
		if where != nil {
			rec.spanID = where.id
		}
		if s.id != "" {
			rec.attrs = append(rec.attrs, attribute.String("gen_ai.conversation.id", s.id))
		}
	}
	if in.m.o.capture {
		rec.body = in.m.text(string(raw))
	}
	in.m.sink.log(rec)
}

// text is content as it may be exported: redacted, then cut to maxCapture bytes.
func (m *mapper) text(s string) string {
	return cut(m.o.red.String(s), maxCapture)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && i > n-4 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// promptSummary is what an approval_request asks, in one line.
func promptSummary(ev *event) string {
	switch ev.Kind {
	case "shell_command":
		return ev.Command
	case "file_write":
		return ev.Action + " " + ev.Path
	case "tool_action":
		return ev.Plugin + "." + ev.Action + ": " + ev.Detail
	case "route_approval":
		return ev.SourceAgent + " -> " + ev.TargetAgent + " (" + ev.Keyword + ")"
	}
	return ""
}
