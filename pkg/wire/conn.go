package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options are what every Conn takes, however it was opened (Dial, Spawn, NewConn).
type Options struct {
	// Gate guards the input. nil makes a new one for the transport: Serve for a daemon,
	// Stdio for repl --vscode, Bridge for run --bridge. Pass one of your own to queue input
	// before the Conn opens, or to ask it about its state.
	Gate *Gate
	// AnyVersion goes on when the handshake (hello or ready) has a protocolVersion this
	// package does not support, instead of ending the Conn with a *VersionError. Warn, when
	// set, is told the *VersionError, once per Conn.
	AnyVersion bool
	Warn       func(err error)
	// Decided, when set, is told of each decision of the Gate as the Conn carries it out:
	// an input dropped (err nil), or one sent, with the write's error. It is called from
	// Flush (and so Next), in the goroutine that called it, one call at a time. An error it
	// returns stops Flush and is returned by it.
	Decided func(d Decision, err error) error
	// BeforeRead, when set, is called before each read from fuseraft, in the Conn's reading
	// goroutine: it may wait (for the consumer to catch up, say) until stop is closed. While
	// it waits, and while the consumer leaves a line untaken, the Conn reads nothing and a
	// WebSocket ping without a pong is not taken for a dead daemon.
	BeforeRead func(stop <-chan struct{})
}

// Conn is a live session with fuseraft: a connection to a serve daemon (Dial), a fuseraft
// repl --vscode or run --bridge it started (Spawn), or a stream already open (NewConn). Lines
// come from Next (or Lines, or Batches); input goes in with Send and reaches fuseraft only through the Conn's Gate, so whatever a caller
// sends, a prompt gets exactly one answer and nothing else is read in its place.
//
// Every event is shown to the Gate as it is read, before Next returns it. Input is written by
// Flush, which Next calls before it waits and after each line; a caller that takes lines from
// Lines calls Flush itself. Send, Answer, Flush and Close may be called from any goroutine;
// Next and Lines have one reader.
type Conn struct {
	opts Options
	gate *Gate

	batches chan []Line // what the reading goroutine hands on
	free    chan []Line // batches given back (Release), to be filled again
	pend    []Line      // the rest of the batch Next is taking lines from
	lines   chan Line   // for Lines, fed from batches once Lines is called
	linesOn sync.Once
	kick    chan struct{}
	done    chan struct{} // closed by Close
	ended   chan struct{} // closed when reading has stopped; err says why
	err     error

	ctx    context.Context
	cancel context.CancelFunc

	wmu  sync.Mutex
	cur  link // where input goes: nil until the handshake, and after a write failed
	lost atomic.Pointer[error]

	rmu     sync.Mutex
	reading link // the link being read, for Close

	closeOnce sync.Once
	warnOnce  sync.Once

	// What opens links, and what ends the Conn: daemon is set by Dial, proc by Spawn.
	daemon *Daemon
	proc   *process
}

// ErrClosed is what Next returns once Close was called.
var ErrClosed = errors.New("wire: the connection is closed")

// ErrReplaced says a newer connection with this client's id took over from this one, which
// therefore does not reconnect (two clients would take turns forever).
var ErrReplaced = errors.New("a newer connection with this client id replaced this one")

// NoHelloError is a daemon that accepted the connection but sent no hello in time.
type NoHelloError struct {
	Target string
	After  time.Duration
}

// Error names the daemon and how long it was given.
func (e *NoHelloError) Error() string {
	return fmt.Sprintf("%s accepted the connection but sent no hello within %s", e.Target, e.After)
}

func newConn(ctx context.Context, opts Options, mode Mode) *Conn {
	if opts.Gate == nil {
		opts.Gate = NewGate(mode)
	}
	c := &Conn{opts: opts, gate: opts.Gate, batches: make(chan []Line, batchQueue), free: make(chan []Line, batchQueue+2), kick: make(chan struct{}, 1),
		done: make(chan struct{}), ended: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(ctx)
	return c
}

// NewConn returns a Conn over a stream already open: fuseraft's lines are read from r, and
// input lines are written to w (both are closed by Close when they are io.Closers). The
// Gate's mode says which handshake to expect: hello first (Serve), else ready (Stdio,
// Bridge). It does not reconnect: the end of r ends it (Next returns io.EOF).
func NewConn(r io.Reader, w io.Writer, opts Options) *Conn {
	mode := Stdio
	if opts.Gate != nil {
		mode = opts.Gate.mode
	}
	c := newConn(context.Background(), opts, mode)
	l := &streamLink{c: closers{r, w}, r: newLinkReader(r), w: newBufWriter(w)}
	go c.run(l)
	return c
}

// Gate returns the Gate the Conn's input goes through, for its state: Pending, Waiting,
// TaskInFlight, ReadOnly, Running.
func (c *Conn) Gate() *Gate { return c.gate }

// Send queues an input. It is written by the next Flush when the Gate allows it: at once
// unless a prompt waits for its answer, a turn runs (Stdio) or a task of this client is in
// flight (Serve). Send never blocks.
func (c *Conn) Send(in Input) {
	c.gate.Push(in)
	c.wake()
}

// Answer queues in, an approval_response or question_response, as the answer to the oldest
// prompt of its kind still pending (see Gate.Answer).
func (c *Conn) Answer(in Input) {
	c.gate.Answer(in)
	c.wake()
}

func (c *Conn) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Flush writes every input the Gate allows now and drops those it refuses, telling
// Options.Decided of each. Before the handshake, and while a daemon is being reconnected to,
// nothing is written. A write that fails closes the connection (a daemon is then dialled
// again; a process's input has ended) and is told to Decided; Flush itself returns only
// what Decided returns.
func (c *Conn) Flush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for c.cur != nil {
		d, ok := c.gate.Next()
		if !ok {
			return nil
		}
		var err error
		if d.Action == Send {
			err = c.cur.writeLine(d.Input.Line)
		}
		if c.opts.Decided != nil {
			if herr := c.opts.Decided(d, err); herr != nil {
				return herr
			}
		}
		if err != nil {
			if ic, ok := c.cur.(inputCloser); ok {
				// A process's output is still read to its end.
				ic.closeInput()
			} else {
				c.lost.Store(&err)
				c.cur.close()
			}
			c.cur = nil
		}
	}
	return nil
}

// Connected reports whether input can be written now: the handshake is done and the
// connection up (a daemon's may be down while it is dialled again).
func (c *Conn) Connected() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.cur != nil
}

func (c *Conn) setLink(l link) {
	c.wmu.Lock()
	c.cur = l
	c.wmu.Unlock()
	c.wake()
}

// Next returns the next line fuseraft sent: an event (Line.Event), other JSON, or noise (a
// daemon's or fuseraft's stray text). It writes what input may go before it waits and after
// the line. At the end it returns the reason: io.EOF when a stream's output ended, a
// *GaveUpError when a daemon could not be reached again, ErrClosed after Close, or what
// broke the protocol (*ProtocolError, *VersionError, ErrReplaced, *NoHelloError).
//
// A Conn's lines are taken one way only: with Next, from Lines, or from Batches.
func (c *Conn) Next(ctx context.Context) (Line, error) {
	for len(c.pend) == 0 {
		if err := c.Flush(); err != nil {
			return Line{}, err
		}
		select {
		case b, ok := <-c.batches:
			if !ok {
				return Line{}, c.Err()
			}
			c.pend = b
		case <-c.kick:
		case <-ctx.Done():
			return Line{}, ctx.Err()
		}
	}
	l := c.pend[0]
	c.pend[0] = Line{}
	c.pend = c.pend[1:]
	return l, c.Flush()
}

// Lines returns a channel of the lines, one at a time, for a select loop; it is closed at
// the end, and Err then says why. A caller reading it calls Flush after each line it takes
// and after each input it sends.
func (c *Conn) Lines() <-chan Line {
	c.linesOn.Do(func() {
		c.lines = make(chan Line, maxBatchLines)
		go c.unbatch()
	})
	return c.lines
}

// Batches returns a channel of the lines in batches, for a select loop that takes a flood
// with one receive per batch instead of one per line: a batch holds, in order, lines that
// had already arrived when its first was read (at most 1024 lines, and a batch ends once it
// holds 64 KiB), so a batch is never held back waiting for more. The slices and
// their lines are the caller's. The channel is closed at the end, and Err then says why. A
// caller reading it calls Flush after the lines it takes and after each input it sends.
func (c *Conn) Batches() <-chan []Line { return c.batches }

// Release gives back a batch from Batches that the caller is done with: the Conn fills the
// slice again instead of making a new one. The lines' Raw bytes stay the caller's.
func (c *Conn) Release(b []Line) {
	if cap(b) != maxBatchLines {
		return
	}
	clear(b)
	select {
	case c.free <- b[:0]:
	default:
	}
}

// unbatch feeds Lines from the batches.
func (c *Conn) unbatch() {
	defer close(c.lines)
	for b := range c.batches {
		for _, l := range b {
			select {
			case c.lines <- l:
			case <-c.done:
				<-c.ended // Err is set before lines closes
				return
			}
		}
		c.Release(b)
	}
}

// Err returns why the Conn ended once Lines is closed (see Next), else nil.
func (c *Conn) Err() error {
	select {
	case <-c.ended:
		return c.err
	default:
		return nil
	}
}

// Close ends the Conn: a daemon connection is closed (the daemon keeps any task of ours, and
// asks a pending approval again of a client that reconnects with the same id), a stream's
// reader and writer are closed, and a fuseraft that Spawn started is ended (see Spawn): Close
// then returns how it exited. It waits until reading has stopped.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		if c.proc != nil {
			c.proc.finish(c)
		}
		close(c.done)
		c.cancel()
		c.rmu.Lock()
		if c.reading != nil {
			c.reading.close()
		}
		c.rmu.Unlock()
	})
	<-c.ended
	if c.proc != nil {
		return c.proc.exitErr()
	}
	return nil
}

func (c *Conn) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// run reads links until the end: one, or, for a daemon, one after another.
func (c *Conn) run(l link) {
	// ended closes before batches, so that whoever sees them closed finds Err set.
	defer close(c.batches)
	defer close(c.ended)
	for {
		err := c.read(l)
		l.close()
		c.setLink(nil)
		if c.closed() {
			c.err = ErrClosed
			return
		}
		var drop *DropError
		if c.daemon == nil || !errors.As(err, &drop) {
			if c.daemon == nil && errors.As(err, &drop) && (drop.Err == nil || errors.Is(drop.Err, io.EOF)) {
				err = io.EOF
			}
			c.err = err
			return
		}
		if l, err = c.daemon.reconnect(c.ctx, c, err); err != nil {
			if c.closed() {
				err = ErrClosed
			}
			c.err = err
			return
		}
	}
}

// read reads one link until it fails, handing the lines on in batches: a batch is handed on
// as soon as no further line has arrived, so none waits for more.
func (c *Conn) read(l link) error {
	c.rmu.Lock()
	c.reading = l
	c.rmu.Unlock()
	c.lost.Store(nil)
	lr := c.newLinkReader(l)
	defer lr.helloTimer.Stop()
	for {
		if err := lr.handOn(); err != nil {
			return err
		}
		b, err := l.readLine()
		if err != nil {
			return lr.fail(c.readFailed(err, lr.needHello && lr.noHello.Load(), lr.replaced))
		}
		ln := ParseLine(b)
		if err := lr.check(ln); err != nil {
			return lr.fail(err)
		}
		if ln.NotText() {
			// A prompt nobody downstream could read: denied (or skipped) here, and handed
			// on as Noise, never as data.
			c.Answer(Refusal(ln.Type))
			ln.Kind = Noise
		}
		lr.bt.add(ln, lr.kept(), lr.more)
	}
}

// linkReader is what Conn.read knows of the link it reads.
type linkReader struct {
	c          *Conn
	l          link
	h          holder      // nil unless the link holds its reads while a batch is handed on
	holdFn     func(bool)  // hold, made once: deliver takes it for every batch
	more       func() bool // whether a further line is already buffered
	kept       func() bool // whether the line just read was kept by the link
	needHello  bool        // the handshake is still to come
	noHello    atomic.Bool // the wait for hello timed out
	helloTimer *time.Timer
	replaced   bool // a newer connection took over
	sawReady   bool
	bt         batcher
}

func (c *Conn) newLinkReader(l link) *linkReader {
	lr := &linkReader{c: c, l: l, bt: batcher{free: c.free},
		more: func() bool { return false }, kept: func() bool { return false }}
	lr.h, _ = l.(holder)
	lr.holdFn = lr.hold
	if lb, ok := l.(lineBufferer); ok {
		lr.more = lb.hasLine
	}
	if lk, ok := l.(lineKeeper); ok {
		lr.kept = lk.kept
	}
	lr.needHello = c.gate.mode == Serve
	if !lr.needHello {
		c.setLink(l)
	}
	// A daemon that accepts and never says hello (hung, or not a fuseraft serve) is not
	// waited on forever.
	lr.helloTimer = time.AfterFunc(c.daemon.helloTimeout(), func() { lr.noHello.Store(true); l.close() })
	if !lr.needHello {
		lr.helloTimer.Stop()
	}
	return lr
}

func (lr *linkReader) hold(held bool) {
	if lr.h != nil {
		lr.h.hold(held)
	}
}

// handOn hands on the batch when it is full or no further line has arrived, and, with
// nothing left to hand on, lets BeforeRead run.
func (lr *linkReader) handOn() error {
	c := lr.c
	if !lr.bt.empty() && (lr.bt.full() || !lr.more()) {
		if !c.deliver(lr.bt.take(), lr.holdFn) {
			return ErrClosed
		}
	}
	if lr.bt.empty() && c.opts.BeforeRead != nil {
		lr.hold(true)
		c.opts.BeforeRead(c.done)
		lr.hold(false)
		if c.closed() {
			return ErrClosed
		}
	}
	return nil
}

// fail hands on the lines read before err, then returns it.
func (lr *linkReader) fail(err error) error {
	if !lr.bt.empty() && !lr.c.deliver(lr.bt.take(), lr.holdFn) {
		return ErrClosed
	}
	return err
}

// check checks a line read before it is handed on: the handshake, one ready a session, and
// what the Gate must see of it.
func (lr *linkReader) check(ln Line) error {
	c := lr.c
	if lr.needHello && ln.Kind != Noise {
		if err := c.checkHello(ln); err != nil {
			return err
		}
	}
	if ln.Kind != EventLine {
		return nil
	}
	if ln.Type == TypeReady && c.daemon == nil && c.gate.mode != Serve {
		// One process (or stream) is one session: after a second ready, an answer
		// written for a prompt before it could be read for one after it.
		if lr.sawReady {
			return &ProtocolError{Msg: "a second ready in one session (one process is one session)"}
		}
		lr.sawReady = true
	}
	// The Gate learns of a prompt before anyone can answer it.
	if ChangesGate(ln.Type) {
		if err := c.observe(ln, lr.needHello, &lr.replaced); err != nil {
			return err
		}
	}
	if lr.needHello {
		// The handshake is done: the wait for hello is over.
		if !lr.helloTimer.Stop() {
			return &NoHelloError{Target: c.daemon.String(), After: c.daemon.helloTimeout()}
		}
		lr.needHello = false
		c.setLink(lr.l)
	}
	return nil
}

// observe shows the Gate an event of a type that can change it (ChangesGate), once it is
// checked: a ready after the handshake has a protocolVersion we support, and an error saying
// a newer connection took over sets replaced.
func (c *Conn) observe(ln Line, needHello bool, replaced *bool) error {
	ev := Event{Type: ln.Type, Raw: ln.Raw}
	if ev.Type == TypeError && strings.Contains(strings.ToLower(string(ev.Raw)), "newer connection") {
		*replaced = true
	}
	if ev.Type == TypeReady && !needHello {
		if err := c.checkVersion(ev); err != nil {
			return err
		}
	}
	c.gate.Observe(ev)
	return nil
}

// readFailed says why reading a link failed.
func (c *Conn) readFailed(err error, noHello, replaced bool) error {
	switch {
	case c.closed():
		return ErrClosed
	case noHello:
		return &NoHelloError{Target: c.daemon.String(), After: c.daemon.helloTimeout()}
	case replacedBy(err) || replaced:
		return ErrReplaced
	case IsLineTooLong(err) && c.daemon == nil:
		return err
	}
	if w := c.lost.Load(); w != nil {
		err = *w
	}
	return &DropError{Err: err}
}

// checkHello checks a daemon's first line: a hello with a protocolVersion this package
// supports.
func (c *Conn) checkHello(ln Line) error {
	ev, ok := ln.Event()
	if !ok || ev.Type != TypeHello {
		return &ProtocolError{Msg: "expected hello as the daemon's first event", Seen: firstLine(string(ln.Raw))}
	}
	if err := c.checkVersion(ev); err != nil {
		return err
	}
	var h Hello
	if err := ev.Decode(&h); err != nil {
		return &ProtocolError{Msg: "hello is not valid", Seen: firstLine(string(ev.Raw))}
	}
	return nil
}

// checkVersion checks a handshake's protocolVersion, going on past one not supported when
// AnyVersion says so.
func (c *Conn) checkVersion(ev Event) error {
	err := CheckHandshake(ev)
	var ve *VersionError
	if err == nil || !errors.As(err, &ve) || !c.opts.AnyVersion {
		return err
	}
	c.warnOnce.Do(func() {
		if c.opts.Warn != nil {
			c.opts.Warn(err)
		}
	})
	return nil
}

// deliver hands a batch to the consumer, holding the connection while it is not taken. It
// reports false once the Conn is closed.
func (c *Conn) deliver(b []Line, hold func(bool)) bool {
	select {
	case c.batches <- b:
	default:
		hold(true)
		defer hold(false)
		select {
		case c.batches <- b:
		case <-c.done:
			return false
		}
	}
	c.wake()
	return true
}

// firstLine is the first line of s, for messages.
func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// closers closes a reader and a writer that are io.Closers.
type closers struct {
	r io.Reader
	w io.Writer
}

func (c closers) Close() error {
	if rc, ok := c.r.(io.Closer); ok {
		rc.Close()
	}
	if wc, ok := c.w.(io.Closer); ok {
		wc.Close()
	}
	return nil
}
