package attach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fuseraft/fr/internal/approvalprompt"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/console"
	"github.com/fuseraft/fr/internal/humanize"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/sessioninput"
	"github.com/fuseraft/fr/pkg/wire"
)

// ourTask is a task of this client whose result we wait for.
type ourTask struct {
	text      string // "" when we did not send it (hello.inFlight, pendingResults)
	sessionID string // "" until queued says it
}

type inputMsg struct {
	in    wire.Input
	typed *console.Line // a line a person typed (interactive mode)
	err   error
	eof   bool
}

type attacher struct {
	s    cmdutil.Streams
	o    options
	out  *wire.Writer
	rend *render.Renderer
	gate *wire.Gate

	tasks          []*ourTask // outstanding, in dispatch order
	results        int        // results received
	failed         []string   // why tasks count as failed
	inputEnded     bool
	inputIsFIFO    bool
	inputTasks     int    // tasks that came from the input
	connected      bool   // a hello was ever received
	lastPrompt     string // a short description of the latest approval_request or question
	lastPromptType string
	outq           *outQueue       // between the connection and stdout (not on a terminal)
	outStalled     <-chan struct{} // closed when output cannot keep up
	outGone        <-chan struct{} // closed when stdout's reader has gone (a pipe only)
	outClosed      bool            // stdout's reader has gone; --exit-on-result goes on without it

	lim limits // the limits the session is held to (limits.go)

	conn  *wire.Conn
	notes chan func()   // from the connection's goroutine, run between events
	done  chan struct{} // closed when the attach is over

	// interactive mode: the person at the terminal, and where their lines come from
	ui         *ui
	startInput func(ctx context.Context, ch chan<- inputMsg)
}

func newAttacher(s cmdutil.Streams, o options) *attacher {
	a := &attacher{s: s, o: o, out: wire.NewWriter(s.Out), gate: wire.NewGate(wire.Serve)}
	if o.pretty {
		a.rend = a.renderer()
	}
	return a
}

// renderer renders to stdout (through a.out), fitted to its width.
func (a *attacher) renderer() *render.Renderer {
	opts := render.OutputOptions(a.s, a.o.color)
	opts.Timestamps = a.o.timestamps
	return render.New(a.out, opts)
}

// queueOutput puts an outQueue between the events and stdout, so that a stdout that blocks
// holds up neither the connection nor its pings.
func (a *attacher) queueOutput() {
	a.outq = newOutQueue(a.s.Out, a.o.outBuffer, a.o.outTimeout)
	a.outStalled = a.outq.stalled
	a.out = wire.NewWriter(a.outq)
	if a.rend != nil {
		a.rend = a.renderer()
	}
}

// stallError is how fr-attach ends when output cannot keep up.
func (a *attacher) stallError() error {
	return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed,
		"output cannot keep up: stdout took nothing for %s (--output-timeout) with %s of events waiting; stopping",
		a.o.outTimeout, humanize.Bytes(a.o.outBuffer)),
		"read fr-attach's output faster, or raise --output-timeout; events from here on were not written")
}

func (a *attacher) warnf(format string, args ...any) { cmdutil.Warnf(a.s.Err, prog, format, args...) }

// stdoutClosed handles stdout's reader going away, learned from a failed write (err) or from
// watching stdout (err nil). Without --exit-on-result that is a quiet end (exit 0). With it
// the exit status must still be the tasks' outcome: fr-attach stops writing events and goes
// on until every task of ours has its result.
func (a *attacher) stdoutClosed(err error) error {
	if !a.o.exitOnResult {
		a.outClosed = true
		return &errStop{err}
	}
	if !a.outClosed {
		a.outClosed = true
		a.warnf("stdout was closed; waiting for the result to exit with it")
	}
	return nil
}

// outFailed turns a failed write to stdout into how fr-attach goes on: nil to go on, else the
// *errStop that ends it.
func (a *attacher) outFailed(err error) error {
	if err == nil {
		return nil
	}
	if wire.IsBrokenPipe(err) {
		return a.stdoutClosed(err)
	}
	return &errStop{err}
}

// flush writes out buffered events, unless stdout has been closed.
func (a *attacher) flush() error {
	if a.outClosed {
		return nil
	}
	return a.outFailed(a.out.Flush())
}

// errStop ends the attach with the given error (nil: success).
type errStop struct{ err error }

func (e *errStop) Error() string { return fmt.Sprint(e.err) }

// run attaches until the end, then waits for queued events to reach stdout.
func (a *attacher) run(ctx context.Context, in io.Reader) error {
	err := a.attach(ctx, in)
	if a.outq == nil {
		return err
	}
	defer a.outq.close()
	select {
	case <-a.outq.stalled:
		return err
	default:
	}
	if a.outClosed {
		return err
	}
	if left := a.outq.drain(); left > 0 {
		if err == nil {
			return a.stallError()
		}
		a.warnf("%s of events were not written: stdout took nothing for %s", humanize.Bytes(left), a.o.outTimeout)
	}
	return err
}

func (a *attacher) attach(ctx context.Context, in io.Reader) error {
	gone, stopWatch := watchStdout(a.s.Out)
	a.outGone = gone
	defer stopWatch()
	defer func() {
		if a.outClosed {
			return
		}
		if a.rend != nil {
			a.rend.Close()
		}
		a.out.Flush()
	}()
	inputs := make(chan inputMsg, 64)
	if a.startInput != nil {
		go a.startInput(ctx, inputs)
	} else if a.o.input != "" {
		if fi, err := os.Stat(a.o.input); err != nil {
			return cmdutil.Usagef("--input: %v", err)
		} else if fi.Mode()&os.ModeNamedPipe != 0 {
			a.inputIsFIFO = true
		}
		go readInput(ctx, sessioninput.Source{Path: a.o.input, MaxLine: a.o.maxLine}, inputs)
	} else if in != nil {
		go readInput(ctx, sessioninput.Source{Stdin: in, MaxLine: a.o.maxLine}, inputs)
	} else {
		a.inputEnded = true
	}
	for _, t := range a.o.tasks {
		b, _ := wire.UserInput(t)
		a.gate.Push(wire.Input{Line: b, Type: wire.TypeUserInput})
	}

	stopLimits, err := a.startLimits()
	if err != nil {
		return err
	}
	defer stopLimits()

	a.notes, a.done = make(chan func(), 16), make(chan struct{})
	conn, err := wire.Dial(ctx, a.daemon())
	if err != nil {
		close(a.done)
		if ctx.Err() != nil {
			return cmdutil.Exit(cmdutil.ExitInterrupted)
		}
		return dialError(a.o.target, err)
	}
	a.conn = conn
	defer func() {
		close(a.done) // the connection's goroutine tells nothing more
		conn.Close()
	}()
	err = a.loop(ctx, inputs)
	var stop *errStop
	if errors.As(err, &stop) {
		return stop.err
	}
	return err
}

// readInput reads input lines from src (stdin, a file, or a FIFO held open as its writers come
// and go) until its end. Sending on ch waits while the session holds sessioninput.MaxHeld inputs,
// so reading stops there and the writer is held back by the pipe.
func readInput(ctx context.Context, src sessioninput.Source, ch chan<- inputMsg) {
	err := src.Read(ctx, func(line []byte) error {
		in, ok := wire.ParseInput(line)
		if !ok {
			return nil
		}
		select {
		case ch <- inputMsg{in: in}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if ctx.Err() != nil {
		return
	}
	m := inputMsg{eof: true}
	switch {
	case wire.IsLineTooLong(err):
		m = inputMsg{err: cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage, "%v", err),
			"input lines are tasks and answers; give a long task in a file the agent can read")}
	case err != nil && src.Path != "":
		m = inputMsg{err: fmt.Errorf("--input: %w", err)}
	case err != nil:
		m = inputMsg{err: err}
	}
	select {
	case ch <- m:
	case <-ctx.Done():
	}
}

// loop runs the attach: events out and inputs in, until the end (an *errStop, or another
// error).
func (a *attacher) loop(ctx context.Context, inputs <-chan inputMsg) error {
	batches := a.conn.Batches()
	for {
		// Bounded input: while sessioninput.MaxHeld inputs wait in the gate, none more is taken,
		// so the reader stops reading (prompts' answers already taken still go).
		inputsC := inputs
		if a.gate.Waiting() >= sessioninput.MaxHeld {
			inputsC = nil
		}
		var err error
		select {
		case <-ctx.Done():
			return cmdutil.Exit(cmdutil.ExitInterrupted)
		case <-a.outGone:
			a.outGone = nil
			err = a.stdoutClosed(nil)
		case <-a.outStalled:
			return a.stallError()
		case f := <-a.notes:
			f()
		case <-a.limitTimer():
			err = a.limitTick()
		case b, ok := <-batches:
			if !ok {
				return a.ended(ctx)
			}
			err = a.burst(b, batches)
		case m := <-inputsC:
			err = a.input(m)
		}
		if err != nil {
			return err
		}
		if err := a.step(); err != nil {
			return err
		}
	}
}

// maxBurst is how many lines already read from the daemon the loop takes one after the other
// before it looks at its other channels again.
const maxBurst = 256

// burst takes in the lines of b, then those of the batches already waiting behind it (up to
// maxBurst lines), each but the last followed by step as in loop (but for lines that change
// nothing step looks at): a flood costs one select per burst, not one per line. Output is
// flushed once nothing more waits. A batch taken in is given back to the connection.
func (a *attacher) burst(b []wire.Line, batches <-chan []wire.Line) error {
	// Without a renderer, a person or limits, an inert line is only written out.
	plain := a.rend == nil && a.ui == nil && a.lim.b == nil
	for n := 0; ; {
		for i := range b {
			ln := &b[i]
			if plain && inert(ln) {
				if err := a.writeOut(ln); err != nil {
					return err
				}
			} else if err := a.line(*ln); err != nil {
				return err
			}
			n++
			if i == len(b)-1 {
				if waiting := len(batches); n >= maxBurst || waiting == 0 {
					a.conn.Release(b)
					if waiting == 0 {
						return a.flush()
					}
					return nil
				}
			}
			if a.ui == nil && inert(ln) {
				continue
			}
			if err := a.step(); err != nil {
				return err
			}
		}
		a.conn.Release(b)
		// Only this goroutine receives: a batch counted in len is there to take.
		b = <-batches
	}
}

// inert says whether ln changes nothing that step looks at (the Gate and our tasks ignore
// it), so that a flood of them needs no step between its lines.
func inert(ln *wire.Line) bool {
	return ln.Kind == wire.EventLine && (ln.Type == wire.TypeToken || ln.Type == wire.TypeThinking)
}

// writeOut is line for an inert line without a renderer, a person or limits: it is only
// written out.
func (a *attacher) writeOut(ln *wire.Line) error {
	if a.outClosed {
		return nil
	}
	return a.outFailed(a.out.WriteLine(a.o.arrival.Event(ln.Raw)))
}

// ended is how the attach ends when the connection has: interrupted, or why it ended.
func (a *attacher) ended(ctx context.Context) error {
	for drained := false; !drained; {
		select {
		case f := <-a.notes:
			f()
		default:
			drained = true
		}
	}
	if ctx.Err() != nil {
		return cmdutil.Exit(cmdutil.ExitInterrupted)
	}
	return connError(a.o.target, a.conn.Err())
}

// line takes in one line from the daemon.
func (a *attacher) line(ln wire.Line) error {
	if ln.Kind == wire.Noise {
		switch {
		case ln.Type == wire.TypeQuestion:
			a.warnf("the daemon sent a question that is not UTF-8 text; answered it with null, not passed on: %s", cmdutil.FirstLine(string(ln.Raw)))
		case ln.Type != "":
			a.warnf("the daemon sent %s; denied it, not passed on: %s", wire.NotTextPrompt(ln.Type), cmdutil.FirstLine(string(ln.Raw)))
		case len(strings.TrimSpace(string(ln.Raw))) > 0:
			a.warnf("the daemon sent a line that is %s: %s", wire.NotJSON, cmdutil.FirstLine(string(ln.Raw)))
		}
		return nil
	}
	ev, isEvent := ln.Event()
	if isEvent && ev.Type == wire.TypeHello {
		if err := a.checkHello(ev); err != nil {
			return err
		}
	}
	if err := a.outFailed(a.emit(ln)); err != nil {
		return err
	}
	if isEvent {
		if err := a.follow(ev); err != nil {
			return err
		}
		a.limitEvent(ev)
		if a.ui != nil {
			if err := a.ui.event(ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// input takes in one input: a line to send, a line typed, or the end of input.
func (a *attacher) input(m inputMsg) error {
	switch {
	case m.err != nil:
		return m.err
	case m.eof:
		if a.ui != nil {
			// Ctrl-D: the person detaches.
			a.ui.detached = true
			a.out.Flush()
			return &errStop{nil}
		}
		a.inputEnded = true
	case m.typed != nil:
		return a.ui.line(*m.typed)
	default:
		a.gate.Push(m.in)
	}
	return nil
}

// step sends what may go now and says whether --exit-on-result is satisfied, while connected
// and once the daemon's hello has reached us (the connection may have read it, and what
// follows, while an input was taken: nothing is over before hello is written out).
func (a *attacher) step() error {
	if !a.conn.Connected() || !a.connected {
		return nil
	}
	if err := a.pump(); err != nil {
		return err
	}
	if a.ui != nil {
		if err := a.ui.afterPump(); err != nil {
			return err
		}
	}
	if stop := a.limitStop(); stop != nil {
		a.flush()
		return stop
	}
	if stop := a.finished(); stop != nil {
		a.flush()
		return stop
	}
	return nil
}

func (a *attacher) emit(ln wire.Line) error {
	if a.outClosed {
		return nil
	}
	if a.rend != nil {
		if ev, ok := ln.Event(); ok {
			if a.ui != nil {
				a.ui.followWidth()
			}
			return a.rend.Event(ev)
		}
		return nil
	}
	if ln.Kind == wire.EventLine {
		return a.out.WriteLine(a.o.arrival.Event(ln.Raw))
	}
	return a.out.WriteLine(a.o.arrival.Line(ln.Raw))
}

// checkHello reconciles our tasks with what the daemon still knows of them (the connection
// has checked hello's protocolVersion).
func (a *attacher) checkHello(ev wire.Event) error {
	var h wire.Hello
	if err := ev.Decode(&h); err != nil {
		return &wire.ProtocolError{Msg: "hello is not valid", Seen: cmdutil.FirstLine(string(ev.Raw))}
	}
	reconnect := a.connected
	a.connected = true

	if h.ClientID == nil && reconnect && len(a.tasks) > 0 {
		// The Unix socket: the daemon cannot know us again, so our tasks' results are lost.
		var ids []string
		for _, t := range a.tasks {
			ids = append(ids, t.label())
		}
		msg := fmt.Sprintf("the connection dropped while %s was in flight; over the Unix socket its result cannot be learned",
			strings.Join(ids, ", "))
		if a.o.exitOnResult {
			return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "%s", msg),
				"use the WebSocket (--url) with a --client-id to keep tasks across reconnects")
		}
		a.warnf("%s", msg)
		a.tasks = nil
	}
	known := map[string]bool{}
	for _, id := range h.PendingResults {
		known[id] = true
	}
	if h.InFlight != nil {
		known[h.InFlight.SessionID] = true
	}
	if reconnect && h.ClientID != nil {
		// Our tasks the daemon no longer knows of: their outcome is lost.
		kept := a.tasks[:0]
		for _, t := range a.tasks {
			if t.sessionID != "" && !known[t.sessionID] {
				a.failed = append(a.failed, t.label()+": the daemon no longer knows it after the reconnect")
				continue
			}
			if t.sessionID == "" && h.InFlight == nil && len(h.PendingResults) == 0 {
				a.failed = append(a.failed, t.label()+": lost when the connection dropped before the daemon confirmed it")
				continue
			}
			kept = append(kept, t)
		}
		a.tasks = kept
	}
	have := map[string]bool{}
	for _, t := range a.tasks {
		if t.sessionID != "" {
			have[t.sessionID] = true
		}
	}
	if h.InFlight != nil && !have[h.InFlight.SessionID] {
		if t := a.unconfirmed(); t != nil {
			t.sessionID = h.InFlight.SessionID
		} else {
			a.tasks = append(a.tasks, &ourTask{sessionID: h.InFlight.SessionID, text: h.InFlight.Task})
		}
		have[h.InFlight.SessionID] = true
	}
	for _, id := range h.PendingResults {
		if !have[id] {
			a.tasks = append(a.tasks, &ourTask{sessionID: id})
		}
	}
	return nil
}

func (t *ourTask) label() string {
	if t.sessionID != "" {
		return "task " + t.sessionID
	}
	return fmt.Sprintf("task %q", t.text)
}

// unconfirmed is our oldest task the daemon has not named yet.
func (a *attacher) unconfirmed() *ourTask {
	for _, t := range a.tasks {
		if t.sessionID == "" {
			return t
		}
	}
	return nil
}

// observe updates the gate and our tasks from an event (the connection shows the gate every
// event it reads itself).
func (a *attacher) observe(ev wire.Event) error {
	a.gate.Observe(ev)
	return a.follow(ev)
}

// follow updates our tasks from an event.
func (a *attacher) follow(ev wire.Event) error {
	if wire.EndsPrompts(ev.Type) {
		a.lastPrompt, a.lastPromptType = "", "" // a prompt pending after this is a new one
	}
	switch ev.Type {
	case wire.TypeApproval, wire.TypeQuestion:
		a.lastPrompt, a.lastPromptType = approvalprompt.Describe(ev), ev.Type
	case wire.TypeQueued:
		var q wire.Queued
		if ev.Decode(&q) == nil {
			if t := a.unconfirmed(); t != nil {
				t.sessionID = q.SessionID
			}
		}
	case wire.TypeResult:
		var r wire.TaskResult
		if err := ev.Decode(&r); err != nil {
			a.failed = append(a.failed, "a result event that cannot be read: "+err.Error())
			return nil
		}
		a.results++
		idx := -1
		for i, t := range a.tasks {
			if t.sessionID == r.SessionID {
				idx = i
				break
			}
		}
		if idx < 0 {
			for i, t := range a.tasks {
				if t.sessionID == "" {
					idx = i
					break
				}
			}
		}
		if idx >= 0 {
			a.tasks = append(a.tasks[:idx], a.tasks[idx+1:]...)
		}
		if !r.Succeeded {
			why := "task " + r.SessionID + " failed"
			if r.ErrorMessage != nil && *r.ErrorMessage != "" {
				why += ": " + *r.ErrorMessage
			}
			a.failed = append(a.failed, why)
		}
	}
	return nil
}

// pump sends every input the gate allows now. Once input has ended nothing can answer a
// prompt, so a pending one is denied (a question skipped), as the daemon itself does with
// nobody to ask, and the task goes on to its result.
func (a *attacher) pump() error {
	for {
		if a.limitHold() {
			return nil
		}
		if err := a.conn.Flush(); err != nil {
			return err
		}
		p := a.gate.Pending()
		if p == "" || (!a.inputEnded || a.ui != nil) && a.lim.breach == nil {
			return nil
		}
		if a.lastPromptType != p {
			// The gate saw the prompt as it was read; its line has not reached us yet, and
			// it is denied once it has, with what it asks shown.
			return nil
		}
		what := a.lastPrompt
		if a.limitDeny(p) {
			// Stopped by a limit: denied as nobody's answer could approve it now.
		} else if p == wire.TypeQuestion {
			a.warnf("%s", approvalprompt.Unanswered(what, true))
			a.gate.Answer(wire.Input{Line: wire.QuestionResponse(nil), Type: wire.TypeQuestionResponse})
		} else {
			a.warnf("%s", approvalprompt.Unanswered(what, false))
			a.gate.Answer(wire.Input{Line: wire.ApprovalResponse(false), Type: wire.TypeApprovalResponse})
		}
		a.lastPrompt, a.lastPromptType = "", ""
	}
}

// decided follows what the gate decided for an input as the connection carries it out: a
// task sent is ours until its result (sent or not when the write failed: the daemon's next
// hello tells), a dropped input is said.
func (a *attacher) decided(d wire.Decision, err error) error {
	isTask := isTaskInput(d.Input)
	if d.Action == wire.Drop {
		if a.limitDropped(d) {
			return nil
		}
		if isTask && a.gate.ReadOnly() && a.ui == nil {
			return &errStop{cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitRefused,
				"the token is read-only: the daemon takes no tasks from it"),
				"use a write token (--token-file or FUSERAFT_SERVE_TOKEN) to dispatch tasks")}
		}
		if a.ui != nil {
			a.ui.dropped(d)
			return nil
		}
		a.warnf("dropped %s: %s", d.Input.Type, d.Reason)
		return nil
	}
	if t := d.Input.Type; t == wire.TypeApprovalResponse || t == wire.TypeQuestionResponse {
		// The prompt shown last has its answer (the daemon asks the next one only after
		// reading it): a prompt pending now is one whose line is still on its way.
		a.lastPrompt, a.lastPromptType = "", ""
	}
	if isTask {
		a.tasks = append(a.tasks, &ourTask{text: taskLabel(d.Input)})
		if err == nil && a.ui != nil {
			a.ui.sent(d.Input)
		}
	}
	return nil
}

func isTaskInput(in wire.Input) bool {
	switch in.Type {
	case wire.TypeApprovalResponse, wire.TypeQuestionResponse, wire.TypeInterrupt:
		return false
	}
	return true
}

func taskLabel(in wire.Input) string {
	var u struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(in.Line, &u) == nil && u.Text != "" {
		return cmdutil.FirstLine(u.Text)
	}
	return cmdutil.FirstLine(string(in.Line))
}

// finished says whether --exit-on-result is satisfied, and with which outcome.
func (a *attacher) finished() *errStop {
	if !a.o.exitOnResult || len(a.tasks) > 0 || a.gate.Waiting() > 0 {
		return nil
	}
	if inFlight, _ := a.gate.TaskInFlight(); inFlight {
		return nil
	}
	switch {
	case len(a.o.tasks) > 0:
	case a.inputEnded:
	case a.ui != nil && a.results > 0:
	case a.inputIsFIFO && a.results > 0:
	default:
		return nil
	}
	if len(a.failed) > 0 {
		for _, f := range a.failed[:len(a.failed)-1] {
			cmdutil.Sayf(a.s.Err, prog, "error: %s", f)
		}
		return &errStop{cmdutil.Errorf(cmdutil.ExitFailed, "%s", a.failed[len(a.failed)-1])}
	}
	return &errStop{nil}
}
