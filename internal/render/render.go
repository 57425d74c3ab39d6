// Package render shows fuseraft events to a person: the reply as it streams, tool calls as
// one-liners, prompts that stand out, diffs for file writes. Every command that renders for a
// terminal uses it.
//
// Streamed text (token, thinking, shell_output) is written as it arrives and wraps naturally;
// every other event is one line cut to the width with "…", or a short block. A prompt (an
// approval_request, a question) is never cut: what it asks about wraps onto as many lines as
// it needs, each starting with the prompt's bar; only a file write's diff is cut, saying how
// much is hidden (and, with Options.DiffMore, where to see it all). An open stream
// is always ended with a newline before another event is printed. Events are read leniently:
// a field of the wrong type never panics or fails, the event is shown in the neutral form
// used for unknown types (`· type {json}`). All text from the stream is sanitized first.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fuseraft/fr/internal/approvalprompt"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

// Options configure a Renderer.
type Options struct {
	Color      bool // ANSI colour (decide with cmdutil.UseColor)
	Width      int  // terminal width in columns; 0 means 80
	Timestamps bool // prefix lines with the time the event was rendered

	// DiffLines cuts the diff of a file_write prompt after this many lines; 0 means 200, a
	// negative value means no limit.
	DiffLines int
	// DiffMore says where to see a diff whole (a key, a command), shown under a diff that
	// was cut: "type d to see the whole diff".
	DiffMore string
	// Now is the clock for timestamps; nil means time.Now.
	Now func() time.Time
	// WrapStream breaks streamed text (a reply, thinking, shell output) into lines that fit
	// Width, at spaces, as it streams: for a terminal, whose own wrapping would split words.
	// A word that began near the end of a line and outgrows it is taken back (the cursor moves
	// back over it and clears it) and written again on the next line; a word longer than a
	// whole line breaks where the line ends.
	WrapStream bool
}

const (
	defaultWidth     = 80
	defaultDiffLines = 200
	// previewBytes bounds how much of a huge field is looked at for a one-line preview.
	previewBytes = 64 << 10
)

type streamKind uint8

const (
	streamNone streamKind = iota
	streamReply
	streamThinking
	streamShell
)

// Renderer renders a stream of events. It is not safe for concurrent use.
type Renderer struct {
	w     io.Writer
	opts  Options
	width int

	open    streamKind // the streamed text now open, if any
	atStart bool       // the open stream is at the start of a line
	later   bool       // the open stream is past its first line
	// with WrapStream: the columns used on the stream's row, where its text starts (after the
	// time and the kind's mark), and the word being written at its end
	col, rowStart int
	word          strings.Builder
	wordCols      int
	run           strings.Builder // streamed text not painted yet
	b             strings.Builder
}

// New returns a Renderer writing to w.
func New(w io.Writer, opts Options) *Renderer {
	width := opts.Width
	if width <= 0 {
		width = defaultWidth
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Renderer{w: w, opts: opts, width: width}
}

// Event renders one event. The only error it returns is the writer's.
func (r *Renderer) Event(ev wire.Event) error {
	r.b.Reset()
	r.event(ev)
	return r.flush()
}

// Note prints a line of the caller's own (a command's status, "detached", "sending…") in the
// renderer's voice: dim, cut to the width, after ending any open streamed text.
func (r *Renderer) Note(text string) error {
	r.b.Reset()
	r.line(sp(dim, "· "+oneLine(text)))
	return r.flush()
}

// Aside prints a line that is not part of the conversation (a stray line of fuseraft's
// output) whole and dim, after ending any open streamed text. It is made safe for a terminal
// here.
func (r *Renderer) Aside(text string) error {
	r.b.Reset()
	r.block(nil, "", dim, termsafe.Line(text))
	return r.flush()
}

// Close ends any text still open (a reply streamed without a final newline).
func (r *Renderer) Close() error {
	r.b.Reset()
	r.endStream()
	return r.flush()
}

func (r *Renderer) flush() error {
	if r.b.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(r.w, r.b.String())
	r.b.Reset()
	return err
}

// ---- styles ----------------------------------------------------------------------------

type style string

const (
	plain    style = ""
	dim      style = sgrDim
	bold     style = sgrBold
	red      style = sgrRed
	green    style = sgrGreen
	yellow   style = sgrYel
	blue     style = sgrBlue
	magenta  style = sgrMag
	cyan     style = sgrCyan
	boldRed  style = "\x1b[1;31m"
	boldYel  style = "\x1b[1;33m"
	boldMag  style = "\x1b[1;35m"
	boldCyan style = "\x1b[1;36m"
)

// span is a piece of a line in one style. Its text is already sanitized.
type span struct {
	s    style
	text string
}

func sp(s style, text string) span { return span{s, text} }

// ---- line output -----------------------------------------------------------------------

func (r *Renderer) stamp() string {
	if !r.opts.Timestamps {
		return ""
	}
	return r.opts.Now().Format("15:04:05") + " "
}

func (r *Renderer) paint(s style, text string) {
	if r.opts.Color && s != plain && text != "" {
		r.b.WriteString(string(s))
		r.b.WriteString(text)
		r.b.WriteString(sgrReset)
		return
	}
	r.b.WriteString(text)
}

// line prints one line of spans, cut to the width with "…".
func (r *Renderer) line(spans ...span) {
	r.endStream()
	left := r.width
	if ts := r.stamp(); ts != "" {
		r.paint(dim, ts)
		left -= StringWidth(ts)
	}
	for i, s := range spans {
		w := StringWidth(s.text)
		if w > left || (w == left && restWidth(spans[i+1:]) > 0) {
			r.paint(s.s, cutMarked(s.text[:fitBytes(s.text, left-1)], left))
			break
		}
		r.paint(s.s, s.text)
		left -= w
	}
	r.b.WriteByte('\n')
}

func restWidth(spans []span) int {
	w := 0
	for _, s := range spans {
		w += StringWidth(s.text)
	}
	return w
}

// fitBytes is the length of the longest prefix of s at most cols columns wide.
func fitBytes(s string, cols int) int {
	w := 0
	for i, rn := range s {
		rw := runeWidth(rn)
		if w+rw > cols {
			return i
		}
		w += rw
	}
	return len(s)
}

// block prints multi-line text (already sanitized, layout kept) after a first-line prefix,
// with later lines indented by indent. Lines are not cut: prose wraps naturally.
func (r *Renderer) block(first []span, indent string, s style, text string) {
	r.endStream()
	text = strings.TrimRight(text, "\n")
	lines := strings.Split(text, "\n")
	ts := r.stamp()
	for i, l := range lines {
		if ts != "" {
			if i == 0 {
				r.paint(dim, ts)
			} else {
				r.b.WriteString(strings.Repeat(" ", len(ts)))
			}
		}
		if i == 0 {
			for _, f := range first {
				r.paint(f.s, f.text)
			}
		} else if l != "" {
			r.b.WriteString(indent)
		}
		r.paint(s, strings.TrimSuffix(l, "\r"))
		r.b.WriteByte('\n')
	}
}

// ---- streamed text ---------------------------------------------------------------------

// stream appends streamed text of one kind. Text of another kind, or any line event, first
// ends the open stream with a newline.
func (r *Renderer) stream(kind streamKind, text string) {
	if text == "" {
		return
	}
	if r.open != kind {
		r.endStream()
		r.open = kind
		r.atStart = true
		r.later = false
		r.col, r.rowStart = 0, 0
		r.word.Reset()
		r.wordCols = 0
		if ts := r.stamp(); ts != "" {
			r.paint(dim, ts)
			r.col = StringWidth(ts)
		}
	}
	text = termsafe.Text(text)
	if r.opts.WrapStream {
		r.streamWrapped(kind, text)
		return
	}
	for text != "" {
		seg, rest, nl := strings.Cut(text, "\n")
		if r.atStart && (seg != "" || nl) {
			if r.later && r.opts.Timestamps {
				r.b.WriteString(strings.Repeat(" ", len(r.stamp()))) // under the first line's time
			}
			switch kind {
			case streamThinking:
				r.paint(dim, "┊ ")
			case streamShell:
				r.paint(dim, "│ ")
			}
		}
		switch kind {
		case streamThinking:
			r.paint(dim, seg)
		default:
			r.b.WriteString(seg)
		}
		if seg != "" {
			r.atStart = false
		}
		if nl {
			r.b.WriteByte('\n')
			r.atStart = true
			r.later = true
		}
		text = rest
	}
}

// streamWrapped is stream for a terminal (Options.WrapStream): lines break at spaces to fit
// the width, never inside a word that fits on a line.
func (r *Renderer) streamWrapped(kind streamKind, text string) {
	// The last column is left empty: a terminal that filled it waits to wrap, and moving the
	// cursor back from there is not the same on every terminal.
	avail := max(r.width-1, 1)
	for _, rn := range text {
		switch {
		case rn == '\n':
			r.streamPrefix(kind) // an empty line still gets its mark
			r.flushRun(kind)
			r.b.WriteByte('\n')
			r.atStart, r.later = true, true
			r.col = 0
			r.word.Reset()
			r.wordCols = 0
			continue
		case rn == ' ' || rn == '\t':
			r.streamPrefix(kind)
			w := 1
			if rn == '\t' {
				w = 8 - r.col%8
			}
			r.word.Reset()
			r.wordCols = 0
			if r.col+w > avail {
				// the line ends here: the space is where it breaks
				r.streamBreak(kind)
				continue
			}
			r.run.WriteRune(rn)
			r.col += w
			continue
		}
		r.streamPrefix(kind)
		rw := runeWidth(rn)
		if r.col+rw > avail {
			word := r.word.String()
			r.flushRun(kind)
			if r.wordCols > 0 && r.col-r.wordCols > r.rowStart && r.wordCols+rw <= avail-r.nextRowStart(kind) {
				// The word began on this line and fits on the next: take it back, and write it
				// there.
				fmt.Fprintf(&r.b, "\x1b[%dD\x1b[K", r.wordCols)
				r.streamBreak(kind)
				r.streamPrefix(kind)
				r.run.WriteString(word)
				r.col += r.wordCols
			} else {
				// A word longer than a line breaks where the line ends.
				r.streamBreak(kind)
				r.streamPrefix(kind)
				r.word.Reset()
				r.wordCols = 0
			}
		}
		r.run.WriteRune(rn)
		r.word.WriteRune(rn)
		r.col += rw
		r.wordCols += rw
	}
	r.flushRun(kind)
}

// streamPrefix starts a line of streamed text: under the first line's time, the kind's mark.
func (r *Renderer) streamPrefix(kind streamKind) {
	if !r.atStart {
		return
	}
	r.flushRun(kind)
	if r.later && r.opts.Timestamps {
		pad := strings.Repeat(" ", len(r.stamp()))
		r.b.WriteString(pad)
		r.col += len(pad)
	}
	switch kind {
	case streamThinking:
		r.paint(dim, "┊ ")
		r.col += 2
	case streamShell:
		r.paint(dim, "│ ")
		r.col += 2
	}
	r.rowStart = r.col
	r.atStart = false
}

// nextRowStart is the column where the text of the stream's next line starts.
func (r *Renderer) nextRowStart(kind streamKind) int {
	n := 0
	if r.opts.Timestamps {
		n = len(r.stamp())
	}
	if kind == streamThinking || kind == streamShell {
		n += 2
	}
	return n
}

// streamBreak ends a line of streamed text where it no longer fits.
func (r *Renderer) streamBreak(kind streamKind) {
	r.flushRun(kind)
	r.b.WriteByte('\n')
	r.atStart, r.later = true, true
	r.col = 0
}

// flushRun paints the streamed text not painted yet.
func (r *Renderer) flushRun(kind streamKind) {
	if r.run.Len() == 0 {
		return
	}
	if kind == streamThinking {
		r.paint(dim, r.run.String())
	} else {
		r.b.WriteString(r.run.String())
	}
	r.run.Reset()
}

func (r *Renderer) endStream() {
	if r.open != streamNone && !r.atStart {
		r.b.WriteByte('\n')
	}
	r.open = streamNone
}

// ---- events ----------------------------------------------------------------------------

func (r *Renderer) event(ev wire.Event) {
	typ := ev.Type
	o, ok := parseObj(ev.Raw)
	if ok && typ == "" {
		_ = json.Unmarshal(o.m["type"], &typ) // an event made by hand may leave Type unset
	}
	if !ok {
		r.neutral(typ, ev.Raw)
		return
	}
	h, known := handlers[typ]
	if !known {
		r.neutral(typ, ev.Raw)
		return
	}
	// A handler reads every field first and returns what it would print; a field of the
	// wrong type anywhere shows the whole event neutrally instead.
	out := h(r, o)
	if o.bad {
		r.neutral(typ, ev.Raw)
		return
	}
	if out != nil {
		out()
	}
}

// neutral is the form for unknown and malformed events: `· type {compact json}`.
func (r *Renderer) neutral(typ string, raw []byte) {
	name := oneLine(typ)
	if name == "" {
		name = "event"
	}
	r.line(sp(dim, "· "), sp(dim, name+" "), sp(dim, termsafe.Line(compactJSON(raw, r.width*4+64))))
}

type handler func(r *Renderer, o *obj) func()

var handlers map[string]handler

// Types are the event types the renderer has a handler for (every type of the protocol page,
// inputs included), sorted.
func Types() []string {
	out := make([]string, 0, len(handlers))
	for t := range handlers {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

func init() {
	handlers = map[string]handler{
		wire.TypeReady:              (*Renderer).ready,
		wire.TypeHello:              (*Renderer).hello,
		wire.TypeTurnStart:          (*Renderer).turnStart,
		wire.TypeToken:              (*Renderer).token,
		wire.TypeThinking:           (*Renderer).thinking,
		wire.TypeToolCall:           (*Renderer).toolCall,
		wire.TypeToolResult:         (*Renderer).toolResult,
		wire.TypeFileChanged:        (*Renderer).fileChanged,
		wire.TypeFileChanges:        (*Renderer).fileChanges,
		wire.TypeMessageEnd:         (*Renderer).messageEnd,
		wire.TypeCancelled:          (*Renderer).cancelled,
		wire.TypeRetrying:           (*Renderer).retrying,
		wire.TypeInterjection:       (*Renderer).interjection,
		wire.TypeStatus:             (*Renderer).status,
		wire.TypeCompacted:          (*Renderer).compacted,
		wire.TypePlan:               (*Renderer).plan,
		wire.TypeStepStatus:         (*Renderer).stepStatus,
		wire.TypeShellStart:         (*Renderer).shellStart,
		wire.TypeShellOutput:        (*Renderer).shellOutput,
		wire.TypeShellEnd:           (*Renderer).shellEnd,
		wire.TypeReplay:             (*Renderer).replay,
		wire.TypeTitle:              (*Renderer).title,
		wire.TypeApplied:            (*Renderer).applied,
		wire.TypeCopy:               (*Renderer).copyText,
		wire.TypeText:               (*Renderer).text,
		wire.TypeInfo:               (*Renderer).message,
		wire.TypeWarning:            (*Renderer).message,
		wire.TypeError:              (*Renderer).message,
		wire.TypeSessEnd:            (*Renderer).sessionEnd,
		wire.TypeAgentStarting:      (*Renderer).agentStarting,
		wire.TypeToolCalling:        (*Renderer).toolCalling,
		wire.TypeTokenBudgetWarning: (*Renderer).tokenBudgetWarning,
		wire.TypeAgentMessage:       (*Renderer).agentMessage,
		wire.TypeResult:             (*Renderer).result,
		wire.TypeQueued:             (*Renderer).queued,
		wire.TypeAutoDispatched:     (*Renderer).autoDispatched,
		wire.TypeA2ACall:            (*Renderer).a2aCall,
		wire.TypeTaskResumed:        (*Renderer).taskResumed,
		wire.TypeApproval:           (*Renderer).approvalRequest,
		wire.TypeQuestion:           (*Renderer).question,
		// Inputs are rendered too, for streams that record both directions.
		wire.TypeUserInput:        (*Renderer).userInput,
		wire.TypeApprovalResponse: (*Renderer).approvalResponse,
		wire.TypeQuestionResponse: (*Renderer).questionResponse,
		wire.TypeInterrupt:        (*Renderer).interrupt,
	}
}

func sep() span { return sp(dim, " · ") }

// quoted is a one-line, sanitized string in double quotes.
func quoted(s string) string { return "“" + oneLine(s) + "”" }

// handshake

func (r *Renderer) ready(o *obj) func() {
	version := o.int("protocolVersion")
	session := o.str("sessionId")
	model := o.str("model")
	title, hasTitle := o.strp("title")
	auto, _ := o.strp("autoTitle")
	task := o.str("task")
	config, _ := o.strp("config")
	resumed := o.boolean("resumed")
	agents := o.strs("agents")
	o.strs("midTurnCommands") // checked for its type only
	isRun := o.has("task") || o.has("agents") || o.has("resumed")
	return func() {
		spans := []span{sp(boldCyan, "▶ ")}
		if isRun {
			spans = append(spans, sp(bold, "run"))
			if resumed {
				spans = append(spans, sp(bold, " (resumed)"))
			}
			if task != "" {
				spans = append(spans, sp(plain, " "+quoted(task)))
			}
			if config != "" {
				spans = append(spans, sep(), sp(plain, oneLine(config)))
			}
			if len(agents) > 0 {
				spans = append(spans, sep(), sp(magenta, oneLine(strings.Join(agents, ", "))))
			}
		} else {
			spans = append(spans, sp(bold, "chat"))
			if !hasTitle {
				title = auto
			}
			if title != "" {
				spans = append(spans, sp(plain, " "+quoted(title)))
			}
			if model != "" {
				spans = append(spans, sep(), sp(plain, oneLine(model)))
			}
		}
		if session != "" {
			spans = append(spans, sep(), sp(dim, "session "+oneLine(session)))
		}
		if version != 1 {
			spans = append(spans, sep(), sp(yellow, fmt.Sprintf("protocol %d", version)))
		}
		r.line(spans...)
	}
}

func (r *Renderer) hello(o *obj) func() {
	version := o.int("protocolVersion")
	client, hasClient := o.strp("clientId")
	readOnly := o.boolean("readOnly")
	inFlight, hasInFlight := o.sub("inFlight")
	var ifTask, ifStatus, ifSession string
	var ifPos int
	var hasPos bool
	if hasInFlight {
		ifTask = inFlight.str("task")
		ifStatus = inFlight.str("status")
		ifSession = inFlight.str("sessionId")
		ifPos, hasPos = inFlight.intp("position")
		o.bad = o.bad || inFlight.bad
	}
	pending := o.strs("pendingResults")
	return func() {
		spans := []span{sp(boldCyan, "▶ "), sp(bold, "attached")}
		if hasClient {
			spans = append(spans, sp(plain, " as "+oneLine(client)))
		}
		if readOnly {
			spans = append(spans, sep(), sp(yellow, "read-only"))
		}
		if version != 1 {
			spans = append(spans, sep(), sp(yellow, fmt.Sprintf("protocol %d", version)))
		}
		if len(pending) > 0 {
			spans = append(spans, sep(), sp(plain, fmt.Sprintf("%d %s waiting", len(pending), plural(len(pending), "result", "results"))))
		}
		r.line(spans...)
		if hasInFlight {
			s := []span{sp(cyan, "  ⋯ "), sp(plain, "in flight: "+quoted(ifTask))}
			if ifStatus != "" {
				s = append(s, sep(), sp(plain, oneLine(ifStatus)))
			}
			if hasPos {
				s = append(s, sep(), sp(plain, aheadString(ifPos)))
			}
			if ifSession != "" {
				s = append(s, sep(), sp(dim, "session "+oneLine(ifSession)))
			}
			r.line(s...)
		}
	}
}

func aheadString(pos int) string {
	if pos <= 0 {
		return "next up"
	}
	return fmt.Sprintf("%d ahead", pos)
}

// turn events

func (r *Renderer) turnStart(o *obj) func() {
	text := o.str("text")
	return func() {
		if strings.TrimSpace(text) != "" {
			r.block([]span{sp(boldCyan, "› ")}, "  ", bold, termsafe.Text(text))
		}
	}
}

func (r *Renderer) token(o *obj) func() {
	text := o.str("text")
	return func() { r.stream(streamReply, text) }
}

func (r *Renderer) thinking(o *obj) func() {
	text := o.str("text")
	return func() { r.stream(streamThinking, text) }
}

func (r *Renderer) toolCall(o *obj) func() {
	name := o.str("name")
	summary := o.str("summary")
	agent, hasAgent := o.strp("agent")
	args := o.m["args"]
	hasArgs := o.has("args")
	return func() {
		spans := []span{sp(cyan, "→ ")}
		if hasAgent && agent != "" {
			spans = append(spans, sp(magenta, "["+oneLine(agent)+"] "))
		}
		spans = append(spans, sp(bold, oneLine(name)))
		switch {
		case strings.TrimSpace(summary) != "":
			spans = append(spans, sp(plain, " "+oneLine(summary)))
		case hasArgs:
			spans = append(spans, sp(dim, " "+termsafe.Line(compactJSON(args, r.width*4+64))))
		}
		if hasArgs && len(args) > 1024 {
			spans = append(spans, sp(dim, " ("+sizeString(len(args))+" args)"))
		}
		r.line(spans...)
	}
}

func (r *Renderer) toolResult(o *obj) func() {
	name := o.str("name")
	ok := o.boolean("ok")
	output := o.str("output")
	return func() {
		mark, ms := "✓ ", green
		if !ok {
			mark, ms = "✗ ", red
		}
		spans := []span{sp(ms, mark), sp(bold, oneLine(name)), sp(dim, " "+outputSize(output))}
		if p := preview(output); p != "" {
			s := dim
			if !ok {
				s = red
			}
			spans = append(spans, sep(), sp(s, p))
		}
		r.line(spans...)
	}
}

// outputSize is "no output", "1 line, 12 B" or "120 lines, 3.1 KiB".
func outputSize(s string) string {
	if s == "" {
		return "no output"
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return fmt.Sprintf("%s %s, %s", commas(n), plural(n, "line", "lines"), sizeString(len(s)))
}

// preview is the first non-blank line of s, for a one-liner.
func preview(s string) string {
	if len(s) > previewBytes {
		s = s[:previewBytes]
	}
	for l := range strings.SplitSeq(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return termsafe.Line(t)
		}
	}
	return ""
}

func (r *Renderer) fileChanged(o *obj) func() {
	path := o.str("path")
	sigil := o.str("sigil")
	added := o.int("added")
	removed := o.int("removed")
	return func() {
		spans := []span{sp(yellow, "✎ ")}
		if sigil != "" {
			spans = append(spans, sp(yellow, oneLine(sigil)+" "))
		}
		spans = append(spans, sp(plain, oneLine(path)+" "), sp(green, fmt.Sprintf("+%d", added)), sp(plain, " "), sp(red, fmt.Sprintf("-%d", removed)))
		r.line(spans...)
	}
}

func (r *Renderer) fileChanges(o *obj) func() {
	var changes []struct {
		Sigil *string `json:"sigil"`
		Path  *string `json:"path"`
	}
	o.decode("changes", &changes)
	return func() {
		n := len(changes)
		spans := []span{sp(yellow, "✎ "), sp(plain, fmt.Sprintf("%d %s changed", n, plural(n, "file", "files")))}
		for i, c := range changes {
			if i == 0 {
				spans = append(spans, sp(plain, ": "))
			} else {
				spans = append(spans, sp(plain, ", "))
			}
			if c.Sigil != nil && *c.Sigil != "" {
				spans = append(spans, sp(yellow, oneLine(*c.Sigil)+" "))
			}
			if c.Path != nil {
				spans = append(spans, sp(plain, oneLine(*c.Path)))
			}
		}
		r.line(spans...)
	}
}

func (r *Renderer) messageEnd(o *obj) func() {
	turn := o.int("turnIndex")
	calls := o.arrayLen("toolCalls")
	in, hasIn := o.intp("inputTokens")
	out, hasOut := o.intp("outputTokens")
	cached, hasCached := o.intp("cachedInputTokens")
	return func() {
		parts := []string{fmt.Sprintf("turn %d", turn)}
		if hasIn || hasOut {
			t := commas(in) + " in / " + commas(out) + " out"
			if hasCached && cached > 0 {
				t += " (" + commas(cached) + " cached)"
			}
			parts = append(parts, t)
		}
		if calls > 0 {
			parts = append(parts, fmt.Sprintf("%d tool %s", calls, plural(calls, "call", "calls")))
		}
		r.line(sp(dim, "— "+strings.Join(parts, " · ")))
	}
}

func (r *Renderer) cancelled(o *obj) func() {
	return func() { r.line(sp(yellow, "✗ "), sp(yellow, "cancelled")) }
}

func (r *Renderer) retrying(o *obj) func() {
	attempt := o.int("attempt")
	max := o.int("max")
	return func() {
		r.line(sp(yellow, "↻ "), sp(yellow, fmt.Sprintf("stream dropped, retrying (%d/%d)", attempt, max)))
	}
}

func (r *Renderer) interjection(o *obj) func() {
	status := o.str("status")
	count := o.int("count")
	return func() {
		msgs := fmt.Sprintf("%d %s", count, plural(count, "message", "messages"))
		var what string
		switch status {
		case "joined":
			what = msgs + " joined the reply"
		case "carried":
			what = msgs + " carried to the next turn"
		case "dropped":
			what = msgs + " dropped"
		default:
			what = msgs + " " + oneLine(status)
		}
		s := cyan
		if status == "dropped" {
			s = yellow
		}
		r.line(sp(s, "↪ "), sp(s, what))
	}
}

func (r *Renderer) status(o *obj) func() {
	model := o.str("model")
	turn := o.int("turn")
	ctx := o.num("context")
	level := o.str("level")
	modes := o.strs("modes")
	in, out, cached := o.int("input"), o.int("output"), o.int("cached")
	return func() {
		head := "◦ "
		if model != "" {
			head += oneLine(model) + " · "
		}
		head += fmt.Sprintf("turn %d · ", turn)
		c := fmt.Sprintf("context %.0f%%", ctx*100)
		if level != "" {
			c += " " + oneLine(level)
		}
		cs := dim
		switch level {
		case "warning", "warn", "high":
			cs = yellow
		case "critical", "error", "full":
			cs = red
		}
		tail := ""
		if len(modes) > 0 {
			tail += " · " + oneLine(strings.Join(modes, ", "))
		}
		tail += " · " + commas(in) + " in · " + commas(out) + " out · " + commas(cached) + " cached"
		r.line(sp(dim, head), sp(cs, c), sp(dim, tail))
	}
}

func (r *Renderer) compacted(o *obj) func() {
	return func() { r.line(sp(cyan, "⟲ "), sp(dim, "history compacted into a summary")) }
}

func (r *Renderer) plan(o *obj) func() {
	steps := o.strs("steps")
	return func() {
		r.line(sp(boldCyan, "☰ "), sp(bold, fmt.Sprintf("plan, %d %s", len(steps), plural(len(steps), "step", "steps"))))
		for i, s := range steps {
			r.line(sp(dim, fmt.Sprintf("  %d. ", i+1)), sp(plain, oneLine(s)))
		}
	}
}

func (r *Renderer) stepStatus(o *obj) func() {
	step := o.int("step")
	total := o.int("total")
	status := o.str("status")
	left := o.int("stepsLeft")
	return func() {
		s := cyan
		mark := "☰ "
		switch status {
		case "done", "completed", "complete", "succeeded":
			s, mark = green, "✓ "
		case "failed", "error":
			s, mark = red, "✗ "
		case "skipped":
			s = dim
		}
		spans := []span{sp(s, mark), sp(plain, fmt.Sprintf("step %d/%d", step, total))}
		if status != "" {
			spans = append(spans, sp(s, " "+oneLine(status)))
		}
		spans = append(spans, sep(), sp(dim, fmt.Sprintf("%d left", left)))
		r.line(spans...)
	}
}

func (r *Renderer) shellStart(o *obj) func() {
	cmd := o.str("command")
	return func() { r.line(sp(boldYel, "$ "), sp(bold, oneLine(cmd))) }
}

func (r *Renderer) shellOutput(o *obj) func() {
	text := o.str("text")
	return func() { r.stream(streamShell, text) }
}

func (r *Renderer) shellEnd(o *obj) func() {
	return func() { r.line(sp(dim, "└ shell done")) }
}

func (r *Renderer) replay(o *obj) func() {
	total := o.int("total")
	compacted := o.boolean("compacted")
	var turns []struct {
		User      *string           `json:"user"`
		Assistant *string           `json:"assistant"`
		ToolCalls []json.RawMessage `json:"toolCalls"`
	}
	o.decode("turns", &turns)
	return func() {
		h := fmt.Sprintf("replaying %d earlier %s", total, plural(total, "turn", "turns"))
		if compacted {
			h += " (older ones compacted)"
		}
		r.line(sp(cyan, "⟲ "), sp(dim, h))
		for _, t := range turns {
			if t.User != nil && strings.TrimSpace(*t.User) != "" {
				r.line(sp(cyan, "  › "), sp(plain, oneLine(*t.User)))
			}
			if t.Assistant != nil && strings.TrimSpace(*t.Assistant) != "" {
				spans := []span{sp(dim, "  ‹ "), sp(dim, oneLine(preview(*t.Assistant)))}
				if n := len(t.ToolCalls); n > 0 {
					spans = append(spans, sp(dim, fmt.Sprintf(" (%d tool %s)", n, plural(n, "call", "calls"))))
				}
				r.line(spans...)
			}
		}
	}
}

func (r *Renderer) title(o *obj) func() {
	session := o.str("sessionId")
	title, hasTitle := o.strp("title")
	auto, hasAuto := o.strp("autoTitle")
	return func() {
		spans := []span{sp(cyan, "✦ ")}
		switch {
		case hasTitle:
			spans = append(spans, sp(bold, quoted(title)))
		case hasAuto:
			spans = append(spans, sp(bold, quoted(auto)))
		default:
			spans = append(spans, sp(dim, "untitled"))
		}
		if session != "" {
			spans = append(spans, sep(), sp(dim, "session "+oneLine(session)))
		}
		r.line(spans...)
	}
}

func (r *Renderer) applied(o *obj) func() {
	cmd := o.str("command")
	msg := o.str("message")
	return func() {
		spans := []span{sp(green, "✓ "), sp(bold, oneLine(cmd))}
		if strings.TrimSpace(msg) != "" {
			spans = append(spans, sp(plain, ": "+oneLine(msg)))
		}
		r.line(spans...)
	}
}

func (r *Renderer) copyText(o *obj) func() {
	text := o.str("text")
	return func() {
		r.line(sp(cyan, "⧉ "), sp(dim, "to copy: "), sp(plain, oneLine(text)))
	}
}

func (r *Renderer) text(o *obj) func() {
	text := o.str("text")
	return func() {
		if strings.TrimSpace(text) == "" {
			return
		}
		// Pre-rendered Markdown may carry colour codes of its own: drop those, show any other
		// escape.
		text := termsafe.Text(stripSGR(text))
		if r.underBar(text) {
			return
		}
		r.block(nil, "", plain, text)
	}
}

// underBar shows text whose every line starts with a prompt's bar (what a pipeline adds under
// a prompt: the decision a policy made) as the prompt's own lines are shown: each wrapped
// under the bar, never cut, rather than left for the terminal to wrap past it. It reports
// whether it did.
func (r *Renderer) underBar(text string) bool {
	bar := promptBar()
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, bar.text) {
			return false
		}
	}
	for _, l := range lines {
		r.wrapped(bar, nil, "  ", sp(plain, strings.TrimPrefix(l, bar.text)))
	}
	return true
}

func (r *Renderer) message(o *obj) func() {
	text := o.str("text")
	typ := o.str("type")
	return func() {
		mark, label, s, ts := "ℹ ", "", blue, plain
		switch typ {
		case "warning":
			mark, label, s, ts = "⚠ ", "warning: ", boldYel, yellow
		case "error":
			mark, label, s, ts = "✗ ", "error: ", boldRed, red
		}
		r.block([]span{sp(s, mark), sp(s, label)}, "  ", ts, termsafe.Text(strings.TrimSpace(text)))
	}
}

func (r *Renderer) sessionEnd(o *obj) func() {
	return func() { r.line(sp(dim, "■ session ended")) }
}

// run and daemon events

func (r *Renderer) agentStarting(o *obj) func() {
	agent := o.str("agent")
	return func() { r.line(sp(boldMag, "● "), sp(boldMag, oneLine(agent)), sp(dim, " is starting")) }
}

func (r *Renderer) toolCalling(o *obj) func() {
	agent := o.str("agent")
	tool := o.str("tool")
	args := o.str("argsSummary")
	return func() {
		spans := []span{sp(cyan, "→ ")}
		if agent != "" {
			spans = append(spans, sp(magenta, "["+oneLine(agent)+"] "))
		}
		spans = append(spans, sp(bold, oneLine(tool)))
		if strings.TrimSpace(args) != "" {
			spans = append(spans, sp(plain, " "+oneLine(args)))
		}
		r.line(spans...)
	}
}

func (r *Renderer) tokenBudgetWarning(o *obj) func() {
	agent := o.str("agent")
	in := o.int("inputTokens")
	warn := o.int("warnThreshold")
	return func() {
		r.line(sp(yellow, "⚠ "), sp(magenta, oneLine(agent)), sp(yellow, fmt.Sprintf(" is at %s input tokens (warning at %s)", commas(in), commas(warn))))
	}
}

func (r *Renderer) agentMessage(o *obj) func() {
	msg, _ := o.sub("message")
	elapsed := o.num("elapsedMs")
	if msg == nil {
		msg = &obj{m: nil}
	}
	agent := msg.str("agentName")
	role := msg.str("role")
	content := msg.str("content")
	turn := msg.int("turnIndex")
	in, hasIn := msg.intp("inputTokens")
	out, hasOut := msg.intp("outputTokens")
	summary := msg.boolean("isCompactionSummary")
	var calls []struct {
		Name        *string `json:"name"`
		ArgsSummary *string `json:"argsSummary"`
		Succeeded   *bool   `json:"succeeded"`
	}
	msg.decode("toolCalls", &calls)
	o.bad = o.bad || msg.bad
	return func() {
		switch {
		case agent == "Orchestrator":
			// Routing corrections: most people do not need them, so one dim line.
			r.line(sp(dim, "· Orchestrator: "+oneLine(preview(content))))
			return
		case summary:
			r.line(sp(cyan, "⟲ "), sp(dim, fmt.Sprintf("%s: compaction summary (%s)", oneLine(agent), sizeString(len(content)))))
			return
		case role == "user" || agent == "Human":
			r.block([]span{sp(boldCyan, "› "), sp(bold, oneLine(agent)+": ")}, "  ", plain, termsafe.Text(strings.TrimSpace(content)))
			return
		}
		meta := []string{fmt.Sprintf("turn %d", turn)}
		if elapsed > 0 {
			meta = append(meta, durString(elapsed/1000))
		}
		if hasIn || hasOut {
			meta = append(meta, commas(in)+" in / "+commas(out)+" out")
		}
		r.line(sp(boldMag, "● "), sp(boldMag, oneLine(agent)), sp(dim, " · "+strings.Join(meta, " · ")))
		for _, c := range calls {
			ok := c.Succeeded == nil || *c.Succeeded
			mark, s := "  ✓ ", green
			if !ok {
				mark, s = "  ✗ ", red
			}
			spans := []span{sp(s, mark)}
			if c.Name != nil {
				spans = append(spans, sp(bold, oneLine(*c.Name)))
			}
			if c.ArgsSummary != nil && *c.ArgsSummary != "" {
				spans = append(spans, sp(dim, " "+oneLine(*c.ArgsSummary)))
			}
			r.line(spans...)
		}
		if strings.TrimSpace(content) != "" {
			r.block(nil, "", plain, termsafe.Text(strings.TrimSpace(content)))
		}
	}
}

func durString(sec float64) string {
	switch {
	case sec < 0:
		return "0s"
	case sec < 10:
		return fmt.Sprintf("%.1fs", sec)
	case sec < 60:
		return fmt.Sprintf("%.0fs", sec)
	case sec < 3600:
		return fmt.Sprintf("%dm%02ds", int(sec)/60, int(sec)%60)
	}
	return fmt.Sprintf("%dh%02dm", int(sec)/3600, int(sec)%3600/60)
}

func (r *Renderer) result(o *obj) func() {
	session, hasSession := o.strp("sessionId")
	task := o.str("task")
	ok := o.boolean("succeeded")
	errMsg, hasErr := o.strp("errorMessage")
	if o.has("exitCode") || o.has("turns") || o.has("elapsedSeconds") {
		// run --bridge
		exit := o.int("exitCode")
		turns := o.int("turns")
		elapsed := o.num("elapsedSeconds")
		in, out := o.int("inputTokens"), o.int("outputTokens")
		return func() {
			mark, s, what := "✓ ", boldGreen, "run succeeded"
			if !ok {
				mark, s, what = "✗ ", boldRed, "run failed"
			}
			spans := []span{sp(s, mark), sp(s, what), sp(dim, fmt.Sprintf(" · exit %d · %d %s · %s · %s in / %s out", exit, turns, plural(turns, "turn", "turns"), durString(elapsed), commas(in), commas(out)))}
			if hasSession {
				spans = append(spans, sp(dim, " · session "+oneLine(session)))
			}
			r.line(spans...)
			if hasErr && strings.TrimSpace(errMsg) != "" {
				r.block([]span{sp(red, "  ")}, "  ", red, termsafe.Text(strings.TrimSpace(errMsg)))
			}
		}
	}
	lastAgent, _ := o.strp("lastAgent")
	last, hasLast := o.strp("lastMessage")
	return func() {
		mark, s, what := "✓ ", boldGreen, "done"
		if !ok {
			mark, s, what = "✗ ", boldRed, "failed"
		}
		spans := []span{sp(s, mark), sp(s, what)}
		if task != "" {
			spans = append(spans, sp(plain, " "+quoted(task)))
		}
		if session != "" {
			spans = append(spans, sep(), sp(dim, "session "+oneLine(session)))
		}
		r.line(spans...)
		if hasErr && strings.TrimSpace(errMsg) != "" {
			r.block([]span{sp(red, "  ")}, "  ", red, termsafe.Text(strings.TrimSpace(errMsg)))
		}
		if hasLast && strings.TrimSpace(last) != "" {
			first := []span{sp(plain, "  ")}
			if lastAgent != "" {
				first = append(first, sp(boldMag, oneLine(lastAgent)+": "))
			}
			r.block(first, "  ", plain, termsafe.Text(strings.TrimSpace(last)))
		}
	}
}

const boldGreen style = "\x1b[1;32m"

func (r *Renderer) queued(o *obj) func() {
	session := o.str("sessionId")
	pos, hasPos := o.intp("position")
	return func() {
		spans := []span{sp(cyan, "⋯ "), sp(plain, "queued")}
		if hasPos {
			spans = append(spans, sep(), sp(plain, aheadString(pos)))
		}
		if session != "" {
			spans = append(spans, sep(), sp(dim, "session "+oneLine(session)))
		}
		r.line(spans...)
	}
}

func (r *Renderer) autoDispatched(o *obj) func() {
	session := o.str("sessionId")
	objective := o.str("objectiveId")
	task := o.str("task")
	return func() {
		spans := []span{sp(boldCyan, "▶ "), sp(plain, "auto-dispatched "+quoted(task))}
		if objective != "" {
			spans = append(spans, sep(), sp(dim, "objective "+oneLine(objective)))
		}
		if session != "" {
			spans = append(spans, sep(), sp(dim, "session "+oneLine(session)))
		}
		r.line(spans...)
	}
}

func (r *Renderer) a2aCall(o *obj) func() {
	agent := o.str("agent")
	session := o.str("sessionId")
	return func() {
		spans := []span{sp(cyan, "⇄ "), sp(plain, "A2A call to "), sp(magenta, oneLine(agent))}
		if session != "" {
			spans = append(spans, sep(), sp(dim, "session "+oneLine(session)))
		}
		r.line(spans...)
	}
}

func (r *Renderer) taskResumed(o *obj) func() {
	session := o.str("sessionId")
	task := o.str("task")
	return func() {
		spans := []span{sp(yellow, "↻ "), sp(plain, "resumed after a daemon restart: "+quoted(task))}
		if session != "" {
			spans = append(spans, sep(), sp(dim, "session "+oneLine(session)))
		}
		r.line(spans...)
	}
}

// prompts

// Prompts are never cut: what they ask about wraps onto as many lines as it needs, each
// starting with the bar. Only a file write's diff is cut, with a note of how much is hidden.

// promptBar starts every line of a approvalprompt.
func promptBar() span { return sp(boldYel, "┃ ") }

// wrapIndent indents the lines a long line of a prompt wraps onto, past the text's own indent,
// so that a wrapped line never reads as a line of its own.
const wrapIndent = "    "

func (r *Renderer) approvalRequest(o *obj) func() {
	// Read through the protocol package, so what is shown is what a client would answer.
	req, err := wire.DecodeApprovalRequest(o.raw)
	return func() {
		bar := promptBar()
		head := func(what string, rest ...span) {
			r.wrapped(bar, nil, wrapIndent, append([]span{sp(boldYel, "approve? "), sp(bold, what)}, rest...)...)
		}
		raw := func() { r.rawPrompt(bar, o.raw) }
		if err != nil {
			head("malformed request", sp(dim, " (deny it)"))
			raw()
			return
		}
		switch req.Kind {
		case wire.KindShellCommand:
			head("shell command")
			r.promptBody(bar, "$ ", req.Command)
		case wire.KindToolAction:
			head("tool action", sp(plain, " "+oneLineWhole(req.Plugin)+"."+oneLineWhole(req.Action)))
			if strings.TrimSpace(req.Detail) != "" {
				r.promptBody(bar, "  ", req.Detail)
			}
		case wire.KindFileWrite:
			diff, add, del, cut := r.diff(req)
			what := "write"
			if req.OldContent == "" {
				what = "new file"
			}
			rest := []span{sp(plain, " "+oneLineWhole(req.Path)+" "), sp(green, fmt.Sprintf("+%d", add)), sp(plain, " "), sp(red, fmt.Sprintf("-%d", del))}
			if req.Plugin != "" || req.Action != "" {
				rest = append(rest, sp(dim, " via "+oneLineWhole(req.Plugin)+"."+oneLineWhole(req.Action)))
			}
			head(what, rest...)
			r.diffLines(bar, diff)
			if cut && r.opts.DiffMore != "" {
				r.wrapped(bar, nil, "  ", sp(dim, "  "+r.opts.DiffMore))
			}
		case wire.KindRouteApproval:
			rest := []span{sp(plain, " "), sp(magenta, oneLineWhole(req.SourceAgent)), sp(plain, " → "), sp(magenta, oneLineWhole(req.TargetAgent))}
			if req.Keyword != "" {
				rest = append(rest, sp(dim, " on “"+oneLineWhole(req.Keyword)+"”"))
			}
			head("handoff", rest...)
		default:
			head("unknown kind “"+oneLineWhole(req.Kind)+"”", sp(dim, " (deny unless you know it)"))
			raw()
		}
	}
}

// rawPromptBytes bounds the event shown whole under a prompt the renderer cannot read.
const rawPromptBytes = 16 << 10

// rawPrompt shows the event of a prompt that is malformed or of an unknown kind, wrapped whole
// up to rawPromptBytes, saying how much more there is.
func (r *Renderer) rawPrompt(bar span, raw []byte) {
	s := compactJSON(raw, rawPromptBytes)
	spans := []span{sp(dim, termsafe.Line(s))}
	if len(s) >= rawPromptBytes && len(raw) > rawPromptBytes {
		spans = append(spans, sp(dim, " … (an event of "+sizeString(len(raw))+")"))
	}
	r.wrapped(bar, nil, wrapIndent, spans...)
}

// oneLineWhole is oneLine for the subject of a prompt: the whole string on one line, however
// long (oneLine looks at a preview of a huge field only).
func oneLineWhole(s string) string {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return termsafe.Line(s)
}

// promptBody prints the body of a prompt (a command, a detail) under the bar, every line of
// it, the first after prefix, each wrapped whole.
func (r *Renderer) promptBody(bar span, prefix, text string) {
	text = strings.TrimRight(termsafe.Text(text), "\n")
	indent := strings.Repeat(" ", StringWidth(prefix))
	for i, l := range strings.Split(text, "\n") {
		p := indent
		if i == 0 {
			p = prefix
		}
		r.wrapped(bar, []span{sp(bold, p)}, indent+wrapIndent, sp(plain, expandTabs(strings.TrimSuffix(l, "\r"))))
	}
}

func (r *Renderer) diff(req *wire.ApprovalRequest) (diff string, added, removed int, cut bool) {
	limit := r.opts.DiffLines
	switch {
	case limit == 0:
		limit = defaultDiffLines
	case limit < 0:
		limit = 0
	}
	width := r.width - 2 - StringWidth(r.stamp())
	return unifiedDiff(req.Path, req.OldContent, req.NewContent, DiffOptions{Color: r.opts.Color, MaxLines: limit, Width: max(width, 1)})
}

// diffLines prints a diff under the prompt's bar.
func (r *Renderer) diffLines(bar span, d string) {
	ts := r.stamp()
	for l := range strings.SplitSeq(strings.TrimSuffix(d, "\n"), "\n") {
		if ts != "" {
			r.paint(dim, ts)
		}
		r.paint(bar.s, bar.text)
		r.b.WriteString(l)
		r.b.WriteByte('\n')
	}
}

func (r *Renderer) question(o *obj) func() {
	q := o.str("question")
	options := o.strs("options")
	other := o.boolean("allowOther")
	if o.bad {
		// Still a prompt waiting for an answer: keep it highlighted, show it whole.
		o.bad = false
		return func() {
			bar := promptBar()
			r.wrapped(bar, nil, wrapIndent, sp(boldYel, "question: "), sp(bold, "malformed"), sp(dim, " (skip it)"))
			r.rawPrompt(bar, o.raw)
		}
	}
	return func() {
		bar := promptBar()
		for i, l := range strings.Split(termsafe.Text(strings.TrimSpace(q)), "\n") {
			// prose: wrapped lines align with the text
			first := []span{sp(boldYel, "question: ")}
			if i > 0 {
				first = []span{sp(plain, "          ")}
			}
			r.wrapped(bar, first, "          ", sp(bold, expandTabs(strings.TrimSuffix(l, "\r"))))
		}
		for i, opt := range options {
			n := fmt.Sprintf("  %d) ", i+1)
			r.wrapped(bar, []span{sp(cyan, n)}, strings.Repeat(" ", len(n)), sp(plain, oneLineWhole(opt)))
		}
		if other {
			r.wrapped(bar, nil, "  ", sp(dim, "  or type an answer of your own"))
		}
	}
}

// inputs

func (r *Renderer) userInput(o *obj) func() {
	text := o.str("text")
	images := o.arrayLen("images")
	return func() {
		first := []span{sp(boldCyan, "› ")}
		if images > 0 {
			first = append(first, sp(dim, fmt.Sprintf("[%d %s] ", images, plural(images, "image", "images"))))
		}
		r.block(first, "  ", bold, termsafe.Text(strings.TrimSpace(text)))
	}
}

func (r *Renderer) approvalResponse(o *obj) func() {
	approved := o.boolean("approved")
	return func() {
		if approved {
			r.line(sp(boldYel, "┃ "), sp(green, approvalprompt.Outcome(true)))
		} else {
			r.line(sp(boldYel, "┃ "), sp(red, approvalprompt.Outcome(false)))
		}
	}
}

func (r *Renderer) questionResponse(o *obj) func() {
	answer, has := o.strp("answer")
	return func() {
		if !has {
			r.line(sp(boldYel, "┃ "), sp(dim, "skipped"))
			return
		}
		r.line(sp(boldYel, "┃ "), sp(plain, "answer: "+quoted(answer)))
	}
}

func (r *Renderer) interrupt(o *obj) func() {
	return func() { r.line(sp(yellow, "✗ "), sp(yellow, "interrupt sent")) }
}
