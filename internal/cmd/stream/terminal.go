package stream

import (
	"context"
	"sync"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/console"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/pkg/wire"
)

// terminal is fr-stream with a person at the terminal (stdin and stdout both terminals, pretty
// output, no --input): a chat on the same console as interactive fr-attach. Events are
// rendered above an input line; a line typed there is a message, or, while an approval or a
// question waits, its answer (y/N, an option's number or text, your own text where the
// question allows it). Ctrl-C interrupts the turn as it does in every mode, Ctrl-D ends input.
type terminal struct {
	ss    *session
	term  *console.Terminal
	ask   *console.Asker
	color bool

	mu    sync.Mutex // the renderer, shared by the event reader and the line reader
	rend  *render.Renderer
	width int
	// shown says an event has been rendered (the header, first); strays are the stray lines
	// of fuseraft's stdout that came before it (stray.go).
	shown  bool
	strays []string

	closeOnce sync.Once
}

// interactive says whether the session is a chat on the terminal: stdin and stdout terminals,
// pretty output (--format jsonl keeps the plain stream), input from stdin.
func interactive(s cmdutil.Streams, o *options) bool {
	return o.pretty && s.InTerminal && s.OutTerminal && (o.input == "" || o.input == "-")
}

// openTerminal puts the terminal in edit mode, and the session's output and diagnostics above
// its input line.
func (ss *session) openTerminal() *terminal {
	s := ss.s
	t := &terminal{ss: ss, color: ss.o.color}
	t.term = console.Open(s)
	t.ask = console.NewAsker(t.term.Console, t.color)
	t.term.HoldLines() // until the header is out (event)
	ss.out = wire.NewWriter(t.term)
	ss.render = nil // the terminal renders, at the width it follows
	t.width = t.term.Cols()
	t.rend = t.renderer()
	ss.errw.mu.Lock()
	if s.ErrTerminal {
		ss.errw.w = t.term.Stderr(ss.errw.w)
	}
	ss.errw.mu.Unlock()
	t.refresh()
	return t
}

func (t *terminal) renderer() *render.Renderer {
	return render.New(t.ss.out, render.Options{Color: t.color, Width: t.width, Timestamps: t.ss.o.timestamps,
		DiffMore: console.DiffMore, WrapStream: true})
}

// event renders an event fuseraft sent (the gate has observed it) and puts the prompt it
// asks, if any, on the input line.
func (t *terminal) event(ev wire.Event) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w := t.term.Cols(); w != t.width {
		t.rend.Close()
		t.width = w
		t.rend = t.renderer()
	}
	if err := t.rend.Event(ev); err != nil {
		return err
	}
	if !t.shown {
		// The header is out: what came before it, and the lines typed meanwhile, follow it.
		t.shown = true
		t.showStrays()
		err := t.ss.out.Flush()
		t.term.ReleaseLines()
		if err != nil {
			return err
		}
	}
	if t.ask.Observe(ev) {
		return t.refresh()
	}
	return nil
}

// refresh puts the prompt for what waits on the input line, after what was rendered.
func (t *terminal) refresh() error {
	if t.ask.Refresh("› ") {
		if err := t.rend.Note("the line you were typing is kept for after the answer"); err != nil {
			return err
		}
	}
	err := t.ss.out.Flush()
	t.term.Settle()
	return err
}

func (t *terminal) note(msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rend.Note(msg)
	t.ss.out.Flush()
	t.term.Settle()
}

// read reads what the person types until Ctrl-D (or ctx is done), then ends input.
func (t *terminal) read(ctx context.Context) {
	defer t.ss.pump.EndInput()
	t.term.Read(ctx, func(l console.Line, eof bool) bool {
		if eof {
			return false
		}
		t.line(l)
		return true
	})
}

// line handles a line the person typed.
func (t *terminal) line(l console.Line) {
	t.mu.Lock()
	r := t.ask.Read(l)
	switch {
	case r.Answer != nil:
		t.ss.pump.Answer(*r.Answer)
		t.rend.Event(wire.Event{Type: r.Answer.Type, Raw: r.Answer.Line})
		t.refresh()
		t.mu.Unlock()
	case r.Note != "":
		t.mu.Unlock()
		t.note(r.Note)
	case r.Task != "":
		t.mu.Unlock()
		if t.ss.o.mode == "run" {
			t.note("a run reads only answers to its prompts (and Ctrl-C): the line was not sent")
			return
		}
		if isEndOfInput([]byte(r.Task)) {
			t.ss.pump.EndInput()
			return
		}
		t.ss.pump.Push([]byte(r.Task))
	default:
		t.mu.Unlock()
	}
}

// close renders what is left and gives the terminal back.
func (t *terminal) close() {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.showStrays()
		t.rend.Close()
		t.ss.out.Flush()
		t.term.ReleaseLines()
		t.mu.Unlock()
		t.term.Close()
	})
}
