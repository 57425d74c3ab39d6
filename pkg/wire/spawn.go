package wire

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/fuseraft/fr/internal/proc"
)

// Command is a fuseraft process to start: fuseraft repl --vscode (a chat, [Stdio]) or
// fuseraft run --bridge (an orchestration, [Bridge]).
type Command struct {
	// Bin is the fuseraft binary; "" is fuseraft on PATH.
	Bin string
	// Args follow the binary. Repl and Run build them; the first is "repl" or "run".
	Args []string
	// Env is added to the environment fuseraft inherits (FUSERAFT_VSCODE_QUESTIONS=1 turns
	// on question prompts in a REPL).
	Env []string
	// Dir is fuseraft's working directory; "" is the caller's.
	Dir string
	// Stderr receives fuseraft's stderr; nil discards it.
	Stderr io.Writer
	// Grace is how long Close waits, once fuseraft's input is closed, for it to end by
	// itself (a REPL makes one more model call before session_end) before SIGTERM; SIGKILL
	// follows two seconds later. 0 is 10 seconds.
	Grace time.Duration
	// OutputPipe, when above 0, is the capacity asked of the pipe fuseraft writes its events
	// to, before fuseraft starts (Linux; elsewhere the system's stays). A small pipe keeps
	// fuseraft from getting far ahead of its reader: it waits to write once the pipe is full,
	// so what it does next waits for the reader to look at what it did. Linux's least is one
	// page (4096 bytes); a refusal leaves the system's.
	OutputPipe int
}

// Repl is fuseraft repl --vscode --no-banner with args after it (--model ID, --resume ID).
func Repl(args ...string) Command {
	return Command{Args: append([]string{"repl", "--vscode", "--no-banner"}, args...)}
}

// Run is fuseraft run --bridge with args after it: -c CONFIG TASK, or --resume ID.
func Run(args ...string) Command {
	return Command{Args: append([]string{"run", "--bridge"}, args...)}
}

// Mode is the Gate's mode for the session the command starts: Bridge for run, else Stdio.
func (c Command) Mode() Mode {
	if len(c.Args) > 0 && c.Args[0] == "run" {
		return Bridge
	}
	return Stdio
}

// Process is a started fuseraft whose pipes the caller reads and writes itself (Start); Spawn
// wraps one in a Conn. It runs in a process group of its own, so a terminal's Ctrl-C reaches
// only the caller, and on Linux it dies with the caller.
type Process struct {
	// Stdin is fuseraft's input; closing it is how fuseraft learns input has ended.
	Stdin io.WriteCloser
	// Stdout is fuseraft's output, one JSON event a line (read it with a Reader).
	Stdout io.ReadCloser
	child  *proc.Child
}

// Start starts c with pipes to its stdin and stdout.
func Start(c Command) (*Process, error) {
	bin := c.Bin
	if bin == "" {
		bin = "fuseraft"
	}
	cmd := exec.Command(bin, c.Args...)
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Dir = c.Dir
	cmd.Stderr = c.Stderr
	// Something fuseraft started may hold its stderr open after it exits.
	cmd.WaitDelay = time.Second
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	if c.OutputPipe > 0 {
		setPipeSize(stdoutR, c.OutputPipe)
	}
	cmd.Stdin, cmd.Stdout = stdinR, stdoutW
	child, err := proc.StartGroup(cmd)
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, err
	}
	return &Process{Stdin: stdinW, Stdout: stdoutR, child: child}, nil
}

// Pid is fuseraft's process id.
func (p *Process) Pid() int { return p.child.Cmd.Process.Pid }

// Interrupt sends SIGINT to fuseraft and what it started, as a terminal's Ctrl-C would: it
// interrupts the running turn even while a prompt waits. It reports false where there are no
// signals; send an [Interrupt] line then.
func (p *Process) Interrupt() bool {
	p.child.Interrupt()
	return proc.CanInterrupt
}

// Stop sends SIGTERM to fuseraft and what it started, and SIGKILL if it has not ended grace
// later. It returns at once; only the first Stop acts.
func (p *Process) Stop(grace time.Duration) { p.child.Stop(syscall.SIGTERM, grace) }

// Wait waits for fuseraft to end and returns nil for exit status 0, else an *exec.ExitError
// (or why it could not be waited for). Call it once Stdout has been read to its end.
func (p *Process) Wait() error { return p.child.Wait() }

// Done is closed once fuseraft has ended and been waited for.
func (p *Process) Done() <-chan struct{} { return p.child.Done() }

// Spawn starts c and returns a Conn over its pipes, whose Gate has c's Mode (unless opts
// has a Gate). Lines come from Next until fuseraft closes its stdout (io.EOF). When ctx ends,
// fuseraft is stopped (SIGTERM, then SIGKILL). Close ends fuseraft's input, reads and drops
// what it still writes for up to Command.Grace while it ends by itself, then stops it, and
// returns how it exited: nil, or an *exec.ExitError.
func Spawn(ctx context.Context, c Command, opts Options) (*Conn, error) {
	if len(c.Args) == 0 || (c.Args[0] != "repl" && c.Args[0] != "run") {
		return nil, errors.New("wire: Spawn starts fuseraft repl --vscode or run --bridge (see Repl and Run)")
	}
	p, err := Start(c)
	if err != nil {
		return nil, err
	}
	go func() {
		select {
		case <-ctx.Done():
			p.Stop(proc.StopGrace)
		case <-p.Done():
		}
	}()
	grace := c.Grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	conn := newConn(ctx, opts, c.Mode())
	conn.proc = &process{p: p, grace: grace}
	l := &procLink{streamLink{c: closers{p.Stdout, p.Stdin}, r: newLinkReader(p.Stdout), w: newBufWriter(p.Stdin)}, p}
	go conn.run(l)
	return conn, nil
}

// procLink is a process's pipes. An input that cannot be written closes only its stdin:
// what fuseraft wrote before it stopped reading is still read.
type procLink struct {
	streamLink
	p *Process
}

func (l *procLink) closeInput() { l.p.Stdin.Close() }

// process is the fuseraft a Conn started.
type process struct {
	p     *Process
	grace time.Duration
}

// finish ends fuseraft's input and waits up to grace for fuseraft to end, reading and dropping
// its lines meanwhile so that it is never held up writing them, then stops it.
func (pr *process) finish(c *Conn) {
	pr.p.Stdin.Close()
	go func() {
		for range c.batches {
		}
	}()
	go func() { _ = pr.p.Wait() }()
	select {
	case <-pr.p.Done():
	case <-time.After(pr.grace):
		pr.p.Stop(proc.StopGrace)
	}
}

// exitErr is how fuseraft exited.
func (pr *process) exitErr() error { return pr.p.Wait() }
