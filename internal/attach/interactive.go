package attach

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/fuseraft/fr/internal/cmdutil"
	asking "github.com/fuseraft/fr/internal/prompt"
	"github.com/fuseraft/fr/internal/render"
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
	width := render.Width(a.s.Out, a.s.Env)

	edit := false
	restore := func() {}
	if f, ok := in.(*os.File); ok {
		if r, err := editMode(int(f.Fd())); err == nil {
			var once sync.Once
			edit, restore = true, func() { once.Do(func() { r() }) }
		}
	}
	// The terminal is given back as it was found, whatever happens.
	defer restore()
	con := newConsole(a.s.Out, width, edit)
	u := &ui{a: a, con: con, color: a.o.color}
	a.ui = u
	a.out = wire.NewWriter(con)
	a.rend = render.New(a.out, render.Options{Color: a.o.color, Width: width, Timestamps: a.o.timestamps})
	u.width = con.cols()
	if cmdutil.IsTerminal(stderr) {
		a.s.Err = con.stderr(stderr)
	}
	u.refresh()

	stopWatch := watchTerminal(
		func() { con.setWidth(render.Width(a.s.Out, a.s.Env)) },
		func() {
			if f, ok := in.(*os.File); ok && edit {
				editMode(int(f.Fd()))
			}
			con.redraw()
		})
	ictx, cancel := context.WithCancel(ctx)
	a.startInput = func(_ context.Context, ch chan<- inputMsg) { readTerminal(ictx, in, con, ch) }

	err := a.run(ctx, nil)

	cancel()
	stopWatch()
	con.close()
	restore()
	a.s.Err = stderr
	if u.detached || cmdutil.CodeOf(err) == cmdutil.ExitInterrupted {
		cmdutil.Sayf(stderr, prog, "%s", u.detachMessage())
	}
	return err
}

// readTerminal reads what the person types: keys, edited on the console's input line, or
// whole lines where the terminal edits them itself.
func readTerminal(ctx context.Context, in io.Reader, con *console, ch chan<- inputMsg) {
	send := func(m inputMsg) bool {
		select {
		case ch <- m:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if !con.edit {
		r := bufio.NewReader(in)
		for {
			s, err := r.ReadString('\n')
			if s != "" && (err == nil || strings.TrimSpace(s) != "") {
				if !send(inputMsg{typed: con.cookedLine(strings.TrimRight(s, "\r\n"))}) {
					return
				}
			}
			if err != nil {
				send(inputMsg{eof: true})
				return
			}
		}
	}
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			lines, eof := con.feed(buf[:n])
			for i := range lines {
				if !send(inputMsg{typed: &lines[i]}) {
					return
				}
			}
			if eof {
				send(inputMsg{eof: true})
				return
			}
		}
		if err != nil {
			send(inputMsg{eof: true})
			return
		}
	}
}

// cookedLine is a line the terminal's own line editing delivered: the prompt shown when it
// came answers it.
func (c *console) cookedLine(text string) *typedLine {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &typedLine{text: text, promptID: c.promptID}
	if !c.closed {
		// The person's Enter ended the prompt's line: show it again on the next.
		io.WriteString(c.out, c.prompt)
		c.drawn = true
	}
	return t
}

// prompt is an approval_request or a question waiting for the person's answer.
type prompt struct {
	id  int
	typ string // wire.TypeApproval or wire.TypeQuestion
	q   *wire.Question
}

// ui keeps what the person sees in step with the session: the prompt on the input line,
// the answers typed to prompts, the tasks held while one runs.
type ui struct {
	a     *attacher
	con   *console
	color bool

	prompts      []prompt // waiting, oldest first, as the gate sees them
	serial       int
	width        int // the renderer's
	held         int // tasks the gate held, as last noted
	saidReadOnly bool
	detached     bool
}

func (u *ui) note(format string, args ...any) error {
	if err := u.a.rend.Note(fmt.Sprintf(format, args...)); err != nil {
		return err
	}
	err := u.a.out.Flush()
	u.con.settle()
	return err
}

// event follows an event the daemon sent (already rendered and observed by the gate).
func (u *ui) event(ev wire.Event) error {
	switch {
	case ev.Type == wire.TypeApproval || ev.Type == wire.TypeQuestion:
		// Its event is rendered already: it goes on the screen with the input line asking
		// for its answer below it.
		u.serial++
		p := prompt{id: u.serial, typ: ev.Type}
		if ev.Type == wire.TypeQuestion {
			p.q = &wire.Question{}
			if ev.Decode(p.q) != nil {
				p.q = &wire.Question{}
			}
		}
		u.prompts = append(u.prompts, p)
	case wire.EndsPrompts(ev.Type):
		if ev.Type == wire.TypeHello && u.a.gate.ReadOnly() && !u.saidReadOnly {
			u.saidReadOnly = true
			if err := u.a.rend.Note("the token is read-only: you can watch, but typed tasks are not sent"); err != nil {
				return err
			}
		}
		// As the gate: a new connection voids prompts (the daemon asks again); a finished
		// task or turn waits for no answer.
		if len(u.prompts) == 0 {
			return nil
		}
		u.prompts = nil
	default:
		return nil
	}
	return u.refresh()
}

// followWidth renders at the terminal's new width once it was resized.
func (u *ui) followWidth() {
	w := u.con.cols()
	if w == u.width {
		return
	}
	u.a.rend.Close()
	u.a.rend = render.New(u.a.out, render.Options{Color: u.a.o.color, Width: w, Timestamps: u.a.o.timestamps})
	u.width = w
}

// refresh puts the prompt for the current state on the input line.
// Whatever was rendered before it (the prompt's event, the answer) is written first.
func (u *ui) refresh() error {
	if len(u.prompts) == 0 {
		u.con.setPrompt(u.paint("\x1b[1;36m", "› "), 2, 0)
	} else {
		p := u.prompts[0]
		text := asking.Approval
		if p.typ == wire.TypeQuestion {
			text = questionPrompt(p.q)
		}
		bar := u.paint("\x1b[1;33m", "┃ ")
		if aside := u.con.setPrompt(bar+u.paint("\x1b[1m", text), 2+render.StringWidth(text), p.id); aside {
			if err := u.a.rend.Note("the line you were typing is kept for after the answer"); err != nil {
				return err
			}
		}
	}
	err := u.a.out.Flush()
	u.con.settle()
	return err
}

func (u *ui) paint(sgr, s string) string {
	if !u.color {
		return s
	}
	return sgr + s + "\x1b[0m"
}

// questionPrompt is the input line's prompt for a question.
func questionPrompt(q *wire.Question) string {
	switch n := len(q.Options); {
	case n == 1 && q.AllowOther:
		return "answer 1 or your own (empty skips): "
	case n == 1:
		return "answer 1 (empty skips): "
	case n > 0 && q.AllowOther:
		return fmt.Sprintf("answer 1-%d or your own (empty skips): ", n)
	case n > 0:
		return fmt.Sprintf("answer 1-%d (empty skips): ", n)
	}
	return "answer (empty skips): "
}

// questionAnswer reads a typed answer to a question: an option's number, an option's text,
// any text when the question allows its own answers, or nothing to skip (nil). ok is false
// when the answer fits none of these, and the question is asked again.
func questionAnswer(q *wire.Question, s string) (answer *string, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, true
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(q.Options) {
		o := q.Options[n-1]
		return &o, true
	}
	for _, o := range q.Options {
		if strings.EqualFold(strings.TrimSpace(o), s) {
			return &o, true
		}
	}
	if len(q.Options) == 0 || q.AllowOther {
		return &s, true
	}
	return nil, false
}

// bareAnswer is a line that reads as an answer to a prompt, not as a task.
func bareAnswer(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "y", "yes", "n", "no":
		return true
	}
	return false
}

// line handles a line the person typed: the answer to the prompt it was typed at, else a task.
func (u *ui) line(t typedLine) error {
	if t.promptID != 0 {
		if len(u.prompts) == 0 || u.prompts[0].id != t.promptID {
			return u.note("not sent: %q answered a prompt that no longer waits", cmdutil.FirstLine(t.text))
		}
		p := u.prompts[0]
		var in wire.Input
		if p.typ == wire.TypeApproval {
			var allow bool
			switch asking.Read(t.text) {
			case asking.Allow:
				allow = true
			case asking.Deny:
			default:
				return u.note("%s: %q was not sent as a task", asking.Hint, cmdutil.FirstLine(strings.TrimSpace(t.text)))
			}
			in = wire.Input{Line: wire.ApprovalResponse(allow), Type: wire.TypeApprovalResponse}
		} else {
			ans, ok := questionAnswer(p.q, t.text)
			if !ok {
				return u.note("%q is not an option: pick 1-%d, or press enter to skip", strings.TrimSpace(t.text), len(p.q.Options))
			}
			in = wire.Input{Line: wire.QuestionResponse(ans), Type: wire.TypeQuestionResponse}
		}
		u.a.gate.Answer(in)
		if err := u.a.rend.Event(wire.Event{Type: in.Type, Raw: in.Line}); err != nil {
			return err
		}
		u.prompts = u.prompts[1:]
		return u.refresh()
	}
	text := strings.TrimSpace(t.text)
	if text == "" {
		return nil
	}
	if bareAnswer(text) {
		if len(u.prompts) > 0 {
			return u.note("%q was typed before the prompt appeared, so it does not answer it", text)
		}
		return u.note("no prompt waits for an answer: %q was not sent", text)
	}
	in, ok := wire.ParseInput([]byte(t.text))
	if !ok {
		return nil
	}
	u.a.gate.Push(in)
	return nil
}

// afterPump notes tasks the gate holds while ours is queued or running.
func (u *ui) afterPump() error {
	w := u.a.gate.Waiting()
	defer func() { u.held = w }()
	if w > u.held {
		why := "the current one"
		if len(u.prompts) > 0 {
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
		if len(u.prompts) > 0 {
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
