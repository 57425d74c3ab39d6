package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// outcome is one task finished (or given up on): the line to print and whether it succeeded.
type outcome struct {
	id, text string
	line     []byte
	st       taskState
	took     time.Duration
	err      error // the task could not be followed to its end (a timeout)
}

// waitOne polls a task's status, less and less often, until it is final, then fetches its
// result (an unknown id's status is its answer).
func (cl *client) waitOne(ctx context.Context, o *options, id string) outcome {
	start := time.Now()
	delay := o.poll
	for {
		obj, err := cl.call(ctx, toolStatus, map[string]any{"sessionId": id})
		if err != nil {
			return outcome{id: id, err: err, took: time.Since(start)}
		}
		st, err := decodeState(obj)
		if err != nil {
			return outcome{id: id, err: err, took: time.Since(start)}
		}
		if st.Status == "unknown" {
			return outcome{id: id, line: withSessionID(obj, id), st: st, took: time.Since(start)}
		}
		if finished(st.Status) {
			break
		}
		// jitter, so that many waiters do not poll in step
		d := time.Duration(float64(delay) * (0.8 + 0.4*rand.Float64()))
		select {
		case <-ctx.Done():
			return outcome{id: id, err: ctx.Err(), st: st, took: time.Since(start)}
		case <-time.After(d):
		}
		delay = min(delay*8/5, o.maxPoll)
	}
	obj, err := cl.call(ctx, toolResult, map[string]any{"sessionId": id})
	if err != nil {
		return outcome{id: id, err: err, took: time.Since(start)}
	}
	st, err := decodeState(obj)
	return outcome{id: id, line: withSessionID(obj, id), st: st, err: err, took: time.Since(start)}
}

// printer writes outcomes as they come: JSON lines, or on a terminal one row per task.
type printer struct {
	mu       sync.Mutex
	s        cmdutil.Streams
	terminal bool
	failed   []string
	n        int
	err      error
	code     int  // the exit code of a request that failed (3, 4, 10), which outranks 1
	limited  bool // a task failed for a limit (its record names one): exit 6, unless a request failed
}

func (p *printer) print(oc outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	switch {
	case oc.err != nil:
		p.failed = append(p.failed, oc.id+": "+explainWait(oc.err))
		if c := cmdutil.CodeOf(oc.err); p.code == 0 && c != cmdutil.ExitFailed && !errors.Is(oc.err, context.DeadlineExceeded) && !errors.Is(oc.err, context.Canceled) {
			p.code = c
		}
	case !oc.st.ok():
		p.failed = append(p.failed, oc.id+": "+oc.st.why())
		p.limited = p.limited || oc.st.Limit != ""
	}
	if p.err != nil {
		return
	}
	if p.terminal {
		mark, what := "✓", oc.st.Status
		if oc.err != nil || !oc.st.ok() {
			mark = "✗"
			if oc.err != nil {
				what = explainWait(oc.err)
			} else {
				what = oc.st.why()
			}
		}
		label := oc.text
		if label == "" {
			label = oc.id
		} else {
			label = oc.id + "  " + cmdutil.FirstLine(label)
		}
		_, p.err = fmt.Fprintf(p.s.Out, "%s %-9s %7s  %s\n", mark, cmdutil.FirstLine(what), oc.took.Round(100*time.Millisecond), label)
		return
	}
	if oc.line == nil {
		return // nothing the daemon said: the error line on stderr tells
	}
	_, p.err = fmt.Fprintf(p.s.Out, "%s\n", oc.line)
}

func explainWait(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "did not finish within --timeout"
	}
	return err.Error()
}

// done ends a wait or run: the summary on a terminal, and exit 1 unless every task succeeded.
func (p *printer) done() error {
	if p.err != nil {
		return p.err
	}
	if p.terminal && p.n > 1 {
		fmt.Fprintf(p.s.Out, "%d succeeded, %d failed\n", p.n-len(p.failed), len(p.failed))
	}
	err := failures(p.s, p.failed, p.n)
	var e *cmdutil.Error
	switch {
	case !errors.As(err, &e):
	case p.code != 0:
		// A task that could not be followed because the daemon refused, broke the contract
		// or stopped answering says so in the exit code, as task, status and result do.
		e.Code = p.code
	case p.limited:
		// A task a limit stopped (the fleet's budget: not run, or interrupted) is exit 6,
		// as fr-stream and fr-attach stopped by one are.
		e.Code = cmdutil.ExitLimit
	}
	return err
}

// withTimeout bounds the whole wait by --timeout; a cancellation (Ctrl-C) passes through.
func withTimeout(ctx context.Context, o *options) (context.Context, context.CancelFunc) {
	if o.timeout > 0 {
		return context.WithTimeout(ctx, o.timeout)
	}
	return context.WithCancel(ctx)
}

func cmdWait(ctx context.Context, s cmdutil.Streams, o *options, cl *client, ids []string) error {
	wctx, cancel := withTimeout(ctx, o)
	defer cancel()
	p := &printer{s: s, terminal: o.terminal}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.print(cl.waitOne(wctx, o, id))
		}()
	}
	wg.Wait()
	if err := interrupted(ctx, ids); err != nil {
		return err
	}
	return p.done()
}

func cmdRun(ctx context.Context, s cmdutil.Streams, o *options, cl *client, texts []string) error {
	wctx, cancel := withTimeout(ctx, o)
	defer cancel()
	p := &printer{s: s, terminal: o.terminal}
	jobs := make(chan string)
	var mu sync.Mutex
	var ids []string
	var wg sync.WaitGroup
	var dispatchErr error
	for w := 0; w < min(o.parallel, len(texts)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for text := range jobs {
				obj, err := cl.dispatch(wctx, text, o.objective)
				if err != nil {
					if wctx.Err() == nil {
						mu.Lock()
						if dispatchErr == nil {
							dispatchErr = err
						}
						mu.Unlock()
						cancel()
					}
					continue
				}
				id, _ := wire.TopLevelString(obj, "sessionId")
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
				oc := cl.waitOne(wctx, o, id)
				oc.text = text
				if oc.line != nil {
					oc.line = withTask(oc.line, text)
				}
				p.print(oc)
			}
		}()
	}
	for _, t := range texts {
		if wctx.Err() != nil {
			break
		}
		jobs <- t
	}
	close(jobs)
	wg.Wait()
	if dispatchErr != nil {
		return dispatchErr
	}
	if err := interrupted(ctx, ids); err != nil {
		return err
	}
	return p.done()
}

// interrupted says, after Ctrl-C, that the daemon keeps the tasks and how to collect them.
func interrupted(ctx context.Context, ids []string) error {
	if ctx.Err() == nil {
		return nil
	}
	err := cmdutil.Errorf(cmdutil.ExitInterrupted, "interrupted")
	if len(ids) > 0 {
		return cmdutil.WithHint(err, "the daemon keeps the tasks: collect them later with 'fr-dispatch wait "+strings.Join(ids, " ")+"'")
	}
	return err
}

// withTask adds the task's text after sessionId, for run's lines, unless the daemon gave one.
func withTask(obj []byte, text string) []byte {
	if _, ok := wire.TopLevelString(obj, "task"); ok {
		return obj
	}
	id, _ := wire.TopLevelString(obj, "sessionId")
	idJSON, _ := json.Marshal(id)
	prefix := append([]byte(`{"sessionId":`), idJSON...)
	if !bytes.HasPrefix(obj, prefix) {
		return obj
	}
	t, _ := json.Marshal(text)
	out := append(append(append([]byte{}, prefix...), `,"task":`...), t...)
	return append(out, obj[len(prefix):]...)
}
