package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/fuseraft/fr/pkg/wire"
)

// Peer is the client side of a session as the player sees it.
type Peer interface {
	// Emit writes one event line (already encoded, without a line end).
	Emit(line []byte) error
	// Ask writes the prompt event line, then returns the NEXT input line the client sends, as
	// fuseraft reads it: whatever it is, it is consumed as the answer. It returns ctx.Err()
	// when ctx ends first, and an error such as io.EOF when the client is gone (a denial).
	Ask(ctx context.Context, prompt []byte) (answer []byte, err error)
}

// Hanger is a Peer that can drop its client's connection (the hangup step). Peers that
// cannot (stdio) ignore the step.
type Hanger interface {
	Hangup() error
}

// Outcome is what playing some steps did.
type Outcome struct {
	Events    int            // events emitted
	Emitted   map[string]int // events emitted, by type
	ToolCalls []string       // names of the tool_call events, in order (message_end's toolCalls)
	Text      string         // the streamed reply (token texts), up to 100,000 characters
	Approved  int            // prompts answered yes (questions answered count here too)
	Denied    int            // prompts denied, skipped or answered with anything else

	Cancelled bool    // ctx ended (an interrupt): the caller sends cancelled or a failed result
	Crash     *Crash  // the process must die now, as described
	Failed    *string // a fail step: the run or task failed with this message
	Result    *Result // result steps: the fields they fixed, later ones over earlier
	Hangup    bool    // a hangup step dropped the connection
}

// Ended reports whether the steps stopped early.
func (o *Outcome) Ended() bool {
	return o.Cancelled || o.Crash != nil || o.Failed != nil || o.Hangup
}

// Player plays steps to a Peer, applying the JSON-level faults (dotnet, unknownKind, big,
// crashAfter, flood). Line-level faults (crlf, noise, split) belong to the Peer's writer; see
// LineWriter. One Player serves one session: crashAfter counts across its Play calls.
type Player struct {
	Peer   Peer
	Faults Faults
	// Questions plays question steps; when false they are skipped entirely (repl --vscode
	// without FUSERAFT_VSCODE_QUESTIONS=1 never asks).
	Questions bool
	// NoDelays makes every delay zero (tests); Pace multiplies them otherwise (0 means 1).
	NoDelays bool
	Pace     float64

	events int
	text   strings.Builder // the current Play's reply, becomes Outcome.Text
}

// Play plays steps in order until they end or stop early (see Outcome.Ended). The error is
// only for a client that can no longer be written to; an interrupt is Outcome.Cancelled.
func Play(ctx context.Context, steps []Step, p Peer) (Outcome, error) {
	pl := &Player{Peer: p, Questions: true}
	return pl.Play(ctx, steps)
}

// Play plays steps, after the flood fault's events when it is set.
func (pl *Player) Play(ctx context.Context, steps []Step) (out Outcome, err error) {
	pl.text.Reset()
	defer func() { out.Text = pl.text.String() }()
	if pl.Faults.Flood > 0 {
		if err := pl.flood(ctx, &out, Flood{Count: pl.Faults.Flood, Type: wire.TypeToken, Text: "x"}); err != nil || out.Ended() {
			return out, err
		}
	}
	err = pl.play(ctx, steps, &out)
	if err != nil && ctx.Err() != nil {
		out.Cancelled, err = true, nil
	}
	return out, err
}

func (pl *Player) play(ctx context.Context, steps []Step, out *Outcome) error {
	for i := range steps {
		if ctx.Err() != nil {
			out.Cancelled = true
			return nil
		}
		if err := pl.step(ctx, &steps[i], out); err != nil {
			return err
		}
		if out.Ended() {
			return nil
		}
	}
	return nil
}

func (pl *Player) step(ctx context.Context, s *Step, out *Outcome) error {
	switch {
	case s.Emit != nil:
		return pl.emit(ctx, out, s.Emit)
	case s.Raw != nil:
		return pl.Peer.Emit([]byte(*s.Raw))
	case s.Tokens != nil:
		return pl.chunks(ctx, out, wire.TypeToken, *s.Tokens, s.Every)
	case s.Thinking != nil:
		return pl.chunks(ctx, out, wire.TypeThinking, *s.Thinking, s.Every)
	case s.Delay != nil:
		return pl.sleep(ctx, out, s.Delay.D())
	case s.Approval != nil:
		return pl.approval(ctx, out, s, s.Approval)
	case s.Question != nil:
		return pl.question(ctx, out, s)
	case s.Crash != nil:
		c := *s.Crash
		out.Crash = withCrashDefaults(c)
	case s.Flood != nil:
		return pl.flood(ctx, out, *s.Flood)
	case s.Big != nil:
		return pl.big(ctx, out, s)
	case s.Fail != nil:
		msg := *s.Fail
		out.Failed = &msg
	case s.Result != nil:
		out.Result = out.Result.Over(s.Result)
	case s.Hangup:
		if h, ok := pl.Peer.(Hanger); ok {
			out.Hangup = true
			return h.Hangup()
		}
	}
	return nil
}

func withCrashDefaults(c Crash) *Crash {
	if c.ExitCode == 0 {
		c.ExitCode = 134
	}
	if c.Message == "" {
		c.Message = "Unhandled exception. System.InvalidOperationException: the model stream ended unexpectedly"
	}
	return &c
}

func (pl *Player) sleep(ctx context.Context, out *Outcome, d time.Duration) error {
	if pl.NoDelays || d <= 0 {
		return nil
	}
	if pl.Pace > 0 {
		d = time.Duration(float64(d) * pl.Pace)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		out.Cancelled = true
	case <-t.C:
	}
	return nil
}

// encode applies the JSON-level faults to ev and counts it. ok is false when the crashAfter
// fault fires instead (out.Crash is then set, with half the line as its partial output).
func (pl *Player) encode(out *Outcome, ev *Object) (line []byte, ok bool) {
	typ, _ := ev.String("type")
	if f := pl.Faults; f.Big > 0 || f.UnknownKind != "" {
		switch kind, _ := ev.String("kind"); {
		case typ == wire.TypeToolResult && f.Big > 0:
			s, _ := ev.String("output")
			if len(s) < f.Big {
				ev = ev.Clone()
				ev.Set("output", bytesRepeat(s, f.Big))
			}
		case typ == wire.TypeApproval && kind == wire.KindFileWrite && f.Big > 0:
			s, _ := ev.String("newContent")
			if len(s) < f.Big {
				ev = ev.Clone()
				ev.Set("newContent", bytesRepeat(s, f.Big))
			}
		}
		if typ == wire.TypeApproval && f.UnknownKind != "" {
			ev = ev.Clone()
			ev.Set("kind", f.UnknownKind)
		}
	}
	line = pl.Faults.Encode(ev)
	return line, pl.count(out, typ, ev, line)
}

// count counts an event about to be emitted; false means the crashAfter fault fires instead.
func (pl *Player) count(out *Outcome, typ string, ev *Object, line []byte) bool {
	if pl.Faults.CrashAfter > 0 && pl.events >= pl.Faults.CrashAfter {
		out.Crash = withCrashDefaults(Crash{ExitCode: pl.Faults.CrashExitCode, Partial: string(line[:len(line)/2])})
		return false
	}
	pl.events++
	out.Events++
	if out.Emitted == nil {
		out.Emitted = map[string]int{}
	}
	out.Emitted[typ]++
	switch typ {
	case wire.TypeToolCall:
		if name, ok := ev.String("name"); ok {
			out.ToolCalls = append(out.ToolCalls, name)
		}
	case wire.TypeToken:
		if pl.text.Len() < 100000 {
			if t, ok := ev.String("text"); ok {
				pl.text.WriteString(t)
			}
		}
	}
	return true
}

func (pl *Player) emit(_ context.Context, out *Outcome, ev *Object) error {
	line, ok := pl.encode(out, ev)
	if !ok {
		return nil
	}
	return pl.Peer.Emit(line)
}

// splitChunks cuts text into word-sized chunks as a model streams it: each chunk is a word
// with the spaces after it; line breaks stay with their word.
func splitChunks(text string) []string {
	var chunks []string
	start := 0
	for i := 0; i < len(text); i++ {
		if text[i] == ' ' || text[i] == '\n' {
			for i+1 < len(text) && (text[i+1] == ' ' || text[i+1] == '\n') {
				i++
			}
			chunks = append(chunks, text[start:i+1])
			start = i + 1
		}
	}
	if start < len(text) {
		chunks = append(chunks, text[start:])
	}
	return chunks
}

func (pl *Player) chunks(ctx context.Context, out *Outcome, typ, text string, every Duration) error {
	for i, c := range splitChunks(text) {
		if i > 0 {
			if err := pl.sleep(ctx, out, every.D()); err != nil || out.Ended() {
				return err
			}
		}
		if err := pl.emit(ctx, out, NewObject("type", typ, "text", c)); err != nil || out.Ended() {
			return err
		}
	}
	return nil
}

// Batcher is a Peer that can hold lines back and write them in bulk (a flood), instead of
// one write per event.
type Batcher interface {
	BeginBatch()
	EndBatch() error
}

func (pl *Player) flood(ctx context.Context, out *Outcome, f Flood) (err error) {
	text := f.Text
	if text == "" {
		text = "x"
	}
	ev := NewObject("type", f.Type, "text", text)
	if b, ok := pl.Peer.(Batcher); ok {
		b.BeginBatch()
		defer func() {
			if ferr := b.EndBatch(); err == nil {
				err = ferr
			}
		}()
	}
	// Every event of a flood is the same line: encode it once.
	line, ok := pl.encode(out, ev)
	for i := 0; ok; i++ {
		if err := pl.Peer.Emit(line); err != nil {
			return err
		}
		if i+1 == f.Count {
			break
		}
		if i%1024 == 0 && ctx.Err() != nil {
			out.Cancelled = true
			return nil
		}
		ok = pl.count(out, f.Type, ev, line)
	}
	return nil
}

func (pl *Player) big(ctx context.Context, out *Outcome, s *Step) error {
	b := s.Big
	path := b.Path
	if path == "" {
		path = "data/big.txt"
	}
	switch b.Event {
	case "tool_result":
		return pl.emit(ctx, out, NewObject("type", wire.TypeToolResult, "id", "call_big", "name", "read_file",
			"ok", true, "output", bytesRepeat("", b.Bytes)))
	case "tool_call":
		return pl.emit(ctx, out, NewObject("type", wire.TypeToolCall, "id", "call_big", "name", "write_file",
			"summary", "write "+path, "args", map[string]string{"path": path, "content": bytesRepeat("", b.Bytes)}, "agent", nil))
	}
	half := b.Bytes / 2
	req := NewObject("type", wire.TypeApproval, "kind", "file_write", "plugin", "filesystem",
		"action", "write_file", "path", path, "oldContent", bytesRepeat("", half),
		"newContent", bytesRepeat("changed\n", b.Bytes-half))
	return pl.approval(ctx, out, s, req)
}

// IsApproval reports whether answer approves: only {"type":"approval_response","approved":true}
// does (exact, case-sensitive names); anything else is a denial, as in fuseraft.
func IsApproval(answer []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(answer, &m) != nil {
		return false
	}
	var typ string
	if json.Unmarshal(m["type"], &typ) != nil || typ != "approval_response" {
		return false
	}
	return strings.TrimSpace(string(m["approved"])) == "true"
}

// QuestionAnswer decodes a question_response. ok is false for anything else (the question
// is then skipped, and the line consumed); a null answer is ok with answer nil.
func QuestionAnswer(line []byte) (answer *string, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return nil, false
	}
	var typ string
	if json.Unmarshal(m["type"], &typ) != nil || typ != "question_response" {
		return nil, false
	}
	raw, has := m["answer"]
	if !has || string(raw) == "null" {
		return nil, true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	return &s, true
}

func (pl *Player) ask(ctx context.Context, out *Outcome, ev *Object) (answer []byte, asked bool, err error) {
	line, ok := pl.encode(out, ev)
	if !ok {
		return nil, false, nil
	}
	answer, err = pl.Peer.Ask(ctx, line)
	if err != nil {
		if ctx.Err() != nil {
			out.Cancelled = true
			return nil, false, nil
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
			return nil, true, nil // the client went away: a denial
		}
		return nil, false, err
	}
	return answer, true, nil
}

func (pl *Player) approval(ctx context.Context, out *Outcome, s *Step, req *Object) error {
	answer, asked, err := pl.ask(ctx, out, req)
	if err != nil || !asked {
		return err
	}
	if IsApproval(answer) {
		out.Approved++
		return pl.play(ctx, s.Allow, out)
	}
	out.Denied++
	return pl.play(ctx, s.Deny, out)
}

func (pl *Player) question(ctx context.Context, out *Outcome, s *Step) error {
	if !pl.Questions {
		return nil
	}
	line, asked, err := pl.ask(ctx, out, s.Question)
	if err != nil || !asked {
		return err
	}
	a, ok := QuestionAnswer(line)
	if ok && a != nil {
		if branch, found := s.Answers[*a]; found {
			out.Approved++
			return pl.play(ctx, branch, out)
		}
	}
	if ok && a != nil {
		out.Approved++
	} else {
		out.Denied++
	}
	return pl.play(ctx, s.Default, out)
}
