package attach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/liveio"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/pkg/wire"
)

// ourTask is a task of this client whose result we wait for.
type ourTask struct {
	text      string // "" when we did not send it (hello.inFlight, pendingResults)
	sessionID string // "" until queued says it
}

type inputMsg struct {
	in    wire.Input
	typed *typedLine // a line a person typed (interactive mode)
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
	inputTasks     int // tasks that came from the input
	warnedVersion  bool
	connected      bool   // a hello was ever received
	lastPrompt     string // a short description of the latest approval_request or question
	lastPromptType string
	outq           *outQueue       // between the connection and stdout (not on a terminal)
	outStalled     <-chan struct{} // closed when output cannot keep up
	outGone        <-chan struct{} // closed when stdout's reader has gone (a pipe only)
	outClosed      bool            // stdout's reader has gone; --exit-on-result goes on without it

	// limits: the breach once there is one, when --max-duration runs out, input dropped since
	limited     *budget.Breach
	limitTimer  <-chan time.Time
	inputWarned bool

	// interactive mode: the person at the terminal, and where their lines come from
	ui         *ui
	startInput func(ctx context.Context, ch chan<- inputMsg)
}

func newAttacher(s cmdutil.Streams, o options) *attacher {
	a := &attacher{s: s, o: o, out: wire.NewWriter(s.Out), gate: wire.NewGate(wire.Serve)}
	if o.pretty {
		a.rend = render.New(a.out, render.Options{Color: o.color, Timestamps: o.timestamps})
	}
	return a
}

// queueOutput puts an outQueue between the events and stdout, so that a stdout that blocks
// holds up neither the connection nor its pings.
func (a *attacher) queueOutput() {
	a.outq = newOutQueue(a.s.Out, a.o.outBuffer, a.o.outTimeout)
	a.outStalled = a.outq.stalled
	a.out = wire.NewWriter(a.outq)
	if a.rend != nil {
		a.rend = render.New(a.out, render.Options{Color: a.o.color, Timestamps: a.o.timestamps})
	}
}

// stallError is how fr-attach ends when output cannot keep up.
func (a *attacher) stallError() error {
	return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed,
		"output cannot keep up: stdout took nothing for %s (--output-timeout) with %s of events waiting; stopping",
		a.o.outTimeout, humanSize(a.o.outBuffer)),
		"read fr-attach's output faster, or raise --output-timeout; events from here on were not written")
}

func humanSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
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

// errLost is a connection that dropped; we may reconnect.
type errLost struct{ err error }

func (e *errLost) Error() string {
	var ce websocket.CloseError
	switch {
	case e.err == nil || errors.Is(e.err, io.EOF):
		return "the daemon closed the connection"
	case errors.As(e.err, &ce):
		if ce.Reason != "" {
			return fmt.Sprintf("the daemon closed the connection: %s (status %d)", ce.Reason, int(ce.Code))
		}
		return fmt.Sprintf("the daemon closed the connection (status %d)", int(ce.Code))
	}
	return e.err.Error()
}

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
		a.warnf("%s of events were not written: stdout took nothing for %s", humanSize(left), a.o.outTimeout)
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
		go readInput(ctx, liveio.Source{Path: a.o.input, MaxLine: a.o.maxLine}, inputs)
	} else if in != nil {
		go readInput(ctx, liveio.Source{Stdin: in, MaxLine: a.o.maxLine}, inputs)
	} else {
		a.inputEnded = true
	}
	for _, t := range a.o.tasks {
		b, _ := wire.UserInput(t)
		a.gate.Push(wire.Input{Line: b, Type: wire.TypeUserInput})
	}
	if b := a.o.budget; b != nil {
		// A budget file's totals may have reached a limit already: then nothing is sent.
		if br := b.Start(); br != nil {
			return limitError(br, "no task sent")
		}
		defer b.Close()
		if left, ok := b.Left(); ok {
			a.limitTimer = time.After(left)
		}
	}

	l, err := dial(ctx, a.o.target)
	if err != nil {
		if ctx.Err() != nil {
			return cmdutil.Exit(cmdutil.ExitInterrupted)
		}
		return dialError(a.o.target, err)
	}
	var lastAuth string
	for {
		err := a.session(ctx, l, inputs)
		l.close()
		var stop *errStop
		if errors.As(err, &stop) {
			return stop.err
		}
		lost, lostAt := err, time.Now()
		// Reconnect with exponential backoff and full jitter.
		attempt := 0
		for {
			if ctx.Err() != nil {
				return cmdutil.Exit(cmdutil.ExitInterrupted)
			}
			if a.o.maxReconnects >= 0 && attempt >= a.o.maxReconnects {
				return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUnavailable,
					"lost the connection to %s (%v) and gave up after %d reconnect attempts", a.o.target, lost, attempt),
					"raise --max-reconnects, or check that 'fuseraft serve' is running")
			}
			left := a.o.giveUp - time.Since(lostAt)
			if a.o.giveUp > 0 && left <= 0 {
				return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUnavailable,
					"no connection to %s for %s (--give-up-after); gave up after %d reconnect attempts: %v",
					a.o.target, a.o.giveUp, attempt, lost),
					"check that 'fuseraft serve' is running, or raise --give-up-after (0: never give up)")
			}
			attempt++
			wait := backoff(attempt, a.o.maxBackoff, rand.Int64N)
			if a.o.giveUp > 0 && wait > left {
				wait = left // one last attempt when the time is up
			}
			cmdutil.Sayf(a.s.Err, prog, "reconnecting to %s in %s (attempt %d): %v", a.o.target,
				wait.Round(time.Millisecond), attempt, lost)
			if !a.outClosed {
				a.out.Flush()
			}
			timer := time.NewTimer(wait)
			for waiting := true; waiting; {
				select {
				case <-ctx.Done():
					timer.Stop()
					return cmdutil.Exit(cmdutil.ExitInterrupted)
				case <-a.outGone:
					a.outGone = nil
					if a.stdoutClosed(nil) != nil {
						timer.Stop()
						return nil // nobody reads our output any more: a quiet end
					}
				case <-a.outStalled:
					timer.Stop()
					return a.stallError()
				case <-timer.C:
					waiting = false
				}
			}
			l, err = dial(ctx, a.o.target)
			if err == nil {
				lastAuth = ""
				break
			}
			var ae *errAuth
			if errors.As(err, &ae) {
				if ae.Error() == lastAuth {
					return dialError(a.o.target, err)
				}
				lastAuth = ae.Error()
			} else {
				lastAuth = ""
				var ce *cmdutil.Error
				if errors.As(err, &ce) && ce.Code != cmdutil.ExitUnavailable {
					return ce
				}
			}
			lost = err
		}
	}
}

// backoff is the wait before reconnect attempt n (1-based): exponential backoff with full
// jitter, a random duration between 0 and min(max, 100ms * 2^(n-1)). randN returns a number in
// [0, n).
func backoff(n int, max time.Duration, randN func(int64) int64) time.Duration {
	ceiling := 100 * time.Millisecond << min(n-1, 30)
	if ceiling > max || ceiling <= 0 {
		ceiling = max
	}
	return time.Duration(randN(int64(ceiling) + 1))
}

// readInput reads input lines from src (stdin, a file, or a FIFO held open as its writers come
// and go) until its end. Sending on ch waits while the session holds liveio.MaxHeld inputs,
// so reading stops there and the writer is held back by the pipe.
func readInput(ctx context.Context, src liveio.Source, ch chan<- inputMsg) {
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

// session runs one connection: hello, then events out and inputs in, until the connection
// drops (*errLost) or the attach is over (*errStop).
func (a *attacher) session(ctx context.Context, l link, inputs <-chan inputMsg) error {
	type readMsg struct {
		line []byte
		err  error
	}
	lines := make(chan readMsg, 256)
	done := make(chan struct{})
	defer close(done)
	go func() {
		h, _ := l.(holder)
		for {
			if a.outq != nil && a.outq.full() {
				// stdout is behind: read no more until it takes some (the pinger knows
				// a pong may wait behind unread events).
				if h != nil {
					h.hold(true)
				}
				a.outq.waitRoom(done)
				if h != nil {
					h.hold(false)
				}
				select {
				case <-done:
					return
				case <-a.outStalled:
					return
				default:
				}
			}
			b, err := l.readLine()
			if err != nil {
				b = nil
			} else {
				b = append([]byte(nil), b...)
			}
			select {
			case lines <- readMsg{b, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	helloSeen := false
	// A daemon that accepts and never says hello (hung, or not a fuseraft serve) is not
	// waited on forever.
	helloTimer := time.NewTimer(connectTimeout)
	defer helloTimer.Stop()
	var replacedMsg string
	for {
		// Bounded input: while liveio.MaxHeld inputs wait in the gate, none more is taken,
		// so the reader stops reading (prompts' answers already taken still go).
		inputsC := inputs
		if a.gate.Waiting() >= liveio.MaxHeld {
			inputsC = nil
		}
		select {
		case <-ctx.Done():
			return &errStop{cmdutil.Exit(cmdutil.ExitInterrupted)}
		case <-a.outGone:
			a.outGone = nil
			if err := a.stdoutClosed(nil); err != nil {
				return err
			}
		case <-a.outStalled:
			return &errStop{a.stallError()}
		case <-a.limitTimer:
			a.limitTimer = nil
			if br := a.o.budget.Tick(); br != nil {
				a.limit(br)
			} else {
				// Other runs sharing a budget file may have used time meanwhile.
				left, _ := a.o.budget.Left()
				a.limitTimer = time.After(max(left, 100*time.Millisecond))
			}
		case <-helloTimer.C:
			if helloSeen {
				break
			}
			return &errStop{cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUnavailable,
				"%s accepted the connection but sent no hello within %s", a.o.target, connectTimeout),
				"is it a 'fuseraft serve' daemon, and is it responding?")}
		case m := <-lines:
			if m.err != nil {
				if replaced(m.err) || replacedMsg != "" {
					return &errStop{cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed,
						"a newer connection with client id %s replaced this one; stopping", a.o.target.clientID),
						"give each fr-attach its own --client-id")}
				}
				return &errLost{m.err}
			}
			ln := wire.ParseLine(m.line)
			if ln.Kind == wire.Noise {
				if len(strings.TrimSpace(string(ln.Raw))) > 0 {
					a.warnf("the daemon sent a line that is not JSON: %s", cmdutil.FirstLine(string(ln.Raw)))
				}
				break
			}
			ev, isEvent := ln.Event()
			if !helloSeen {
				if !isEvent || ev.Type != wire.TypeHello {
					return &errStop{&wire.ProtocolError{Msg: "expected hello as the daemon's first event", Seen: cmdutil.FirstLine(string(ln.Raw))}}
				}
				if err := a.checkHello(ev); err != nil {
					return &errStop{err}
				}
				helloSeen = true
				helloTimer.Stop()
			}
			if err := a.outFailed(a.emit(ln)); err != nil {
				return err
			}
			if isEvent {
				if ev.Type == wire.TypeError && strings.Contains(strings.ToLower(string(ev.Raw)), "newer connection") {
					replacedMsg = string(ev.Raw)
				}
				if err := a.observe(ev); err != nil {
					return &errStop{err}
				}
				if a.ui != nil {
					if err := a.ui.event(ev); err != nil {
						return &errStop{err}
					}
				}
			}
			if len(lines) == 0 {
				if err := a.flush(); err != nil {
					return err
				}
			}
		case m := <-inputsC:
			switch {
			case m.err != nil:
				return &errStop{m.err}
			case m.eof:
				if a.ui != nil {
					// Ctrl-D: the person detaches.
					a.ui.detached = true
					a.out.Flush()
					return &errStop{nil}
				}
				a.inputEnded = true
			case m.typed != nil:
				if err := a.ui.line(*m.typed); err != nil {
					return &errStop{err}
				}
			case a.limited != nil:
				if !a.inputWarned {
					a.inputWarned = true
					a.warnf("input read after the limit was reached is not sent")
				}
			default:
				a.gate.Push(m.in)
			}
		}
		if helloSeen {
			if err := a.pump(l); err != nil {
				return err
			}
			if a.limited != nil && len(a.tasks) == 0 {
				// Stopped by a limit, and no task of ours runs any more.
				a.flush()
				return &errStop{limitError(a.limited, "")}
			}
			if a.ui != nil {
				if err := a.ui.afterPump(); err != nil {
					return &errStop{err}
				}
			}
			if stop := a.finished(); stop != nil {
				a.flush()
				return &errStop{stop.err}
			}
		}
	}
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
	return a.out.WriteLine(ln.Raw)
}

// checkHello checks hello's protocolVersion and reconciles our tasks with what the daemon
// still knows of them.
func (a *attacher) checkHello(ev wire.Event) error {
	if err := wire.CheckHandshake(ev); err != nil {
		var ve *wire.VersionError
		if !errors.As(err, &ve) || !a.o.anyVersion {
			if ve != nil {
				return cmdutil.WithHint(err, "pass --any-version to go on anyway")
			}
			return err
		}
		if !a.warnedVersion {
			a.warnf("%v; going on (--any-version)", err)
			a.warnedVersion = true
		}
	}
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

// observe updates the gate and our tasks from an event.
func (a *attacher) observe(ev wire.Event) error {
	a.gate.Observe(ev)
	if b := a.o.budget; b != nil {
		// Progress events are broadcast; they are ours while a task of ours is in flight.
		if inFlight, _ := a.gate.TaskInFlight(); inFlight || len(a.tasks) > 0 || ev.Type == wire.TypeResult {
			if br := b.Observe(ev); br != nil {
				a.limit(br)
			}
		}
	}
	switch ev.Type {
	case wire.TypeApproval:
		a.lastPrompt, a.lastPromptType = "an approval_request", ev.Type
		if r, err := wire.DecodeApprovalRequest(ev.Raw); err == nil {
			a.lastPrompt += " (" + cmdutil.FirstLine(r.Summary()) + ")"
		}
	case wire.TypeQuestion:
		a.lastPrompt, a.lastPromptType = "a question", ev.Type
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
func (a *attacher) pump(l link) error {
	for {
		if err := a.pumpQueued(l); err != nil {
			return err
		}
		p := a.gate.Pending()
		if p == "" || a.limited == nil && (!a.inputEnded || a.ui != nil) {
			return nil
		}
		what := a.lastPrompt
		if what == "" || a.lastPromptType != p {
			what = map[bool]string{true: "a question", false: "an approval_request"}[p == wire.TypeQuestion]
		}
		if a.limited != nil {
			a.warnf("stopped by a limit: denying %s", what)
			if p == wire.TypeQuestion {
				a.gate.Answer(wire.Input{Line: wire.QuestionResponse(nil), Type: wire.TypeQuestionResponse})
			} else {
				a.gate.Answer(wire.Input{Line: wire.ApprovalResponse(false), Type: wire.TypeApprovalResponse})
			}
		} else if p == wire.TypeQuestion {
			a.warnf("input has ended and nobody can answer %s; skipping it", what)
			a.gate.Answer(wire.Input{Line: wire.QuestionResponse(nil), Type: wire.TypeQuestionResponse})
		} else {
			a.warnf("input has ended and nobody can answer %s; denying it", what)
			a.gate.Answer(wire.Input{Line: wire.ApprovalResponse(false), Type: wire.TypeApprovalResponse})
		}
		a.lastPrompt, a.lastPromptType = "", ""
	}
}

// pumpQueued sends every queued input the gate allows now.
func (a *attacher) pumpQueued(l link) error {
	for {
		d, ok := a.gate.Next()
		if !ok {
			return nil
		}
		isTask := isTaskInput(d.Input)
		if d.Action == wire.Drop {
			if isTask && a.gate.ReadOnly() && a.ui == nil {
				return &errStop{cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitRefused,
					"the token is read-only: the daemon takes no tasks from it"),
					"use a write token (--token-file or FUSERAFT_SERVE_TOKEN) to dispatch tasks")}
			}
			if a.ui != nil {
				a.ui.dropped(d)
				continue
			}
			a.warnf("dropped %s: %s", d.Input.Type, d.Reason)
			continue
		}
		line := d.Input.Line
		if a.o.budget != nil {
			switch {
			case isTask && a.limited == nil:
				if br := a.o.budget.BeforeTurn(); br != nil {
					a.limit(br)
				}
			case d.Input.Type == wire.TypeApprovalResponse && a.limited != nil:
				line = wire.ApprovalResponse(false) // nothing is approved after a breach
			case d.Input.Type == wire.TypeQuestionResponse && a.limited != nil:
				line = wire.QuestionResponse(nil)
			}
			if isTask && a.limited != nil {
				a.warnf("stopped by a limit: task not sent: %s", taskLabel(d.Input))
				continue
			}
		}
		if err := l.writeLine(line); err != nil {
			if isTask {
				// Sent or not, the daemon's next hello tells.
				a.tasks = append(a.tasks, &ourTask{text: taskLabel(d.Input)})
			}
			return &errLost{err}
		}
		if isTask {
			a.tasks = append(a.tasks, &ourTask{text: taskLabel(d.Input)})
			if a.ui != nil {
				a.ui.sent(d.Input)
			}
		}
	}
}

// limit acts on a limit breached, once: the daemon cannot cancel a task, so this client's
// later prompts are denied and no more tasks are sent until the running one ends.
func (a *attacher) limit(br *budget.Breach) {
	if a.limited != nil {
		return
	}
	a.limited = br
	cmdutil.Sayf(a.s.Err, prog, "limit reached: %s; the daemon cannot cancel a task (an interrupt cancels nothing over serve), so this client's later prompts are denied, no more tasks are sent, and fr-attach exits once its running task ends", br)
}

// limitError is the exit status of a session stopped by a limit.
func limitError(br *budget.Breach, what string) error {
	msg := "stopped by " + br.String()
	if what != "" {
		msg += ": " + what
	}
	return cmdutil.Errorf(cmdutil.ExitLimit, "%s", msg)
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
