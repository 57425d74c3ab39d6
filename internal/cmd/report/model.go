package report

import (
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/prices"
	"github.com/fuseraft/fr/internal/redact"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/pkg/wire"
)

// ReportVersion is the version of the JSON model; it changes only when a field changes meaning
// or goes away.
const ReportVersion = 1

// Outcomes of a session and of the whole report.
const (
	Succeeded  = "succeeded"
	Failed     = "failed"
	Unfinished = "unfinished" // the stream ended before the task or run did
	Ended      = "ended"      // a chat that ended (a chat neither passes nor fails)
	Empty      = "empty"      // the input held no session at all
)

// Decisions of a prompt.
const (
	Allow   = "allow"
	Deny    = "deny"
	Unknown = "unknown" // no audit record says: an approval_response is not in a session stream
)

// Bounds that keep the report's memory small whatever the size of the session. What goes past
// one is counted, never silently lost.
const (
	maxText            = 16 << 10 // one transcript entry, summary or message
	redactMargin       = 16 << 10 // text kept past maxText until redacted, so a cut never splits a secret
	maxTranscript      = 4000     // transcript entries
	maxTranscriptBytes = 8 << 20
	maxApprovals       = 5000
	maxQuestions       = 2000
	maxFiles           = 5000
	maxSessions        = 2000
	maxAgents          = 200
	maxTypes           = 200
	maxDiffLines       = 300
	maxDiffBytes       = 4 << 20 // all diffs together
)

// Report is the model every format is rendered from, and what --format json prints.
type Report struct {
	ReportVersion int          `json:"reportVersion"`
	Outcome       string       `json:"outcome"`
	Sessions      []*Session   `json:"sessions"`
	Tokens        prices.Usage `json:"tokens"`
	CostUSD       *float64     `json:"costUSD"`
	// Unpriced lists the models with tokens but no price (and no default) in --prices.
	Unpriced  []string    `json:"unpriced,omitempty"`
	Approvals []*Approval `json:"approvals"`
	Questions []*Question `json:"questions"`
	Files     []*File     `json:"files"`
	Audit     *AuditInfo  `json:"audit"`
	// Audits lists each audit chain read, when there are several (Audit is their sum).
	Audits []*AuditInfo `json:"audits,omitempty"`
	Input  Input        `json:"input"`
	// Transcript is the session as it went, for the html format.
	Transcript []*Entry `json:"transcript"`
	// Omitted counts what did not fit the report's bounds, by what it was.
	Omitted  map[string]int `json:"omitted,omitempty"`
	Redacted bool           `json:"redacted"`
	// Limits are the report's totals against the --max-* limits given, in the order of the flags.
	Limits []*Limit `json:"limits,omitempty"`
}

// Limit is one --max-* limit against the report's total: turns, tokens (input + output),
// seconds or USD. Used is nil when the total is not known (a cost without --prices); Past is
// true when the total went over the limit.
type Limit struct {
	Limit string   `json:"limit"` // max-turns, max-tokens, max-duration, max-cost
	Max   float64  `json:"max"`
	Used  *float64 `json:"used"`
	Past  bool     `json:"past"`
}

// Session is one task (daemon), run (run --bridge) or chat (repl).
type Session struct {
	Kind         string       `json:"kind"` // task, run, chat
	ID           string       `json:"sessionId"`
	Task         string       `json:"task"`
	Title        string       `json:"title,omitempty"` // a chat's title (or the title made for it)
	Config       string       `json:"config,omitempty"`
	Model        string       `json:"model,omitempty"`
	Outcome      string       `json:"outcome"`
	Error        string       `json:"errorMessage,omitempty"`
	ExitCode     *int         `json:"exitCode,omitempty"`
	Agents       []string     `json:"agents"`
	Turns        int          `json:"turns"`
	ToolCalls    int          `json:"toolCalls"`
	Seconds      *float64     `json:"durationSeconds"`
	Tokens       prices.Usage `json:"tokens"`
	CostUSD      *float64     `json:"costUSD"`
	LastAgent    string       `json:"lastAgent,omitempty"`
	LastMessage  string       `json:"lastMessage,omitempty"`
	Approvals    int          `json:"approvals"`
	Refused      int          `json:"refused"`
	Resumed      bool         `json:"resumed,omitempty"`
	elapsedMs    int64
	msgTokens    prices.Usage
	resultTokens *prices.Usage
	runSeconds   float64
	done         bool
}

// Approval is one approval_request with what decided it.
type Approval struct {
	Seq      int    `json:"seq"` // 1-based, in the order the prompts came
	Session  string `json:"sessionId,omitempty"`
	Kind     string `json:"kind"`
	Summary  string `json:"summary"`
	Path     string `json:"path,omitempty"`
	Added    int    `json:"added,omitempty"`
	Removed  int    `json:"removed,omitempty"`
	Diff     string `json:"diff,omitempty"`
	Decision string `json:"decision"`          // allow, deny, unknown
	Decider  string `json:"decider,omitempty"` // rule, person, timeout, no-tty, default, malformed
	Rule     string `json:"rule,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Time     string `json:"time,omitempty"`
}

// Question is one question prompt and its answer.
type Question struct {
	Seq      int      `json:"seq"`
	Session  string   `json:"sessionId,omitempty"`
	Question string   `json:"question"`
	Options  []string `json:"options"`
	Decision string   `json:"decision"` // answer, skip, unknown
	Answer   *string  `json:"answer"`
	Decider  string   `json:"decider,omitempty"`
	Rule     string   `json:"rule,omitempty"`
}

// File is one file the session changed, or was allowed (or maybe allowed) to write.
type File struct {
	Path     string `json:"path"`
	Sigil    string `json:"sigil,omitempty"`
	Added    int    `json:"added"`
	Removed  int    `json:"removed"`
	Decision string `json:"decision,omitempty"` // for a file_write prompt: allow or unknown
}

// AuditInfo says what the audit log gave. With several --audit files, or several logs joined
// in one file, Report.Audit is their sum (File lists the files) and Report.Audits has one for
// each chain, each verified on its own.
type AuditInfo struct {
	File     string `json:"file"`
	Chain    int    `json:"chain,omitempty"`    // of several in File: which, from 1
	FromLine int    `json:"fromLine,omitempty"` // of several in File: the line it starts at
	Records  int    `json:"records"`
	Matched  int    `json:"matched"`
	Last     string `json:"last,omitempty"` // hash of its last line
}

// Input counts the lines read.
type Input struct {
	Files     []string    `json:"files"`
	Lines     int64       `json:"lines"`
	Events    int64       `json:"events"`
	Noise     int64       `json:"noise"`     // not JSON: skipped
	OtherJSON int64       `json:"otherJSON"` // JSON that is not an event: skipped
	Malformed int64       `json:"malformed"` // events whose fields are not of their types: skipped
	Unknown   []TypeCount `json:"unknownTypes"`
}

// TypeCount is an event type this build does not know and how often it came.
type TypeCount struct {
	Type  string `json:"type"`
	Count int64  `json:"count"`
}

// Entry is one step of the transcript.
type Entry struct {
	Kind    string `json:"kind"` // user, reply, thinking, agent, tool, output, prompt, question, message, file, result
	Session int    `json:"session"`
	Agent   string `json:"agent,omitempty"`
	Title   string `json:"title,omitempty"`
	Text    string `json:"text,omitempty"`
	OK      *bool  `json:"ok,omitempty"`
	Ref     int    `json:"ref,omitempty"` // the Seq of a prompt or question
}

// builder reads events into a Report.
type builder struct {
	r         *Report
	red       *redact.Redactor
	prices    *prices.Table
	cur       *Session
	byID      map[string]*Session
	audits    []*auditChain
	inputs    []string // the person's messages from --input-log, in order, not yet shown
	files     map[string]*File
	unknown   map[string]*TypeCount
	open      *Entry // the reply or thinking text being streamed
	openBuf   strings.Builder
	openDrop  bool
	textBytes int
	diffBytes int
	seq       int

	anyVersion    bool
	warnedVersion bool
	versionErr    error
	warn          func(string)
}

func newBuilder(red *redact.Redactor, pt *prices.Table) *builder {
	return &builder{
		r:       &Report{ReportVersion: ReportVersion, Redacted: red != nil, Omitted: map[string]int{}},
		red:     red,
		prices:  pt,
		byID:    map[string]*Session{},
		files:   map[string]*File{},
		unknown: map[string]*TypeCount{},
	}
}

func (b *builder) omit(what string) { b.r.Omitted[what]++ }

// text makes outside text fit the report: redacted first, then cut to n bytes.
func (b *builder) text(s string, n int) string {
	if len(s) > n+redactMargin {
		s = cutUTF8(s, n+redactMargin)
	}
	s = b.red.String(s)
	if len(s) > n {
		s = cutUTF8(s, n) + "… (" + strconv.Itoa(len(s)-n) + " bytes more)"
	}
	return s
}

func cutUTF8(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// session returns the session events now belong to, starting one when there is none.
func (b *builder) session() *Session {
	if b.cur == nil || b.cur.done {
		b.cur = b.start("task", "")
	}
	return b.cur
}

func (b *builder) start(kind, id string) *Session {
	if id != "" {
		if s := b.byID[id]; s != nil && !s.done {
			b.cur = s
			return s
		}
	}
	s := &Session{Kind: kind, ID: b.text(id, 200), Outcome: Unfinished, Agents: []string{}}
	if kind == "chat" {
		s.Outcome = Unfinished
	}
	if len(b.r.Sessions) >= maxSessions {
		b.omit("sessions")
	} else {
		b.r.Sessions = append(b.r.Sessions, s)
	}
	if id != "" {
		b.byID[id] = s
	}
	b.cur = s
	return s
}

func (b *builder) sessionIndex(s *Session) int {
	for i := len(b.r.Sessions) - 1; i >= 0; i-- {
		if b.r.Sessions[i] == s {
			return i
		}
	}
	return -1
}

func (s *Session) addAgent(name string) {
	if name == "" || name == "Orchestrator" {
		return
	}
	for _, a := range s.Agents {
		if a == name {
			return
		}
	}
	if len(s.Agents) < maxAgents {
		s.Agents = append(s.Agents, name)
	}
}

// entry adds a transcript entry, unless the transcript is full.
func (b *builder) entry(e *Entry) {
	b.closeStream()
	b.addEntry(e)
}

func (b *builder) addEntry(e *Entry) {
	if len(b.r.Transcript) >= maxTranscript || b.textBytes+len(e.Text) > maxTranscriptBytes {
		b.omit("transcript entries")
		return
	}
	if b.cur != nil {
		e.Session = b.sessionIndex(b.cur)
	}
	b.textBytes += len(e.Text)
	b.r.Transcript = append(b.r.Transcript, e)
}

// stream adds streamed text (token, thinking) to the open entry of its kind.
func (b *builder) stream(kind, text string) {
	if b.open != nil && b.open.Kind != kind {
		b.closeStream()
	}
	if b.open == nil {
		b.open = &Entry{Kind: kind}
		b.openBuf.Reset()
		b.openDrop = false
	}
	if b.openBuf.Len()+len(text) > maxText+redactMargin {
		b.openDrop = true
		return
	}
	b.openBuf.WriteString(text)
}

func (b *builder) closeStream() {
	if b.open == nil {
		return
	}
	e := b.open
	b.open = nil
	e.Text = b.text(b.openBuf.String(), maxText)
	if b.openDrop && !strings.HasSuffix(e.Text, "more)") {
		e.Text += "…"
	}
	b.addEntry(e)
}

func ptr[T any](v T) *T { return &v }

// event reads one event into the model. A field of the wrong type makes the event malformed:
// it is counted and skipped.
func (b *builder) event(ev wire.Event) {
	b.r.Input.Events++
	if ev.Type == wire.TypeReady || ev.Type == wire.TypeHello {
		b.checkVersion(ev)
	}
	if h := eventHandlers[ev.Type]; h != nil {
		h(b, ev)
		return
	}
	if shownNowhere[ev.Type] {
		return
	}
	t := b.unknown[ev.Type]
	if t == nil {
		if len(b.unknown) >= maxTypes {
			b.omit("unknown types")
			return
		}
		t = &TypeCount{Type: b.text(ev.Type, 200)}
		b.unknown[ev.Type] = t
	}
	t.Count++
}

// eventHandlers read each type of event the report shows into the model.
var eventHandlers map[string]func(*builder, wire.Event)

func init() {
	eventHandlers = map[string]func(*builder, wire.Event){
		wire.TypeReady:              decoded((*builder).ready),
		wire.TypeHello:              decoded((*builder).hello),
		wire.TypeQueued:             decoded(func(b *builder, v *wire.Queued) { b.start("task", v.SessionID) }),
		wire.TypeAutoDispatched:     decoded((*builder).autoDispatched),
		wire.TypeTaskResumed:        decoded((*builder).taskResumed),
		wire.TypeA2ACall:            decoded((*builder).a2aCall),
		wire.TypeAgentStarting:      decoded(func(b *builder, v *wire.AgentStarting) { b.session().addAgent(b.text(v.Agent, 200)) }),
		wire.TypeToolCalling:        decoded((*builder).toolCalling),
		wire.TypeTokenBudgetWarning: decoded((*builder).tokenBudgetWarning),
		wire.TypeAgentMessage:       decoded((*builder).agentMessage),
		wire.TypeResult:             (*builder).result,
		wire.TypeTurnStart:          decoded((*builder).turnStart),
		wire.TypeTitle:              decoded((*builder).title),
		wire.TypeToken:              decoded(func(b *builder, v *wire.Token) { b.session(); b.stream("reply", v.Text) }),
		wire.TypeThinking:           decoded(func(b *builder, v *wire.Token) { b.session(); b.stream("thinking", v.Text) }),
		wire.TypeToolCall:           decoded((*builder).toolCall),
		wire.TypeToolResult:         decoded((*builder).toolResult),
		wire.TypeFileChanged:        decoded((*builder).fileChanged),
		wire.TypeFileChanges:        decoded((*builder).fileChanges),
		wire.TypeMessageEnd:         decoded((*builder).messageEnd),
		wire.TypeStatus:             decoded((*builder).status),
		wire.TypeApproval:           func(b *builder, ev wire.Event) { b.approval(ev.Raw) },
		wire.TypeQuestion:           decoded(func(b *builder, v *wire.Question) { b.question(*v) }),
		wire.TypeText:               (*builder).message,
		wire.TypeInfo:               (*builder).message,
		wire.TypeWarning:            (*builder).message,
		wire.TypeError:              (*builder).message,
		wire.TypeSessEnd:            func(b *builder, _ wire.Event) { b.sessionEnd() },
		wire.TypeCancelled: func(b *builder, _ wire.Event) {
			b.session()
			b.entry(&Entry{Kind: "message", Title: "cancelled", Text: "the turn was interrupted"})
		},
	}
}

// shownNowhere are the types of events the report knows and does not show.
var shownNowhere = map[string]bool{
	wire.TypeShellStart: true, wire.TypeShellOutput: true, wire.TypeShellEnd: true, wire.TypeRetrying: true,
	wire.TypeInterjection: true, wire.TypeCompacted: true, wire.TypePlan: true, wire.TypeStepStatus: true,
	wire.TypeReplay: true, wire.TypeApplied: true, wire.TypeCopy: true, wire.TypeUserInput: true,
	wire.TypeApprovalResponse: true, wire.TypeQuestionResponse: true, wire.TypeInterrupt: true,
}

// decoded makes a handler that decodes an event into a T before apply reads it into the
// model: one that does not decode is counted malformed and skipped.
func decoded[T any](apply func(*builder, *T)) func(*builder, wire.Event) {
	return func(b *builder, ev wire.Event) {
		var v T
		if ev.Decode(&v) != nil {
			b.r.Input.Malformed++
			return
		}
		apply(b, &v)
	}
}

func (b *builder) ready(v *wire.Ready) {
	kind := "chat"
	if v.Task != "" || v.Agents != nil || v.Config != nil {
		kind = "run"
	}
	s := b.start(kind, v.SessionID)
	s.Task = b.text(v.Task, maxText)
	s.Model = b.text(v.Model, 200)
	b.setTitle(s, v.Title, v.AutoTitle)
	s.Resumed = v.Resumed
	if v.Config != nil {
		s.Config = b.text(*v.Config, 1000)
	}
	for _, a := range v.Agents {
		s.addAgent(b.text(a, 200))
	}
}

func (b *builder) hello(v *wire.Hello) {
	if v.InFlight != nil {
		s := b.start("task", v.InFlight.SessionID)
		s.Task = b.text(v.InFlight.Task, maxText)
	}
}

func (b *builder) autoDispatched(v *wire.AutoDispatched) {
	s := b.start("task", v.SessionID)
	s.Task = b.text(v.Task, maxText)
}

func (b *builder) taskResumed(v *wire.TaskResumed) {
	s := b.start("task", v.SessionID)
	s.Task, s.Resumed = b.text(v.Task, maxText), true
}

func (b *builder) a2aCall(v *wire.A2ACall) {
	s := b.start("task", v.SessionID)
	s.addAgent(b.text(v.Agent, 200))
}

func (b *builder) toolCalling(v *wire.ToolCalling) {
	s := b.session()
	s.ToolCalls++
	s.addAgent(b.text(v.Agent, 200))
	b.entry(&Entry{Kind: "tool", Agent: b.text(v.Agent, 200), Title: b.text(v.Tool, 200), Text: b.text(v.ArgsSummary, maxText)})
}

func (b *builder) tokenBudgetWarning(v *wire.TokenBudgetWarning) {
	b.session()
	b.entry(&Entry{Kind: "message", Title: "warning", Agent: b.text(v.Agent, 200),
		Text: "token budget: " + strconv.Itoa(v.InputTokens) + " input tokens, warned at " + strconv.Itoa(v.WarnThreshold)})
}

func (b *builder) agentMessage(v *wire.AgentMessageEvent) {
	s := b.session()
	m := v.Message
	s.addAgent(b.text(m.AgentName, 200))
	s.Turns++
	s.elapsedMs += v.ElapsedMs
	if m.InputTokens != nil {
		s.msgTokens.Input += int64(*m.InputTokens)
	}
	if m.OutputTokens != nil {
		s.msgTokens.Output += int64(*m.OutputTokens)
	}
	text := m.Content
	for _, tc := range m.ToolCalls {
		mark := "✓"
		if !tc.Succeeded {
			mark = "✗"
		}
		text += "\n" + mark + " " + tc.Name + " " + tc.ArgsSummary
	}
	b.entry(&Entry{Kind: "agent", Agent: b.text(m.AgentName, 200), Title: m.Role, Text: b.text(text, maxText)})
}

func (b *builder) turnStart(v *wire.TurnStart) {
	s := b.session()
	text := v.Text
	if s.Kind == "chat" && len(b.inputs) > 0 {
		// the person's message, from --input-log: fuseraft's turn_start does not carry it
		if text == "" {
			text = b.inputs[0]
		}
		b.inputs = b.inputs[1:]
	}
	if text != "" {
		b.entry(&Entry{Kind: "user", Text: b.text(text, maxText)})
	}
}

func (b *builder) title(v *wire.Title) {
	s := b.byID[v.SessionID]
	if s == nil {
		s = b.session()
	}
	b.setTitle(s, v.Title, v.AutoTitle)
}

func (b *builder) toolCall(v *wire.ToolCall) {
	s := b.session()
	s.ToolCalls++
	agent := ""
	if v.Agent != nil {
		agent = b.text(*v.Agent, 200)
	}
	b.entry(&Entry{Kind: "tool", Agent: agent, Title: b.text(v.Name, 200), Text: b.text(v.Summary, maxText)})
}

func (b *builder) toolResult(v *wire.ToolResult) {
	b.session()
	b.entry(&Entry{Kind: "output", Title: b.text(v.Name, 200), OK: ptr(v.OK), Text: b.text(v.Output, maxText)})
}

func (b *builder) fileChanged(v *wire.FileChanged) {
	b.session()
	f := b.file(v.Path)
	if f != nil {
		f.Sigil, f.Added, f.Removed, f.Decision = b.text(v.Sigil, 10), f.Added+v.Added, f.Removed+v.Removed, ""
	}
	b.entry(&Entry{Kind: "file", Title: b.text(v.Sigil, 10), Text: b.text(v.Path, 4096) + " +" + strconv.Itoa(v.Added) + " -" + strconv.Itoa(v.Removed)})
}

func (b *builder) fileChanges(v *wire.FileChanges) {
	b.session()
	for _, c := range v.Changes {
		if f := b.file(c.Path); f != nil && f.Sigil == "" {
			f.Sigil = b.text(c.Sigil, 10)
		}
	}
}

func (b *builder) messageEnd(v *wire.MessageEnd) {
	s := b.session()
	b.closeStream()
	s.Turns++
	if v.InputTokens != nil {
		s.msgTokens.Input += int64(*v.InputTokens)
	}
	if v.OutputTokens != nil {
		s.msgTokens.Output += int64(*v.OutputTokens)
	}
	if v.CachedInputTokens != nil {
		s.msgTokens.Cached += int64(*v.CachedInputTokens)
	}
}

func (b *builder) status(v *wire.Status) {
	if s := b.session(); s.Model == "" {
		s.Model = b.text(v.Model, 200)
	}
}

// message reads text, info, warning and error events.
func (b *builder) message(ev wire.Event) {
	var v wire.Message
	if ev.Decode(&v) != nil {
		b.r.Input.Malformed++
		return
	}
	b.session()
	b.entry(&Entry{Kind: "message", Title: ev.Type, Text: b.text(v.Text, maxText)})
}

// sessionEnd ends the session being read (a chat as Ended).
func (b *builder) sessionEnd() {
	if b.cur != nil && !b.cur.done {
		b.closeStream()
		if b.cur.Kind == "chat" {
			b.cur.Outcome = Ended
		}
		b.cur.done = true
	}
}

// result reads the result of a run (run --bridge) or of a task (the daemon), which share a type.
func (b *builder) result(ev wire.Event) {
	var v struct {
		SessionID      *string  `json:"sessionId"`
		Task           string   `json:"task"`
		Config         *string  `json:"config"`
		Succeeded      bool     `json:"succeeded"`
		ErrorMessage   *string  `json:"errorMessage"`
		ExitCode       *int     `json:"exitCode"`
		Turns          *int     `json:"turns"`
		ElapsedSeconds *float64 `json:"elapsedSeconds"`
		InputTokens    *int64   `json:"inputTokens"`
		OutputTokens   *int64   `json:"outputTokens"`
		LastAgent      *string  `json:"lastAgent"`
		LastMessage    *string  `json:"lastMessage"`
	}
	if err := json.Unmarshal(ev.Raw, &v); err != nil {
		b.r.Input.Malformed++
		return
	}
	b.closeStream()
	var s *Session
	id := ""
	if v.SessionID != nil {
		id = *v.SessionID
	}
	if id != "" && b.byID[id] != nil && !b.byID[id].done {
		s = b.byID[id]
	} else if b.cur != nil && !b.cur.done && (id == "" || b.cur.ID == "") {
		s = b.cur
	} else {
		kind := "task"
		if v.ExitCode != nil {
			kind = "run"
		}
		s = b.start(kind, id)
	}
	b.cur = s
	if v.ExitCode != nil {
		s.Kind = "run"
	}
	if s.ID == "" {
		s.ID = b.text(id, 200)
	}
	if v.Task != "" {
		s.Task = b.text(v.Task, maxText)
	}
	if v.Config != nil && s.Config == "" {
		s.Config = b.text(*v.Config, 1000)
	}
	s.Outcome = Failed
	if v.Succeeded {
		s.Outcome = Succeeded
	}
	if v.ErrorMessage != nil {
		s.Error = b.text(*v.ErrorMessage, maxText)
	}
	s.ExitCode = v.ExitCode
	if v.Turns != nil && *v.Turns > s.Turns {
		s.Turns = *v.Turns
	}
	if v.ElapsedSeconds != nil {
		s.runSeconds = *v.ElapsedSeconds
	}
	if v.InputTokens != nil || v.OutputTokens != nil {
		u := prices.Usage{}
		if v.InputTokens != nil {
			u.Input = *v.InputTokens
		}
		if v.OutputTokens != nil {
			u.Output = *v.OutputTokens
		}
		s.resultTokens = &u
	}
	if v.LastAgent != nil {
		s.LastAgent = b.text(*v.LastAgent, 200)
		s.addAgent(s.LastAgent)
	}
	if v.LastMessage != nil {
		s.LastMessage = b.text(*v.LastMessage, maxText)
	}
	s.done = true
	text := s.Outcome
	if s.Error != "" {
		text += ": " + s.Error
	} else if s.LastMessage != "" {
		text += ": " + s.LastMessage
	}
	b.entry(&Entry{Kind: "result", Title: s.Outcome, Agent: s.LastAgent, Text: text, OK: ptr(v.Succeeded)})
}

// setTitle names a chat by its title, else the one made for it, when either is given.
func (b *builder) setTitle(s *Session, title, auto *string) {
	switch {
	case title != nil && *title != "":
		s.Title = b.text(*title, 1000)
	case auto != nil && *auto != "":
		s.Title = b.text(*auto, 1000)
	}
}

func (b *builder) file(path string) *File {
	if f := b.files[path]; f != nil {
		return f
	}
	if len(b.files) >= maxFiles {
		b.omit("files")
		return nil
	}
	f := &File{Path: b.text(path, 4096)}
	b.files[path] = f
	b.r.Files = append(b.r.Files, f)
	return f
}

func (b *builder) approval(raw []byte) {
	s := b.session()
	b.seq++
	a := &Approval{Seq: b.seq, Session: s.ID, Decision: Unknown}
	req, err := wire.DecodeApprovalRequest(raw)
	if err != nil {
		a.Kind, a.Summary = "malformed", "malformed approval_request"
	} else {
		a.Kind, a.Summary = b.text(req.Kind, 200), b.text(req.Summary(), maxText)
		if req.Kind == wire.KindFileWrite {
			a.Path = b.text(req.Path, 4096)
			a.Added, a.Removed = render.DiffStat(req.OldContent, req.NewContent)
			if b.diffBytes < maxDiffBytes {
				a.Diff = b.text(render.UnifiedDiff(req.Path, req.OldContent, req.NewContent, render.DiffOptions{MaxLines: maxDiffLines}), 256<<10)
				b.diffBytes += len(a.Diff)
			} else {
				b.omit("diffs")
			}
		}
	}
	// fr-approve recorded the summary as it was, before any redaction
	summary := "malformed approval_request"
	if err == nil {
		summary = req.Summary()
	}
	if rec := b.matchAudit(wire.TypeApproval, summary, s); rec != nil {
		a.Decision, a.Decider, a.Rule = b.text(rec.Decision, 20), b.text(rec.Decider, 200), b.text(rec.Rule, 1000)
		a.Reason, a.Time = b.text(rec.Reason, maxText), rec.Time
	}
	s.Approvals++
	if a.Decision == Deny {
		s.Refused++
	}
	if req != nil && req.Kind == wire.KindFileWrite && a.Decision != Deny {
		if f := b.file(req.Path); f != nil && f.Sigil == "" {
			f.Added, f.Removed, f.Decision = a.Added, a.Removed, a.Decision
			if req.OldContent == "" {
				f.Sigil = "+"
			} else {
				f.Sigil = "~"
			}
		}
	}
	if len(b.r.Approvals) >= maxApprovals {
		b.omit("approvals")
	} else {
		b.r.Approvals = append(b.r.Approvals, a)
	}
	b.entry(&Entry{Kind: "prompt", Title: a.Kind, Text: a.Summary, Ref: a.Seq})
}

func (b *builder) question(v wire.Question) {
	s := b.session()
	b.seq++
	q := &Question{Seq: b.seq, Session: s.ID, Question: b.text(v.Question, maxText), Options: []string{}, Decision: Unknown}
	for _, o := range v.Options {
		q.Options = append(q.Options, b.text(o, 1000))
	}
	if rec := b.matchAudit(wire.TypeQuestion, "question: "+v.Question, s); rec != nil {
		q.Decision, q.Decider, q.Rule = b.text(rec.Decision, 20), b.text(rec.Decider, 200), b.text(rec.Rule, 1000)
		if rec.Answer != nil {
			q.Answer = ptr(b.text(*rec.Answer, maxText))
		}
	}
	if len(b.r.Questions) >= maxQuestions {
		b.omit("questions")
	} else {
		b.r.Questions = append(b.r.Questions, q)
	}
	b.entry(&Entry{Kind: "question", Text: q.Question, Ref: q.Seq})
}

// finish works out the totals once every event is read.
func (b *builder) finish() *Report {
	b.closeStream()
	b.auditTotals()
	r := b.r
	for _, t := range b.unknown {
		r.Input.Unknown = append(r.Input.Unknown, *t)
	}
	sort.Slice(r.Input.Unknown, func(i, j int) bool { return r.Input.Unknown[i].Type < r.Input.Unknown[j].Type })
	if r.Input.Unknown == nil {
		r.Input.Unknown = []TypeCount{}
	}
	var total float64
	priced := false
	unpriced := map[string]bool{}
	failed, unfinished := false, false
	for _, s := range r.Sessions {
		s.Tokens = s.msgTokens
		if s.resultTokens != nil && (s.resultTokens.Input > 0 || s.resultTokens.Output > 0) {
			s.Tokens.Input, s.Tokens.Output = s.resultTokens.Input, s.resultTokens.Output
		}
		switch {
		case s.runSeconds > 0:
			s.Seconds = ptr(s.runSeconds)
		case s.elapsedMs > 0:
			s.Seconds = ptr(float64(s.elapsedMs) / 1000)
		}
		r.Tokens = r.Tokens.Add(s.Tokens)
		if b.prices != nil {
			if c, ok := b.prices.Cost(s.Model, s.Tokens); ok {
				s.CostUSD = ptr(c)
				total += c
				priced = true
			} else if !s.Tokens.Zero() {
				name := s.Model
				if name == "" {
					name = "(model not named in the stream)"
				}
				unpriced[name] = true
			}
		}
		switch s.Outcome {
		case Failed:
			failed = true
		case Unfinished:
			unfinished = true
		}
	}
	if priced {
		r.CostUSD = ptr(total)
	}
	for m := range unpriced {
		r.Unpriced = append(r.Unpriced, m)
	}
	sort.Strings(r.Unpriced)
	switch {
	case len(r.Sessions) == 0:
		r.Outcome = Empty
	case failed:
		r.Outcome = Failed
	case unfinished:
		r.Outcome = Unfinished
	default:
		r.Outcome = Succeeded
	}
	// Refused first, then those nobody can say, then the allowed; each in the order they came.
	rank := map[string]int{Deny: 0, Unknown: 1, Allow: 2}
	sort.SliceStable(r.Approvals, func(i, j int) bool { return rank[r.Approvals[i].Decision] < rank[r.Approvals[j].Decision] })
	if r.Approvals == nil {
		r.Approvals = []*Approval{}
	}
	if r.Questions == nil {
		r.Questions = []*Question{}
	}
	if r.Files == nil {
		r.Files = []*File{}
	}
	if r.Transcript == nil {
		r.Transcript = []*Entry{}
	}
	if r.Sessions == nil {
		r.Sessions = []*Session{}
	}
	if len(r.Omitted) == 0 {
		r.Omitted = nil
	}
	if b.red != nil {
		redactAll(r, b.red.String)
	}
	return r
}

// Refused returns the approvals that were denied.
func (r *Report) Refused() []*Approval {
	var out []*Approval
	for _, a := range r.Approvals {
		if a.Decision == Deny {
			out = append(out, a)
		}
	}
	return out
}

// Failed reports whether the session's outcome is anything but success: a task or run that
// failed or never finished, or no task at all.
func (r *Report) Failed() bool { return r.Outcome != Succeeded }

// SetLimits puts the report's totals against lim.
func (r *Report) SetLimits(lim budget.Limits) {
	var turns int64
	var secs float64
	for _, s := range r.Sessions {
		turns += int64(s.Turns)
		if s.Seconds != nil {
			secs += *s.Seconds
		}
	}
	add := func(name string, max float64, used *float64) {
		if max <= 0 {
			return
		}
		r.Limits = append(r.Limits, &Limit{Limit: name, Max: max, Used: used, Past: used != nil && *used > max})
	}
	add("max-turns", float64(lim.Turns), ptr(float64(turns)))
	add("max-tokens", float64(lim.Tokens), ptr(float64(r.Tokens.Input+r.Tokens.Output)))
	add("max-duration", lim.Duration.Seconds(), ptr(secs))
	add("max-cost", lim.CostUSD, r.CostUSD)
}

func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
