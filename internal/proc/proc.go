// Package proc starts, signals and stops child processes (fuseraft) and says how they ended:
// the one place fr's commands and pkg/wire do so.
package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// StopGrace is how long a child process asked to stop gets before it is killed.
const StopGrace = 2 * time.Second

// Child is a started child process (fuseraft): stopped with a signal, then SIGKILL after a
// grace period, and its end classified. Wait is called once, whoever asks first; with a
// StdoutPipe, call it (or WaitOrKill) only once the reads are done, as exec.Cmd requires.
// Once it has been waited for, no signal is sent any more (its pid may be another's).
type Child struct {
	Cmd   *exec.Cmd
	group bool // the child leads a process group of its own; signals go to the group

	once sync.Once
	done chan struct{}
	err  error

	mu       sync.Mutex
	reaped   bool
	killed   bool
	stopOnce sync.Once
}

// Start starts cmd, in the caller's process group.
func Start(cmd *exec.Cmd) (*Child, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Child{Cmd: cmd, done: make(chan struct{})}, nil
}

// StartGroup starts cmd in a process group of its own, so that a terminal's Ctrl-C reaches
// only the caller (which decides what it means), and signals sent with Signal reach whatever
// the child started too. Where the system allows, the child is killed when the caller dies
// without cleaning up, even by SIGKILL.
func StartGroup(cmd *exec.Cmd) (*Child, error) {
	cmd.SysProcAttr = groupAttr()
	c, err := Start(cmd)
	if err == nil {
		c.group = canGroup
	}
	return c, err
}

// CanInterrupt says whether Interrupt reaches a child on this system; where it does not, a
// caller tells fuseraft with an interrupt line instead.
const CanInterrupt = canSignal

// Wait waits for the child to end and returns cmd.Wait's error.
func (c *Child) Wait() error {
	c.once.Do(func() {
		err := c.Cmd.Wait()
		c.mu.Lock()
		c.reaped = true
		c.mu.Unlock()
		c.err = err
		close(c.done)
	})
	<-c.done
	return c.err
}

// Done is closed once the child has been waited for.
func (c *Child) Done() <-chan struct{} { return c.done }

// Signal sends sig to the child (to its group, after StartGroup), unless it has been waited
// for already.
func (c *Child) Signal(sig os.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return
	}
	if sig == os.Kill {
		c.killed = true
	}
	signalChild(c.Cmd.Process, sig, c.group)
}

// Interrupt sends SIGINT, as a terminal's Ctrl-C would (nothing where CanInterrupt is false).
func (c *Child) Interrupt() {
	if CanInterrupt {
		c.Signal(os.Interrupt)
	}
}

// Stop asks the child to end with sig (SIGTERM where there is one, for syscall.SIGTERM) and
// kills it if it has not ended grace later. It returns at once; only the first Stop acts.
func (c *Child) Stop(sig os.Signal, grace time.Duration) {
	c.stopOnce.Do(func() {
		go func() { _ = c.Wait() }()
		c.Signal(sig)
		go func() {
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-c.done:
			case <-t.C:
				c.Signal(os.Kill)
			}
		}()
	})
}

// WaitOrKill waits up to grace for the child to end by itself, then kills it.
func (c *Child) WaitOrKill(grace time.Duration) error {
	go func() { _ = c.Wait() }()
	select {
	case <-c.done:
	case <-time.After(grace):
		c.Signal(os.Kill)
	}
	return c.Wait()
}

// StopOnCancel sends sig to the child when ctx ends, and SIGKILL StopGrace later if it has not
// ended; the returned function ends the watch (call it once the child was waited for).
func (c *Child) StopOnCancel(ctx context.Context, sig os.Signal) (stop func()) {
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			c.Signal(sig)
			select {
			case <-stopped:
			case <-time.After(StopGrace):
				c.Signal(os.Kill)
			}
		case <-stopped:
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(stopped) }) }
}

// Killed reports whether the child was killed by us (SIGKILL after its grace).
func (c *Child) Killed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killed
}

// ExitStatus is how a child process ended.
type ExitStatus struct {
	Code     int            // exit status; -1 when killed by a signal
	Signaled bool           // killed by Signal
	Signal   syscall.Signal // the signal, when Signaled
	Err      error          // the child could not be waited for (not an exit)
}

// ExitOf classifies the error of exec.Cmd.Wait.
func ExitOf(err error) ExitStatus {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return ExitStatus{}
	case errors.As(err, &ee):
		st := ExitStatus{Code: ee.ExitCode()}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			st.Signaled, st.Signal = true, ws.Signal()
		}
		return st
	}
	return ExitStatus{Code: -1, Err: err}
}

// String says how the child ended, for messages: "exited with status 2", "was killed by
// signal killed", "failed: ...".
func (s ExitStatus) String() string {
	switch {
	case s.Err != nil:
		return "failed: " + s.Err.Error()
	case s.Signaled:
		return "was killed by signal " + s.Signal.String()
	}
	return "exited with status " + strconv.Itoa(s.Code)
}
