// Package sessioninput moves input lines into a live fuseraft session.
//
// A [Source] reads the lines a user or a script writes: from stdin, from a file, or from a named
// pipe (FIFO) whose writers may come and go. A Source holds a FIFO open for writing too, so its
// last writer closing it is not an end of file and nothing written in between is lost: one
// process can write approvals while another writes messages, each opening and closing the pipe
// as it likes, without ending the session. Only stdin, a regular file, or a FIFO read with Source.Once, end
// input at end of file.
//
// A [Pump] sends those lines to fuseraft through a [wire.Gate], the protocol's prompt state:
// while an approval_request or question is pending only its answer goes through and every other
// line waits, in order; on stdio, messages also wait while a turn runs (see [wire.Gate]); an
// answer with nothing pending is dropped. Feed the Pump every event
// fuseraft sends (Observe, before the event is passed on to anyone who might answer it) and
// every input line (Push); its Run loop writes what the Gate allows the moment it is allowed.
package sessioninput

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/fuseraft/fr/pkg/wire"
)

// Source is where input lines come from.
type Source struct {
	// Path is a file or named pipe to read; "" or "-" reads Stdin.
	Path  string
	Stdin io.Reader
	// Once ends input at the first end of file of a named pipe (its last writer closing it)
	// instead of waiting for the next writer.
	Once bool
	// MaxLine is the longest accepted line; 0 means wire.DefaultMaxLine.
	MaxLine int
}

// IsPipe reports whether path names a FIFO.
func IsPipe(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&os.ModeNamedPipe != 0
}

// Read calls fn with each input line (line end removed; the slice is only valid during the
// call) until end of input, which returns nil. A last line without a line end still counts at
// end of file. A named pipe is held open for writing as well, so it never reaches end of file
// (unless Once is set): writers that share it must end every line they write with a line end,
// or their lines run together. Read returns fn's first error, a read error, or ctx.Err() once
// ctx is done. Cancelling ctx unblocks a read in progress; with Once, a FIFO open waiting for
// its first writer cannot be unblocked, so callers should not wait for Read to return after
// cancelling (the blocked goroutine ends with the process).
func (s Source) Read(ctx context.Context, fn func(line []byte) error) error {
	if s.Path == "" || s.Path == "-" {
		if s.Stdin == nil {
			return nil
		}
		return readLines(ctx, s.Stdin, s.MaxLine, fn)
	}
	if IsPipe(s.Path) && !s.Once {
		// Opened for reading and writing, the pipe always has a writer (this process), so it
		// never reaches end of file and never has to be reopened. Reopening after each writer
		// left would lose whatever a new writer wrote between that end of file and the close,
		// because a pipe's buffer is discarded once no one has it open.
		f, err := os.OpenFile(s.Path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		stop := context.AfterFunc(ctx, func() { f.Close() })
		defer stop()
		return readLines(ctx, f, s.MaxLine, fn)
	}
	// Opening a FIFO for reading only blocks until a writer opens it.
	f, err := os.Open(s.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()
	return readLines(ctx, f, s.MaxLine, fn)
}

func readLines(ctx context.Context, r io.Reader, maxLine int, fn func([]byte) error) error {
	lr := wire.NewReader(r, wire.ReaderOptions{MaxLine: maxLine})
	for {
		b, err := lr.ReadLine()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				return ctx.Err()
			}
			if wire.IsLineTooLong(err) {
				return fmt.Errorf("input %w", err) // "input line N is longer than the limit of ..."
			}
			return fmt.Errorf("reading input: %w", err)
		}
		if err := fn(b); err != nil {
			return err
		}
	}
}

// MaxHeld is how many input lines a Pump holds, by default, before Push waits: lines waiting
// for the end of a turn, for a task's result, or for the answer to a prompt.
const MaxHeld = 1024

// Pump sends input lines to fuseraft through a Gate. Set the fields, then call Run in its own
// goroutine; Push, Observe and EndInput may be called from any goroutine.
//
// Input is bounded: while MaxHeld lines are held, Push waits until one is sent (or dropped),
// so a reader that calls Push stops reading and its writer is held back by the pipe, instead
// of the Pump holding all of its input. An answer that comes after that many held lines is
// not read until one of them goes; Full says when that happens.
type Pump struct {
	Gate *wire.Gate
	// Send writes one line (without its line end) to fuseraft. It is only called from Run.
	Send func(line []byte) error
	// Dropped is told about each input the Gate dropped: a response with nothing pending.
	Dropped func(d wire.Decision)
	// Interrupt, when set, is offered each interrupt line before it is queued. Returning true
	// means it was delivered out of band (SIGINT to the child), so it is not sent as a line;
	// that also lets it overtake a pending prompt, which a line never may.
	Interrupt func() bool
	// MaxHeld is how many held inputs make Push wait; 0 means MaxHeld.
	MaxHeld int
	// Full, when set, is told each time Push starts to wait, with how many inputs are held.
	Full func(held int)

	once    sync.Once
	kick    chan struct{}
	mu      sync.Mutex
	room    *sync.Cond // signalled when the Gate may hold fewer inputs, or Run has returned
	ended   bool
	aborted bool
	stopped bool // Run has returned: nothing will make room any more
}

func (p *Pump) init() {
	p.once.Do(func() {
		p.kick = make(chan struct{}, 1)
		p.room = sync.NewCond(&p.mu)
	})
}

// madeRoom wakes a Push waiting for room.
func (p *Pump) madeRoom() {
	p.init()
	p.mu.Lock()
	p.room.Broadcast()
	p.mu.Unlock()
}

// waitRoom waits while MaxHeld inputs are held. It reports false once Run has returned.
func (p *Pump) waitRoom() bool {
	p.init()
	max := p.MaxHeld
	if max <= 0 {
		max = MaxHeld
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	told := false
	for !p.stopped && p.Gate.Waiting() >= max {
		if !told && p.Full != nil {
			told = true
			p.mu.Unlock()
			p.Full(p.Gate.Waiting())
			p.mu.Lock()
			continue
		}
		p.room.Wait()
	}
	return !p.stopped
}

func (p *Pump) wake() {
	p.init()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Push parses an input line (wire.ParseInput: a JSON object as it is, other text as a
// user_input, a blank line not at all) and queues it, first waiting while MaxHeld inputs are
// held. It reports the parsed input and whether it was queued: once Run has returned nothing
// more is queued (nothing would send it).
func (p *Pump) Push(line []byte) (wire.Input, bool) {
	in, ok := wire.ParseInput(line)
	if !ok {
		return in, false
	}
	if !p.waitRoom() {
		return in, false
	}
	p.PushInput(in)
	return in, true
}

// PushInput queues an input that is already parsed. It never waits.
func (p *Pump) PushInput(in wire.Input) {
	if in.Type == wire.TypeInterrupt && p.Interrupt != nil && p.Interrupt() {
		return
	}
	p.Gate.Push(in)
	p.wake()
}

// Answer queues in, an approval_response or question_response, as the answer to the oldest
// prompt of its kind still pending (see [wire.Gate.Answer]): for an answer decided here, such
// as a denial of a prompt nobody may allow any more.
func (p *Pump) Answer(in wire.Input) {
	p.Gate.Answer(in)
	p.wake()
}

// DenyUnanswered makes the Gate approve nothing from now on and answers every pending prompt
// that has no answer yet with a denial (see [wire.Gate.DenyUnanswered]), for a client nobody
// can answer for any more. It returns how many prompts it answered.
func (p *Pump) DenyUnanswered(why string) int {
	n := p.Gate.DenyUnanswered(why)
	p.wake()
	return n
}

// Observe updates the prompt state from an event fuseraft sent. Call it before the event
// reaches anyone who may answer it, or their answer could arrive before the Gate knows the
// prompt and be dropped as stray.
func (p *Pump) Observe(ev wire.Event) {
	if !wire.ChangesGate(ev.Type) {
		// The Gate is as it was: nothing held can go now that could not before.
		return
	}
	p.Gate.Observe(ev)
	// Only held input can be released by an event. With none held, Run has nothing to send
	// and no Push waits for room; a Push from now on wakes Run itself. So a flood of events
	// with no input costs no goroutine switch per event.
	if p.Gate.Waiting() > 0 {
		p.wake()
		p.madeRoom()
	}
}

// EndInput says no more input will come. Run sends what it still can (messages held for a
// running turn go when it ends) and returns.
func (p *Pump) EndInput() {
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
	p.wake()
}

// Abort ends input at once: Run returns without waiting for a running turn to end, and
// messages held for it are not sent.
func (p *Pump) Abort() {
	p.mu.Lock()
	p.ended, p.aborted = true, true
	p.mu.Unlock()
	p.wake()
}

// Run sends inputs as the Gate allows until input has ended and nothing more can be sent,
// then returns how many inputs were still held (they could never be sent: they wait for the
// answer to a prompt, and no more input will come). Once input has ended it still waits for a
// running turn to end if messages are held for it. It returns early with Send's error, or
// ctx.Err().
func (p *Pump) Run(ctx context.Context) (held int, err error) {
	p.init()
	defer func() {
		p.mu.Lock()
		p.stopped = true
		p.room.Broadcast()
		p.mu.Unlock()
	}()
	for {
		for {
			d, ok := p.Gate.Next()
			if !ok {
				break
			}
			if err := p.carryOut(d); err != nil {
				return p.Gate.Waiting(), err
			}
		}
		p.mu.Lock()
		ended, aborted := p.ended, p.aborted
		p.mu.Unlock()
		// Messages held for a running turn still go when it ends; those held for the answer
		// to a prompt never will (no more input can bring it).
		if aborted || ended && !(p.Gate.Waiting() > 0 && p.Gate.Busy() && p.Gate.Pending() == "") {
			if !aborted && p.Gate.Waiting() > 0 {
				// The turn may have ended since Next last said no: ask again before
				// calling what is left unsendable.
				if d, ok := p.Gate.Next(); ok {
					if err := p.carryOut(d); err != nil {
						return p.Gate.Waiting(), err
					}
					continue
				}
			}
			return p.Gate.Waiting(), nil
		}
		select {
		case <-p.kick:
		case <-ctx.Done():
			return p.Gate.Waiting(), ctx.Err()
		}
	}
}

// carryOut sends or drops what the Gate decided, making room for one more held input.
func (p *Pump) carryOut(d wire.Decision) error {
	p.madeRoom()
	if d.Action == wire.Drop {
		if p.Dropped != nil {
			p.Dropped(d)
		}
		return nil
	}
	return p.Send(d.Input.Line)
}
