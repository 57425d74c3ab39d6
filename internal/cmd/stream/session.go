package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fuseraft/fr/internal/arrival"
	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/passthrough"
	"github.com/fuseraft/fr/internal/proc"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/sessioninput"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

// options are what fr-stream's command line asks for (optionsFrom).
type options struct {
	mode         string // "repl" or "run"
	fuseraftFlag string // --fuseraft
	bin          string // the fuseraft found (run)
	fuseraftArgs []string
	env          []string // added to the environment
	input        string
	inputOnce    bool
	grace        time.Duration
	drain        time.Duration // after fuseraft exits, how long its stdout may stay open and empty
	anyVersion   bool
	maxLine      int // the longest input line; 0: wire.DefaultMaxLine
	pretty       bool
	timestamps   bool
	color        bool
	arrival      *arrival.Stamper // --arrival-time
	budget       *budget.Budget   // nil: no limits
	recordPath   string           // --record-input
	record       *inputRecord     // its file once open (run), or nil
}

// Timings that are not flags.
var (
	// doubleInterrupt is how soon a second SIGINT must follow the first to end the session.
	doubleInterrupt = 2 * time.Second
	// stopWait is how long a stopped child gets between SIGTERM and SIGKILL.
	stopWait = 2 * time.Second
	// drainPoll is how often, once fuseraft has exited, fr-stream looks whether its stdout
	// still holds anything unread (see options.drain).
	drainPoll = 100 * time.Millisecond
	// watchStdout tells when our stdout's reader has gone away; tests may replace it.
	watchStdout = sessioninput.WatchStdout
	// notifySignals subscribes to the signals fr-stream handles; tests may replace it.
	notifySignals = func(c chan<- os.Signal) {
		// SIGPIPE is caught so that a reader of our stdout that went away (| head -1) shows up
		// as a failed write, which ends the session quietly, rather than killing fr-stream.
		// Catching it (not ignoring it) keeps the child's default disposition.
		signal.Notify(c, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	}
)

// lockedWriter serialises writes to stderr, which several goroutines share.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// stdoutState is what the reader of fuseraft's stdout learned, read by the main loop once
// that reader is done.
type stdoutState struct {
	ready      bool
	sessionEnd bool
	result     *wire.RunResult
	midTurn    bool
	lastError  string // text of the last error event before ready
	protoErr   error  // an unsupported or missing protocolVersion in ready
	outErr     error  // writing our stdout failed
	readErr    error  // reading fuseraft's stdout failed (a line too long)
}

type session struct {
	o      *options
	s      cmdutil.Streams
	errw   *lockedWriter
	out    *wire.Writer
	render *render.Renderer
	term   *terminal // a person at the terminal (terminal.go), or nil
	pump   *sessioninput.Pump
	proc   *wire.Process // fuseraft

	stdinOnce   sync.Once
	versionOnce sync.Once

	// ready says ready has come; over that the run's result or the session's end has.
	ready, over atomic.Bool

	// A limit breached: breached is closed once, after the stderr line; interrupted says
	// whether the breach could interrupt something.
	breachOnce  sync.Once
	breached    chan struct{}
	interrupted atomic.Bool
	inputWarned atomic.Bool
	// The prompts observed and those this session denied itself after a breach, per kind
	// (approval_request, question), under denyMu.
	denyMu        sync.Mutex
	asked, denied [2]int

	// outGone says stdout's reader has gone away (a failed write, or the watcher); goneDenied
	// counts the prompts fr-stream denied itself since, as nobody could answer them.
	outGone    atomic.Bool
	goneDenied atomic.Int64
	// taken counts the lines of fuseraft's stdout looked at, so that draining it after
	// fuseraft exits can tell a reader at work from one waiting for nothing.
	taken atomic.Int64
	// The prompts nothing can answer once input has ended, said on stderr.
	unanswered unanswered
}

// running says a turn (repl) or the run is going on, so there is something to interrupt.
// fuseraft drops an interrupt with nothing running; fr-stream does the same rather than send
// SIGINT to an idle fuseraft.
func (ss *session) running() bool { return ss.pump.Gate.Running() }

func (ss *session) warnf(format string, args ...any) {
	cmdutil.Warnf(ss.errw, prog, format, args...)
}

// closeStdin closes fuseraft's stdin, which is how fuseraft learns input has ended. It also
// unblocks a write in progress (fuseraft not reading).
func (ss *session) closeStdin() {
	ss.stdinOnce.Do(func() { ss.proc.Stdin.Close() })
}

func (ss *session) send(line []byte) error {
	if ss.o.budget != nil {
		var ok bool
		if line, ok = ss.limitLine(line); !ok {
			return nil
		}
	}
	// One write per line, so a line is never interleaved with anything.
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	_, err := ss.proc.Stdin.Write(buf)
	if err == nil {
		ss.o.record.line(buf)
	}
	return err
}

// interrupt interrupts the running turn or run: SIGINT where signals exist, else an interrupt
// line. It reports false when nothing is running.
func (ss *session) interrupt() bool {
	if !ss.running() {
		return false
	}
	if !ss.proc.Interrupt() {
		ss.pump.PushInput(wire.Input{Line: wire.Interrupt(), Type: wire.TypeInterrupt})
	}
	return true
}

// runSession runs fuseraft as o asks and streams the session: it starts fuseraft, the reader
// of its stdout (readEvents) and of our input (readInput), then waits for the session to end
// (ending) and turns how it ended into fr-stream's exit status (outcome).
func runSession(ctx context.Context, s cmdutil.Streams, o *options) error {
	// Signals first: SIGPIPE can come with the first event written.
	sigs := make(chan os.Signal, 4)
	notifySignals(sigs)
	defer signal.Stop(sigs)

	ss := &session{o: o, s: s, errw: &lockedWriter{w: s.Err}, breached: make(chan struct{})}
	if o.budget != nil {
		// A budget file's totals may have reached a limit already: then nothing starts.
		if br := o.budget.Start(); br != nil {
			return br.Err("not started")
		}
		defer o.budget.Close()
	}
	ss.openOutput()
	if ss.term != nil {
		defer ss.term.close()
	}
	exited, err := ss.startFuseraft()
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e := &ending{ss: ss, sigs: sigs, exitedC: exited, exited: exited, stdoutR: ss.proc.Stdout}
	e.inputErr, e.inputDoneC = ss.startInput(ctx)

	// A reader of our stdout that goes away while fr-stream has nothing to write (it waits for
	// the answer to a prompt) is noticed by watching stdout, not only by the next write.
	if ss.term == nil {
		gone, stopWatch := watchStdout(s.Out)
		defer stopWatch()
		e.outGoneC = gone
	}

	// Output: fuseraft's stdout, line by line, to our stdout.
	var st stdoutState
	outDone := make(chan struct{})
	protoBad := make(chan struct{})
	outBroken := make(chan struct{})
	go func() {
		defer close(outDone)
		ss.readEvents(e.stdoutR, &st, protoBad, outBroken)
	}()
	e.outDone, e.protoBad, e.outBroken = outDone, protoBad, outBroken
	e.breachedC = ss.breached
	if o.budget != nil {
		if left, ok := o.budget.Left(); ok {
			e.durationC = time.After(left)
		}
	}
	defer e.stopTicker()

	e.wait(ctx)
	e.waitExit(&st)
	cancel()
	return ss.finish(&st, e)
}

// openOutput decides how events are written: as they are (JSONL), rendered for a person
// (pretty), or in a chat on the terminal (terminal.go).
func (ss *session) openOutput() {
	ss.out = wire.NewWriter(ss.s.Out)
	if !ss.o.pretty {
		return
	}
	opts := render.OutputOptions(ss.s, ss.o.color)
	opts.Timestamps = ss.o.timestamps
	ss.render = render.New(ss.out, opts)
	if interactive(ss.s, ss.o) {
		ss.term = ss.openTerminal()
	}
}

// startFuseraft starts fuseraft; exited says its exit, once it has exited and its stderr is
// relayed.
func (ss *session) startFuseraft() (exited chan error, err error) {
	o := ss.o
	// fuseraft's stderr is relayed through termsafe: it may quote tool output.
	childErr := termsafe.NewWriter(ss.errw)
	cmd := wire.Command{Bin: o.bin, Args: o.fuseraftArgs, Env: o.env, Stderr: childErr}
	if o.budget != nil {
		// Held to limits: fuseraft gets no further ahead of the checks than a pipe page.
		cmd.OutputPipe = limitedPipe
	}
	p, err := wire.Start(cmd)
	if err != nil {
		return nil, cmdutil.StartFailed(o.bin, err)
	}
	ss.proc = p
	exited = make(chan error, 1)
	go func() {
		err := p.Wait()
		_ = childErr.Flush()
		exited <- err
	}()
	return exited, nil
}

// stop closes fuseraft's stdin and stops it. Whatever happens, the child does not outlive
// us: every path waits for its exit.
func (ss *session) stop() {
	ss.closeStdin()
	ss.proc.Stop(stopWait)
}

// startInput starts the Pump that takes input lines from stdin or --input (or the person at
// the terminal), through the Gate, to fuseraft's stdin. inputErr says why reading input
// failed; inputDone is closed once input has ended and what could be sent was.
func (ss *session) startInput(ctx context.Context) (inputErr chan error, inputDone chan struct{}) {
	ss.pump = ss.newPump()
	inputErr = make(chan error, 1)
	go func() {
		if ss.term != nil {
			ss.term.read(ctx)
			return
		}
		if err := ss.readInput(ctx); err != nil && ctx.Err() == nil {
			inputErr <- err
		}
		ss.pump.EndInput()
	}()
	inputDone = make(chan struct{})
	go func() {
		held, err := ss.pump.Run(ctx)
		if err == nil && held > 0 {
			ss.warnf("input ended with %d line(s) still held (for the answer to a prompt, or for the end of a turn); they were not sent", held)
		}
		ss.unanswered.end(ss)
		// A send error means fuseraft's stdin is gone (it exited); its exit is reported below.
		ss.closeStdin()
		close(inputDone)
	}()
	return inputErr, inputDone
}

// newPump is the Pump of the session's input, gated as the mode asks.
func (ss *session) newPump() *sessioninput.Pump {
	mode := wire.Stdio
	if ss.o.mode == "run" {
		mode = wire.Bridge
	}
	gate := wire.NewGate(mode)
	pump := &sessioninput.Pump{
		Gate: gate,
		Send: ss.send,
		Dropped: func(d wire.Decision) {
			ss.warnf("dropped %s: %s", d.Input.Type, d.Reason)
		},
	}
	var fullOnce sync.Once
	pump.Full = func(held int) {
		// Reading input waits for a held line to go. Behind a turn that is backpressure; behind
		// a prompt, only an answer already read can free it.
		if p := gate.Pending(); p != "" {
			fullOnce.Do(func() {
				ss.warnf("%d input lines are held while a %s waits for its answer; no more input is read until one of them is sent", held, p)
			})
		}
	}
	pump.Interrupt = func() bool {
		if gate.Waiting() > 0 || (gate.Busy() && !gate.Running()) {
			// Before ready, or behind messages still held: it interrupts what they start,
			// so it goes as a line, in order.
			return false
		}
		if !gate.Running() {
			ss.warnf("dropped interrupt: nothing is running")
			return true
		}
		// Where there are no signals it is sent as a line, in turn.
		return ss.proc.Interrupt()
	}
	return pump
}

// readInput reads input lines from stdin or --input into the Pump, until input ends.
func (ss *session) readInput(ctx context.Context) error {
	o := ss.o
	src := sessioninput.Source{Path: o.input, Stdin: ss.s.In, Once: o.inputOnce, MaxLine: o.maxLine}
	err := src.Read(ctx, func(line []byte) error {
		if isEndOfInput(line) {
			return errEndOfInput
		}
		if o.budget != nil && o.budget.Breached() != nil {
			if !ss.inputWarned.Swap(true) {
				ss.warnf("input read after the limit was reached is not sent")
			}
			return nil
		}
		ss.pump.Push(line)
		return nil
	})
	if errors.Is(err, errEndOfInput) {
		return nil
	}
	return err
}

// ending is the session's main loop: it waits for fuseraft's stdout to end, acting meanwhile
// on what ends a session (the end of input, --grace, a limit, a signal, a closed stdout, a
// broken protocol), and records how it ended.
type ending struct {
	ss      *session
	sigs    <-chan os.Signal
	exited  <-chan error // fuseraft's exit
	stdoutR io.ReadCloser

	// What the loop waits for; nil once it is not waited for any more.
	exitedC                       <-chan error
	inputErr                      <-chan error
	inputDoneC, outDone           <-chan struct{}
	protoBad, outBroken, outGoneC <-chan struct{}
	breachedC                     <-chan struct{}
	graceC, durationC, drainC     <-chan time.Time
	drainTick                     *time.Ticker

	exitErr      error // fuseraft's exit, once known
	inputFailed  error // an input line over the limit
	graceExpired bool
	userEnded    bool
	isExited     bool
	lastInt      time.Time // the last SIGINT
	idleSince    time.Time // since when fuseraft's stdout, after its exit, has been empty
	lastTaken    int64
}

// wait runs the loop until fuseraft's stdout has been read to its end (or given up on).
func (e *ending) wait(ctx context.Context) {
	ss := e.ss
	for {
		select {
		case <-e.outDone:
			return
		case e.exitErr = <-e.exitedC:
			e.fuseraftExited()
		case <-e.drainC:
			e.drain()
		case err := <-e.inputErr:
			e.inputFailedWith(err)
		case <-e.inputDoneC:
			e.inputDoneC = nil
			e.startGrace()
		case <-e.graceC:
			e.graceExpired = true
			ss.stop()
		case <-e.durationC:
			e.durationC = nil
			e.tick()
		case <-e.breachedC:
			e.limitReached()
		case <-e.protoBad:
			e.protoBad = nil
			ss.stop()
		case <-e.outBroken:
			e.outBroken = nil
			e.closeOut()
		case <-e.outGoneC:
			e.outGoneC = nil
			e.closeOut()
		case sig := <-e.sigs:
			e.signal(sig)
		case <-ctx.Done():
			e.userEnded = true
			ss.stop()
			e.stopDrain()
		}
	}
}

// startGrace starts --grace, the time fuseraft has to end the session, unless it runs.
func (e *ending) startGrace() {
	if e.graceC == nil {
		e.graceC = time.After(e.ss.o.grace)
	}
}

// closeOut acts on nobody reading our stdout any more: the session ends, within --grace.
func (e *ending) closeOut() {
	ss := e.ss
	interrupted := ss.stdoutGone()
	e.startGrace()
	if ss.o.mode == "run" && !interrupted && !ss.over.Load() {
		// Nothing to interrupt (before ready): stop fuseraft.
		ss.stop()
	}
}

// stopDrain stops reading fuseraft's stdout once fuseraft has exited.
func (e *ending) stopDrain() {
	if e.isExited {
		e.stdoutR.Close()
	}
}

func (e *ending) stopTicker() {
	if e.drainTick != nil {
		e.drainTick.Stop()
	}
}

// fuseraftExited acts on fuseraft's exit: what it wrote is read to the end of its stdout,
// however long that takes. Something it started may hold the pipe open, though: reading stops
// once the pipe has stayed empty, with no line looked at, for --drain.
func (e *ending) fuseraftExited() {
	e.exitedC, e.isExited = nil, true
	e.drainTick = time.NewTicker(drainPoll)
	e.drainC, e.lastTaken = e.drainTick.C, e.ss.taken.Load()
}

// drain looks whether fuseraft's stdout, after its exit, still has something to read.
func (e *ending) drain() {
	ss := e.ss
	taken := ss.taken.Load()
	if n, ok := pipeBuffered(e.stdoutR); (ok && n > 0) || taken != e.lastTaken {
		e.idleSince, e.lastTaken = time.Time{}, taken
		return
	}
	if e.idleSince.IsZero() {
		e.idleSince = time.Now()
		return
	}
	if time.Since(e.idleSince) >= ss.o.drain {
		ss.warnf("fuseraft has exited, but something it started still holds its output open; stopped reading it after --drain %s with nothing more", ss.o.drain)
		e.drainTick.Stop()
		e.drainC = nil
		e.stdoutR.Close()
	}
}

// inputFailedWith acts on input that could not be read.
func (e *ending) inputFailedWith(err error) {
	if wire.IsLineTooLong(err) {
		e.inputFailed = err // said once the session is over, as its exit status
		return
	}
	e.ss.warnf("%v; input ended", err)
}

// tick checks --max-duration.
func (e *ending) tick() {
	b := e.ss.o.budget
	if br := b.Tick(); br != nil {
		e.ss.breach(br)
		return
	}
	// Other runs sharing a budget file may have used time meanwhile.
	left, _ := b.Left()
	e.durationC = time.After(max(left, 100*time.Millisecond))
}

// limitReached acts on a limit reached: the session gets --grace to end after its interrupt.
func (e *ending) limitReached() {
	ss := e.ss
	e.breachedC, e.durationC = nil, nil
	e.startGrace()
	if ss.o.mode == "run" && !ss.interrupted.Load() && !ss.over.Load() {
		// Nothing to interrupt yet (before ready): stop fuseraft.
		ss.stop()
	}
}

// signal acts on a signal: SIGINT interrupts the turn, a second one soon after ends the
// session; SIGTERM and SIGHUP end input. SIGPIPE needs nothing: our reader went away, and the
// failed write says so and ends the session.
func (e *ending) signal(sig os.Signal) {
	ss := e.ss
	switch sig {
	case os.Interrupt:
		if !e.lastInt.IsZero() && time.Since(e.lastInt) < doubleInterrupt {
			e.userEnded = true
			ss.stop()
			e.stopDrain()
			return
		}
		e.lastInt = time.Now()
		// Said before the interrupt, so that it comes before what the turn says of it.
		what := "nothing is running"
		if ss.running() {
			what = "interrupting the turn"
		}
		fmt.Fprintf(ss.errw, "%s: %s (interrupt again within %s to end the session)\n", prog, what, doubleInterrupt)
		ss.interrupt()
	case syscall.SIGTERM, syscall.SIGHUP:
		// End input now: messages still held for a turn are not sent.
		ss.pump.Abort()
		e.stopDrain()
	}
}

// waitExit waits for fuseraft's exit once it has closed its stdout: it is exiting. It gets
// --grace (or what is left of it) to do so, then it is stopped.
func (e *ending) waitExit(st *stdoutState) {
	if e.isExited {
		return
	}
	waitC := e.graceC
	if waitC == nil {
		waitC = time.After(e.ss.o.grace)
	}
	select {
	case e.exitErr = <-e.exited:
	case <-waitC:
		if !e.graceExpired && !st.sessionEnd && st.result == nil {
			e.graceExpired = true
		}
		e.ss.stop()
		e.exitErr = <-e.exited
	}
}

// finish renders what is left, flushes our stdout and says how the session ended.
func (ss *session) finish(st *stdoutState, e *ending) error {
	ss.closeStdin()
	if ss.render != nil {
		ss.render.Close()
	}
	if ss.term != nil {
		ss.term.close()
	}
	if err := ss.out.Flush(); err != nil && st.outErr == nil {
		st.outErr = err
	}
	if e.inputFailed != nil && st.protoErr == nil && st.outErr == nil && !ss.outGone.Load() && !e.userEnded {
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage, "%v", e.inputFailed),
			"input lines are tasks, messages and answers; send a file's contents through fuseraft's own tools")
	}
	return ss.outcome(st, e.exitErr, e.userEnded, e.graceExpired)
}

// outcome turns how the session ended into fr-stream's exit status.
func (ss *session) outcome(st *stdoutState, exitErr error, userEnded, graceExpired bool) error {
	o := ss.o
	switch {
	case st.protoErr == errSecondReady:
		return cmdutil.WithHint(&cmdutil.Error{Code: cmdutil.ExitProtocol, Err: st.protoErr},
			"fuseraft broke the protocol; the session was stopped so that no answer reached the wrong prompt")
	case st.protoErr != nil:
		var ve *wire.VersionError
		if errors.As(st.protoErr, &ve) {
			return cmdutil.WithHint(st.protoErr, "upgrade fr, or pass --any-version to go on anyway")
		}
		return cmdutil.WithHint(&cmdutil.Error{Code: cmdutil.ExitProtocol, Err: st.protoErr}, "pass --any-version to go on anyway")
	case st.outErr != nil && !wire.IsBrokenPipe(st.outErr):
		return fmt.Errorf("writing output: %w", st.outErr)
	case st.outErr != nil || ss.outGone.Load():
		// A reader that had enough (| head -1) is a quiet end; one that left a prompt without
		// its answer is not.
		if n := ss.goneDenied.Load(); n > 0 {
			return cmdutil.Errorf(cmdutil.ExitFailed, "stdout was closed while %d prompt(s) waited for an answer: fr-stream denied them and ended the session", n)
		}
		return nil
	case o.budget != nil && o.budget.Breached() != nil:
		return o.budget.Breached().Err("")
	case userEnded:
		return cmdutil.Errorf(cmdutil.ExitInterrupted, "interrupted: the session was ended")
	case st.readErr != nil:
		return fmt.Errorf("reading fuseraft's output: %w", st.readErr)
	case !st.ready && st.result != nil:
		// A run that fails before it starts sends only its result: a normal end.
		return failedBeforeStart(st.result)
	case !st.ready:
		what := "fuseraft ended before it was ready (" + proc.ExitOf(exitErr).String() + ")"
		if st.lastError != "" {
			what = "fuseraft ended before it was ready: " + st.lastError
		}
		return cmdutil.Errorf(cmdutil.ExitFailed, "%s", what)
	}
	if o.mode == "run" {
		if st.result != nil {
			if st.result.ExitCode != 0 {
				return cmdutil.Exit(st.result.ExitCode)
			}
			return nil
		}
		if graceExpired {
			return cmdutil.Errorf(cmdutil.ExitFailed, "fuseraft sent no result within --grace %s; stopped it", o.grace)
		}
		return cmdutil.Errorf(cmdutil.ExitFailed, "fuseraft %s before the run's result", proc.ExitOf(exitErr).String())
	}
	if st.sessionEnd {
		return nil
	}
	if graceExpired {
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "fuseraft did not end the session within --grace %s of the end of input; stopped it", o.grace),
			"a longer --grace gives it time for its last model call")
	}
	if st.midTurn {
		return cmdutil.Errorf(cmdutil.ExitFailed, "fuseraft %s in the middle of a turn", proc.ExitOf(exitErr).String())
	}
	if exitErr == nil {
		ss.warnf("fuseraft exited without session_end")
		return nil
	}
	return cmdutil.Errorf(cmdutil.ExitFailed, "fuseraft %s before session_end", proc.ExitOf(exitErr).String())
}

// failedBeforeStart is the outcome of a run whose only event was its result (sessionId null):
// its errorMessage on stderr and its exitCode, or 1 for a failure that says 0.
func failedBeforeStart(r *wire.RunResult) error {
	code := r.ExitCode
	if code == 0 && !r.Succeeded {
		code = cmdutil.ExitFailed
	}
	if code == 0 {
		return nil
	}
	msg := "the run failed before it started"
	if r.ErrorMessage != nil && *r.ErrorMessage != "" {
		msg = *r.ErrorMessage
	}
	return cmdutil.Errorf(code, "%s", msg)
}

// readEvents copies fuseraft's stdout: events to our stdout, everything else to stderr.
func (ss *session) readEvents(r io.ReadCloser, st *stdoutState, protoBad, outBroken chan struct{}) {
	defer r.Close()
	// Larger pipes on both sides: a flood moves in fewer, larger reads and writes. Held to
	// limits, fuseraft's stays small (limitedPipe) and is read a little at a time: a turn is
	// checked as its start is read, so fuseraft must not get far ahead of the reading.
	if ss.o.budget == nil {
		sessioninput.GrowPipe(r)
	}
	sessioninput.GrowPipe(ss.s.Out)
	if lines := ss.passthru(r); lines != nil {
		defer lines.Close()
		ss.passEvents(lines, st, protoBad, outBroken)
		return
	}
	flush := func() {
		if err := ss.out.Flush(); err != nil && st.outErr == nil {
			st.outErr = err
		}
	}
	var src io.Reader = r
	if ss.o.budget != nil {
		src = smallReads{r}
	}
	lr := wire.NewReader(src, wire.ReaderOptions{BeforeRead: flush})
	broken := false
	for {
		if st.outErr != nil && !broken {
			broken = true
			close(outBroken)
		}
		b, err := lr.ReadLine()
		if err != nil {
			ss.readFailed(err, st, protoBad)
			return
		}
		ev, ok, stop := ss.take(b, st, protoBad)
		if stop {
			return
		}
		if !ok || broken {
			// Nobody reads our output any more: fuseraft's is still read, and its prompts
			// denied, until it stops.
			continue
		}
		if ss.term != nil {
			err = ss.term.event(ev)
		} else if ss.render != nil {
			err = ss.render.Event(ev)
		} else {
			err = ss.out.WriteLine(ss.o.arrival.Event(ev.Raw))
		}
		if err != nil && st.outErr == nil {
			st.outErr = err
		}
	}
}

// passthru returns the way fuseraft's events go to our stdout without passing through
// fr-stream's memory twice (Linux, both pipes or a file), for plain JSONL output; nil when
// they go through a Reader and a Writer.
func (ss *session) passthru(r io.Reader) *passthrough.Lines {
	in, ok := r.(*os.File)
	out, ok2 := ss.s.Out.(*os.File)
	if !ok || !ok2 || ss.term != nil || ss.render != nil || ss.o.arrival != nil {
		return nil
	}
	return passthrough.New(in, out, wire.DefaultMaxLine)
}

// passEvents is readEvents' loop on a passthrough.Lines: each event goes out exactly as fuseraft
// wrote it (a \r before its line end dropped, a line end added to a last line without one),
// once the Gate has seen it.
func (ss *session) passEvents(lines *passthrough.Lines, st *stdoutState, protoBad, outBroken chan struct{}) {
	broken := false
	for n := int64(1); ; n++ {
		if st.outErr == nil {
			st.outErr = lines.OutErr()
		}
		if st.outErr != nil && !broken {
			broken = true
			close(outBroken)
		}
		line, err := lines.Next()
		if errors.Is(err, passthrough.ErrLineTooLong) {
			err = &wire.LineTooLongError{Line: n, Limit: wire.DefaultMaxLine}
		}
		if err != nil {
			ss.readFailed(err, st, protoBad)
			return
		}
		b := bytes.TrimSuffix(line, []byte("\n"))
		asIs := len(b) < len(line)
		if t := bytes.TrimSuffix(b, []byte("\r")); len(t) < len(b) {
			b, asIs = t, false
		}
		_, ok, stop := ss.take(b, st, protoBad)
		if stop {
			return
		}
		if !ok || broken {
			continue // a line not passed is dropped
		}
		if asIs {
			err = lines.Pass()
		} else {
			err = lines.Write(append(b[:len(b):len(b)], '\n'))
		}
		if err != nil && st.outErr == nil {
			st.outErr = err
		}
	}
}

// limitedPipe is the capacity of fuseraft's stdout pipe in a session held to limits, and the
// most read from it at a time: one page, the least a Linux pipe holds. fuseraft writes no more
// than this ahead of the turn fr-stream checks.
const limitedPipe = 4096

// smallReads reads at most limitedPipe bytes at a time, so that a Reader holds no more than
// that of what fuseraft wrote beyond the line looked at.
type smallReads struct{ r io.Reader }

func (s smallReads) Read(p []byte) (int, error) {
	if len(p) > limitedPipe {
		p = p[:limitedPipe]
	}
	return s.r.Read(p)
}

// readFailed records why reading fuseraft's stdout stopped.
func (ss *session) readFailed(err error, st *stdoutState, protoBad chan struct{}) {
	switch {
	case err == io.EOF:
	case wire.IsLineTooLong(err):
		st.readErr = err
		close(protoBad)
	case !errors.Is(err, os.ErrClosed):
		st.readErr = err
	}
}

// take looks at one line of fuseraft's stdout: an event is returned with ok, for our stdout,
// once the Gate has seen it; anything else goes to stderr. stop says reading must end (a
// handshake fuseraft's version cannot speak).
func (ss *session) take(b []byte, st *stdoutState, protoBad chan struct{}) (ev wire.Event, ok, stop bool) {
	ss.taken.Add(1)
	l := wire.ParseLine(b)
	ev, ok = l.Event()
	if !ok {
		if len(bytes.TrimSpace(b)) > 0 {
			ss.stray(b)
		}
		return ev, false, false
	}
	if l.NotText() {
		ss.refuseNotText(ev)
		return ev, false, false
	}
	if st.ready && ev.Type == wire.TypeReady {
		// One process is one session: answers written for the prompts before a second ready
		// could be read for those after it, so fr-stream stops rather than guess.
		st.protoErr = errSecondReady
		close(protoBad)
		return ev, false, true
	}
	if !st.ready {
		switch ev.Type {
		case wire.TypeReady:
			if err := wire.CheckHandshake(ev); err != nil {
				if !ss.o.anyVersion {
					st.protoErr = err
					close(protoBad)
					return ev, false, true
				}
				ss.versionOnce.Do(func() { ss.warnf("%v; going on as --any-version asks", err) })
			}
			st.ready = true
			ss.ready.Store(true)
		case wire.TypeError:
			var m wire.Message
			if ev.Decode(&m) == nil && m.Text != "" {
				st.lastError = m.Text
			}
		}
	}
	switch ev.Type {
	case wire.TypeSessEnd:
		st.sessionEnd = true
		ss.over.Store(true)
	case wire.TypeResult:
		var res wire.RunResult
		if ev.Decode(&res) == nil {
			st.result = &res
		}
		ss.over.Store(true)
	}
	switch {
	case ev.Type == wire.TypeTurnStart:
		st.midTurn = true
	case ev.Type == wire.TypeShellStart || ev.Type == wire.TypeShellEnd || wire.EndsTurn(ev.Type):
		st.midTurn = false
	}
	// The Gate learns of a prompt before anyone downstream can answer it.
	ss.unanswered.observe(ss, ev, func() {
		if ss.o.budget != nil {
			ss.observeLimited(ev)
		} else {
			ss.pump.Observe(ev)
		}
		if ss.outGone.Load() && wire.ChangesGate(ev.Type) {
			ss.denyGone()
		}
	})
	return ev, true, false
}

// pipeBuffered is how many bytes wait unread in r, a pipe; ok is false where that is not known.
func pipeBuffered(r io.Reader) (n int, ok bool) {
	if f, isFile := r.(*os.File); isFile {
		return sessioninput.Buffered(f)
	}
	return 0, false
}

// errSecondReady is a second ready from one fuseraft process.
var errSecondReady = &wire.ProtocolError{Msg: "fuseraft sent ready a second time in one session (one process is one session)"}

// errEndOfInput stops reading input at fuseraft's own end-of-input line.
var errEndOfInput = errors.New("end of input")

// isEndOfInput reports whether line is {"text":null} with no type or type user_input, which
// fuseraft reads as end of input. fr-stream closes fuseraft's stdin instead of sending it, so
// it works the same through a named pipe whose writers come and go.
func isEndOfInput(line []byte) bool {
	in, ok := wire.ParseInput(line)
	if !ok || (in.Type != "" && in.Type != wire.TypeUserInput) {
		return false
	}
	var v struct {
		Text json.RawMessage `json:"text"`
	}
	if json.Unmarshal(in.Line, &v) != nil {
		return false
	}
	return string(v.Text) == "null"
}

// observeLimited is Observe for a session held to limits: after a breach every prompt is
// denied here, before anyone downstream sees it, and in a REPL the end of the interrupted
// turn ends input.
func (ss *session) observeLimited(ev wire.Event) {
	k := -1
	switch ev.Type {
	case wire.TypeApproval:
		k = 0
	case wire.TypeQuestion:
		k = 1
	}
	ss.denyMu.Lock()
	if k >= 0 {
		ss.asked[k]++
	}
	ss.pump.Observe(ev)
	if k >= 0 && ss.o.budget.Breached() != nil {
		ss.denyLocked(k)
	}
	ss.denyMu.Unlock()
	before := ss.o.budget.Breached() != nil
	if br := ss.o.budget.Observe(ev); br != nil {
		ss.breach(br)
	}
	if ss.o.mode == "run" && before && ev.Type == "agent_starting" {
		// A turn that starts after the run was interrupted for a limit is interrupted at
		// once too (the run is stopped once --grace is up).
		ss.interrupt()
	}
	if ss.o.mode == "repl" && ss.o.budget.Breached() != nil {
		switch ev.Type {
		case wire.TypeTurnStart:
			// A message sent just before the breach started it.
			ss.interrupted.Store(ss.interrupt())
		case wire.TypeMessageEnd, wire.TypeCancelled, wire.TypeError:
			ss.pump.Abort()
		}
	}
}

// refuseNotText answers a prompt whose bytes are not UTF-8 itself (a denial, or a null answer),
// since nobody downstream can read it: it is shown to the Gate but never passed on.
func (ss *session) refuseNotText(ev wire.Event) {
	what := "denied it"
	if ev.Type == wire.TypeQuestion {
		what = "answered it with null"
	}
	ss.warnf("fuseraft sent %s; %s, not passed on: %s", wire.NotTextPrompt(ev.Type), what, cmdutil.FirstLine(string(ev.Raw)))
	if ss.o.budget == nil {
		ss.pump.Observe(ev)
		ss.pump.Answer(wire.Refusal(ev.Type))
		return
	}
	ss.observeLimited(ev)
	k := 0
	if ev.Type == wire.TypeQuestion {
		k = 1
	}
	ss.denyMu.Lock()
	ss.denyLocked(k)
	ss.denyMu.Unlock()
}

// stdoutGone acts, once, on stdout's reader having gone away: nobody can see a prompt any more,
// so the pending ones and every later one are denied; what runs is interrupted (an interrupt
// line, sent after the denials), and input ends,
// so that the session ends (the caller gives it --grace). It reports whether something was
// interrupted.
func (ss *session) stdoutGone() bool {
	if ss.outGone.Swap(true) {
		return false
	}
	ss.denyGone()
	running := ss.running()
	if running {
		// As a line, after the denials: a signal could cancel the turn before fuseraft reads
		// them, and a REPL would take an answer read after its prompt's turn for a message.
		ss.pump.Gate.Push(wire.Input{Line: wire.Interrupt(), Type: wire.TypeInterrupt})
	}
	ss.pump.Abort()
	return running
}

// denyGone denies the prompts nobody has answered, once stdout's reader has gone.
func (ss *session) denyGone() {
	ss.denyMu.Lock()
	defer ss.denyMu.Unlock()
	if n := ss.pump.DenyUnanswered("stdout was closed: nobody reads the session any more"); n > 0 {
		if ss.goneDenied.Add(int64(n)) == int64(n) {
			ss.warnf("stdout was closed while a prompt waited for its answer: denied, and the session ends")
		}
	}
	ss.denied = ss.asked // a limit breached later has nothing left to deny
}

// denyLocked answers the pending prompt of kind k with a denial (a skip for a question), unless
// this session denied it already. denyMu is held.
func (ss *session) denyLocked(k int) {
	if ss.denied[k] >= ss.asked[k] {
		return
	}
	ss.denied[k] = ss.asked[k]
	if k == 0 {
		ss.pump.Answer(wire.Input{Line: wire.ApprovalResponse(false), Type: wire.TypeApprovalResponse})
	} else {
		ss.pump.Answer(wire.Input{Line: wire.QuestionResponse(nil), Type: wire.TypeQuestionResponse})
	}
}

// breach acts on a limit breached: it says so on stderr, interrupts what runs, denies the
// pending prompt, and ends input once nothing runs (REPL). It acts once.
func (ss *session) breach(br *budget.Breach) {
	ss.breachOnce.Do(func() {
		what := "ending the session"
		running := ss.running()
		switch {
		case running && ss.o.mode == "run":
			what = "interrupting the run"
		case running:
			what = "interrupting the turn"
		case ss.o.mode == "run" && ss.over.Load():
			what = "the run is over"
		}
		cmdutil.Sayf(ss.errw, prog, "limit reached: %s; %s, and every later prompt is denied", br, what)
		ss.interrupted.Store(ss.interrupt())
		ss.denyMu.Lock()
		switch ss.pump.Gate.Pending() {
		case wire.TypeApproval:
			ss.denyLocked(0)
		case wire.TypeQuestion:
			ss.denyLocked(1)
		}
		ss.denyMu.Unlock()
		if ss.o.mode == "repl" && !running && !ss.turnComing() {
			ss.pump.Abort()
		}
		close(ss.breached)
	})
}

// limitLine is what becomes of a line about to be sent in a session held to limits: once a
// limit is breached, an answer goes as a denial (nothing is approved after a breach), an
// interrupt as it is, and nothing else; before, a message that starts a REPL turn is first
// checked against the limits. ok is false for a line not to send.
func (ss *session) limitLine(line []byte) (_ []byte, ok bool) {
	typ, _ := wire.TopLevelString(line, "type")
	if ss.o.budget.Breached() != nil {
		switch typ {
		case wire.TypeApprovalResponse:
			return wire.ApprovalResponse(false), true
		case wire.TypeQuestionResponse:
			return wire.QuestionResponse(nil), true
		case wire.TypeInterrupt:
			return line, true
		}
		if ss.o.mode == "repl" && !ss.running() {
			// The Gate takes this message for a turn that will now never start.
			ss.pump.Abort()
		}
		return nil, false
	}
	if ss.o.mode != "repl" || (typ != "" && typ != wire.TypeUserInput) {
		return line, true
	}
	if text, ok := wire.TopLevelString(line, "text"); ok && (strings.HasPrefix(text, "/") || strings.HasPrefix(text, "!")) {
		return line, true // a slash command or a shell escape is no turn
	}
	if br := ss.o.budget.BeforeTurn(); br != nil {
		ss.breach(br)
		if !ss.running() {
			// The Gate took this message for a turn that will now never start, and holds
			// what comes after it for that turn: input ends here, whatever it does.
			ss.pump.Abort()
		}
		return nil, false
	}
	return line, true
}

// turnComing reports whether a REPL message was sent whose turn_start has not come yet.
func (ss *session) turnComing() bool {
	return ss.ready.Load() && ss.pump.Gate.Busy()
}
