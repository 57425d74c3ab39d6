package attach

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"syscall"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/console"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

// interactive is fr-attach with a person at the terminal: stdin and stdout both terminals and
// no --task. Events are rendered above an input line; a typed line is a task, or, while an
// approval or a question waits, its answer. Ctrl-D detaches (exit 0), Ctrl-C too (exit 130);
// the daemon keeps running the task either way.
func interactive(ctx context.Context, a *attacher, in io.Reader) error {
	if !a.o.pretty {
		// --format jsonl on a terminal: the scripted mode, raw lines in and out.
		return a.run(ctx, in)
	}
	stderr := a.s.Err
	term := console.Open(a.s)
	// The terminal is given back as it was found, whatever happens.
	defer term.Close()
	u := &ui{a: a, con: term.Console, ask: console.NewAsker(term.Console, a.o.color), color: a.o.color}
	a.ui = u
	a.out = wire.NewWriter(term)
	u.width = term.Cols()
	a.rend = u.renderer(u.width)
	if a.s.ErrTerminal {
		a.s.Err = term.Stderr(stderr)
	}
	u.refresh()

	ictx, cancel := context.WithCancel(ctx)
	a.startInput = func(_ context.Context, ch chan<- inputMsg) {
		term.Read(ictx, func(l console.Line, eof bool) bool {
			m := inputMsg{eof: eof}
			if !eof {
				m.typed = &l
			}
			select {
			case ch <- m:
				return true
			case <-ictx.Done():
				return false
			}
		})
	}

	err := a.run(ctx, nil)

	cancel()
	term.Close()
	a.s.Err = stderr
	if u.detached || cmdutil.CodeOf(err) == cmdutil.ExitInterrupted {
		cmdutil.Sayf(stderr, prog, "%s", u.detachMessage())
	}
	return err
}

// ui keeps what the person sees in step with the session: the prompt on the input line,
// the answers typed to prompts, the tasks held while one runs, the connection's state.
type ui struct {
	a     *attacher
	con   *console.Console
	ask   *console.Asker
	color bool

	width        int // the renderer's
	held         int // tasks the gate held, as last noted
	saidReadOnly bool
	detached     bool
	retrying     bool // the connection is down, the status line says so
}

func (u *ui) renderer(width int) *render.Renderer {
	return render.New(u.a.out, render.Options{Color: u.a.o.color, Width: width, Timestamps: u.a.o.timestamps,
		DiffMore: console.DiffMore, WrapStream: true})
}

func (u *ui) note(format string, args ...any) error {
	if err := u.a.rend.Note(fmt.Sprintf(format, args...)); err != nil {
		return err
	}
	err := u.a.out.Flush()
	u.con.Settle()
	return err
}

// event follows an event the daemon sent (already rendered and observed by the gate).
func (u *ui) event(ev wire.Event) error {
	if ev.Type == wire.TypeHello {
		if u.retrying {
			u.retrying = false
			u.con.SetStatus("")
			if err := u.a.rend.Note("reconnected to the daemon"); err != nil {
				return err
			}
		}
		if u.a.gate.ReadOnly() && !u.saidReadOnly {
			u.saidReadOnly = true
			if err := u.a.rend.Note("the token is read-only: you can watch, but typed tasks are not sent"); err != nil {
				return err
			}
		}
	}
	if !u.ask.Observe(ev) {
		return nil
	}
	return u.refresh()
}

// reconnecting shows on the status line that the daemon is gone and when it is tried again.
func (u *ui) reconnecting(attempt int, wait time.Duration, lost error) {
	u.retrying = true
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	u.con.SetStatus(fmt.Sprintf("daemon unreachable (%s), retrying within %ds (attempt %d)…",
		lostReason(lost), secs, attempt))
}

// lostReason says in a few words why the connection is down.
func lostReason(err error) string {
	switch {
	case err == nil:
		return "connection lost"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ENOENT):
		return "no socket"
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection closed"
	}
	return termsafe.Line(cmdutil.FirstLine(wire.RedactURLs(err.Error())))
}

// followWidth renders at the terminal's new width once it was resized.
func (u *ui) followWidth() {
	w := u.con.Cols()
	if w == u.width {
		return
	}
	u.a.rend.Close()
	u.a.rend = u.renderer(w)
	u.width = w
}

// refresh puts the prompt for the current state on the input line.
// Whatever was rendered before it (the prompt's event, the answer) is written first.
func (u *ui) refresh() error {
	if aside := u.ask.Refresh("› "); aside {
		if err := u.a.rend.Note("the line you were typing is kept for after the answer"); err != nil {
			return err
		}
	}
	err := u.a.out.Flush()
	u.con.Settle()
	return err
}

// line handles a line the person typed: the answer to the prompt it was typed at, else a task.
func (u *ui) line(t console.Line) error {
	r := u.ask.Read(t)
	switch {
	case r.Answer != nil:
		u.a.gate.Answer(*r.Answer)
		if err := u.a.rend.Event(wire.Event{Type: r.Answer.Type, Raw: r.Answer.Line}); err != nil {
			return err
		}
		return u.refresh()
	case r.Note != "":
		return u.note("%s", r.Note)
	case r.Task != "":
		if in, ok := wire.ParseInput([]byte(r.Task)); ok {
			u.a.gate.Push(in)
		}
	}
	return nil
}

// afterPump notes tasks the gate holds while ours is queued or running.
func (u *ui) afterPump() error {
	w := u.a.gate.Waiting()
	defer func() { u.held = w }()
	if w > u.held {
		why := "the current one"
		if u.ask.Waiting() > 0 {
			why = "the answer"
		}
		return u.note("held: %d %s waiting for %s", w, plural(w, "task", "tasks"), why)
	}
	return nil
}

// sent follows a task that went to the daemon.
func (u *ui) sent(in wire.Input) {
	if u.held > 0 {
		u.held--
		more := ""
		if u.held > 0 {
			more = fmt.Sprintf("; %d more waiting", u.held)
		}
		u.note("sent the held task %q%s", taskLabel(in), more)
	}
}

// dropped says why an input the gate refused was not sent.
func (u *ui) dropped(d wire.Decision) {
	if isTaskInput(d.Input) && u.a.gate.ReadOnly() {
		u.note("not sent: the token is read-only, so the daemon takes no tasks from it")
		return
	}
	u.note("not sent: %s", d.Reason)
}

// detachMessage says what the daemon keeps when the person leaves.
func (u *ui) detachMessage() string {
	a := u.a
	msg := "detached"
	if inFlight, id := a.gate.TaskInFlight(); inFlight {
		if id != "" {
			msg += "; the daemon keeps running task " + id
		} else {
			msg += "; the daemon keeps the task sent last"
		}
		if u.ask.Waiting() > 0 {
			if a.o.target.clientID != "" {
				msg += " and asks its pending prompt again if this client id reattaches in time, else denies it"
			} else {
				msg += " and takes its pending prompt as denied"
			}
		}
		if a.o.target.clientID != "" {
			msg += fmt.Sprintf(" (reattach with --client-id %s to collect its result)", a.o.target.clientID)
		}
	}
	if n := a.gate.Waiting(); n > 0 {
		msg += fmt.Sprintf("; %d held %s not sent", n, plural(n, "task was", "tasks were"))
	}
	return msg
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// interruptedMessage says, when Ctrl-C ends fr-attach while tasks of ours are still running
// (--task with --exit-on-result), that the daemon keeps them and how their results are
// collected. "" when nothing of ours is in flight.
func (a *attacher) interruptedMessage() string {
	var ids []string
	for _, t := range a.tasks {
		ids = append(ids, t.label())
	}
	if inFlight, id := a.gate.TaskInFlight(); inFlight && len(ids) == 0 {
		if id != "" {
			id = "task " + id
		}
		ids = append(ids, cmp.Or(id, "the task sent last"))
	}
	if len(ids) == 0 {
		return ""
	}
	msg := "interrupted; the daemon keeps running " + strings.Join(ids, ", ")
	if n := a.gate.Waiting(); n > 0 {
		msg += fmt.Sprintf(" (%d more %s not sent)", n, plural(n, "task was", "tasks were"))
	}
	t := a.o.target
	if t.clientID == "" {
		return msg + "; over the Unix socket only this connection could take its result, so it cannot be" +
			" collected now; its progress shows in: fr-attach --socket " + shellQuote(t.socket) +
			" (over --url with a --client-id a result waits to be collected)"
	}
	cmd := "fr-attach --url " + shellQuote(t.url) + " --client-id " + shellQuote(t.clientID) + " --exit-on-result"
	if t.token != "" {
		cmd += " (with the same token)"
	}
	return msg + "; collect its result with: " + cmd
}

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
