package cmdutil

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
type Child struct {
	Cmd    *exec.Cmd
	once   sync.Once
	done   chan struct{}
	err    error
	mu     sync.Mutex
	killed bool
}

// Start starts cmd.
func Start(cmd *exec.Cmd) (*Child, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Child{Cmd: cmd, done: make(chan struct{})}, nil
}

// Wait waits for the child to end and returns cmd.Wait's error.
func (c *Child) Wait() error {
	c.once.Do(func() {
		c.err = c.Cmd.Wait()
		close(c.done)
	})
	<-c.done
	return c.err
}

// WaitOrKill waits up to grace for the child to end by itself, then kills it.
func (c *Child) WaitOrKill(grace time.Duration) error {
	go func() { _ = c.Wait() }()
	select {
	case <-c.done:
	case <-time.After(grace):
		c.kill()
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
			_ = c.Cmd.Process.Signal(sig)
			select {
			case <-stopped:
			case <-time.After(StopGrace):
				c.kill()
			}
		case <-stopped:
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(stopped) }) }
}

func (c *Child) kill() {
	c.mu.Lock()
	c.killed = true
	c.mu.Unlock()
	_ = c.Cmd.Process.Kill()
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
