package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fuseraft/fr/internal/cmd/sim/query"
	"github.com/fuseraft/fr/internal/cmd/sim/scenario"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// stdio is what repl --vscode and run --bridge share: stdout with the line faults, stdin read
// concurrently with a turn playing (so an interrupt is seen at once), the input record, and
// SIGINT.
type stdio struct {
	s     cmdutil.Streams
	sc    *scenario.Scenario
	w     *scenario.LineWriter
	rec   *scenario.Recorder
	mode  string
	lines chan []byte // input lines; closed at end of input
	eof   bool
	// queue holds lines read while a turn played that were not yet consumed: they are
	// consumed in order afterwards, the first by the next prompt as its answer, so what a
	// session does never depends on how fast the client wrote.
	queue [][]byte
	sig   chan os.Signal
	pipe  chan os.Signal
	stop  chan struct{}

	pace     float64
	noDelays bool
}

func newStdio(s cmdutil.Streams, mode string) (*stdio, error) {
	sc, err := scenario.FromEnv(s.Env)
	if err != nil {
		return nil, cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage, "%v", err), "check the scenario with 'fr-sim scenario check FILE'")
	}
	pace, noDelays, err := scenario.Pace(s.Env)
	if err != nil {
		return nil, cmdutil.Usagef("%v", err)
	}
	rec, err := scenario.OpenRecorder(s.Env(scenario.EnvRecord))
	if err != nil {
		return nil, cmdutil.Errorf(cmdutil.ExitUsage, "record file: %v", err)
	}
	st := &stdio{s: s, sc: sc, w: scenario.NewLineWriter(s.Out, sc.Faults), rec: rec, mode: mode,
		lines: make(chan []byte), sig: make(chan os.Signal, 1), pipe: make(chan os.Signal, 1), stop: make(chan struct{}),
		pace: pace, noDelays: noDelays}
	// SIGPIPE is caught so that a reader that went away (| head -1) shows up as a write
	// error, and so a quiet exit.
	signal.Notify(st.pipe, syscall.SIGPIPE)
	return st, nil
}

// start begins reading stdin and listening for SIGINT.
func (st *stdio) start() {
	signal.Notify(st.sig, os.Interrupt)
	go st.read()
}

func (st *stdio) close() {
	signal.Stop(st.sig)
	signal.Stop(st.pipe)
	close(st.stop)
	_ = st.rec.Close()
}

func (st *stdio) read() {
	defer close(st.lines)
	r := wire.NewReader(st.s.In, wire.ReaderOptions{})
	for {
		line, err := r.ReadLine()
		if err != nil {
			return
		}
		line = append([]byte(nil), line...)
		st.rec.Record(st.mode, line)
		select {
		case st.lines <- line:
		case <-st.stop:
			return
		}
	}
}

func (st *stdio) player(peer scenario.Peer) *scenario.Player {
	return &scenario.Player{Peer: peer, Faults: st.sc.Faults, Questions: st.s.Env("FUSERAFT_VSCODE_QUESTIONS") == "1",
		NoDelays: st.noDelays, Pace: st.pace}
}

func (st *stdio) sleep(d time.Duration) {
	if st.noDelays || d <= 0 {
		return
	}
	if st.pace > 0 {
		d = time.Duration(float64(d) * st.pace)
	}
	time.Sleep(d)
}

// emit writes an event built here (ready, result, ...) with the JSON faults applied.
func (st *stdio) emit(kv ...any) error {
	return st.w.WriteLine(st.sc.Faults.Encode(scenario.NewObject(kv...)))
}

type askReq struct{ resp chan askResp }

type askResp struct {
	line []byte
	err  error
}

// peer is the Peer a turn plays to: Ask registers with the loop in turn before it writes the
// prompt, so the line that answers can never be taken for anything else.
type peer struct {
	st   *stdio
	asks chan askReq
}

func (p *peer) Emit(line []byte) error { return p.st.w.WriteLine(line) }

func (p *peer) BeginBatch()     { p.st.w.BeginBatch() }
func (p *peer) EndBatch() error { return p.st.w.EndBatch() }

func (p *peer) Ask(ctx context.Context, prompt []byte) ([]byte, error) {
	req := askReq{resp: make(chan askResp, 1)}
	select {
	case p.asks <- req:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := p.st.w.WriteLine(prompt); err != nil {
		return nil, err
	}
	select {
	case r := <-req.resp:
		return r.line, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// turn plays steps while reading input: the line after a prompt answers it (the first queued
// line, if any), an interrupt line or SIGINT cancels the turn, and any other line goes to
// other, which may queue it.
func (st *stdio) turn(ctx context.Context, steps []scenario.Step, other func(line []byte)) (scenario.Outcome, error) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &peer{st: st, asks: make(chan askReq)}
	type result struct {
		out scenario.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := st.player(p).Play(tctx, steps)
		done <- result{out, err}
	}()
	var pending *askReq
	lines := st.lines
	if st.eof {
		lines = nil
	}
	for {
		select {
		case r := <-done:
			return r.out, r.err
		case req := <-p.asks:
			if len(st.queue) > 0 {
				req.resp <- askResp{line: st.queue[0]}
				st.queue = st.queue[1:]
				continue
			}
			if st.eof {
				req.resp <- askResp{err: io.EOF}
				continue
			}
			pending = &req
		case line, ok := <-lines:
			if !ok {
				st.eof, lines = true, nil
				if pending != nil {
					pending.resp <- askResp{err: io.EOF}
					pending = nil
				}
				continue
			}
			if isInterrupt(line) {
				cancel()
				continue
			}
			if st.mode == "run" && isUserInput(line) {
				// The run bridge never reads user_input (it is recorded only): it is no
				// answer to a pending prompt either, however fast it came.
				continue
			}
			if pending != nil {
				pending.resp <- askResp{line: line}
				pending = nil
				continue
			}
			if other != nil {
				other(line)
				if st.eof {
					lines = nil
				}
			}
		case <-st.sig:
			st.rec.RecordSignal(st.mode, "SIGINT")
			cancel()
		}
	}
}

func isUserInput(line []byte) bool {
	t, _ := wire.TopLevelString(bytes.TrimSpace(line), "type")
	return t == wire.TypeUserInput
}

func isInterrupt(line []byte) bool {
	t, _ := wire.TopLevelString(bytes.TrimSpace(line), "type")
	return t == wire.TypeInterrupt
}

// message reads an input line as fuseraft does: a JSON object's "text" is the message; a line
// that is not JSON, or JSON without a string "text", is the message verbatim. {"text":null}
// is end of input.
func message(line []byte) (text string, end bool) {
	trimmed := bytes.TrimSpace(line)
	var m map[string]json.RawMessage
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Unmarshal(trimmed, &m) == nil {
		if raw, ok := m["text"]; ok {
			if string(bytes.TrimSpace(raw)) == "null" {
				return "", true
			}
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return s, false
			}
		}
	}
	return string(bytes.TrimRight(line, "\r")), false
}

// crash dies as an unhandled exception does: half a line on stdout, the message on stderr.
func (st *stdio) crash(c *scenario.Crash) error {
	if c.Partial != "" {
		_ = st.w.WritePartial([]byte(c.Partial))
	}
	fmt.Fprintln(st.s.Err, c.Message)
	return cmdutil.Exit(c.ExitCode)
}

// writeErr turns a failed write to stdout into the command's end: quiet when the reader left.
func writeErr(err error) error {
	if err == nil || wire.IsBrokenPipe(err) || errors.Is(err, os.ErrClosed) {
		return nil
	}
	return cmdutil.Errorf(cmdutil.ExitFailed, "writing events: %v", err)
}

// notConfigured is the message fuseraft refuses to start with when no provider is set up, or
// "": the scenario's repl.notConfigured, else the dataset's notConfigured, else fuseraft's own
// message when FRSIM_UNCONFIGURED is set. The models query refuses for the same reasons.
func notConfigured(getenv func(string) string, sc *scenario.Scenario) string {
	if sc.Repl.NotConfigured != "" {
		return sc.Repl.NotConfigured
	}
	if st, err := query.LoadState(getenv); err == nil && st.NotConfigured != "" {
		return st.NotConfigured
	}
	if v := getenv(query.EnvUnconfigured); v != "" && v != "0" {
		return query.NotConfigured
	}
	return ""
}
