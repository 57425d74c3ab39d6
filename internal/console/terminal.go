package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"github.com/fuseraft/fr/internal/approvalprompt"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/termsafe"
)

// Terminal is a Console on the terminal a person types at: keys are read one by one and
// edited on the input line where the terminal allows it (else the terminal's own line editing
// is used), the width follows the terminal's, and Close gives the terminal back as it was.
type Terminal struct {
	*Console
	in     io.Reader
	out    io.Writer
	getenv func(string) string

	fd       int // the input terminal, -1 when in is not one
	mu       sync.Mutex
	restore  func() error // back to the mode the terminal was found in
	stopSigs func()
}

// Open puts the terminal of s in edit mode (its In, when s.InTerminal says it is one), for a
// console on s.Out, and starts following its size: s.Columns() is asked again when it changes.
// s.Env gives $PAGER.
func Open(s cmdutil.Streams) *Terminal {
	t := &Terminal{in: s.In, out: s.Out, getenv: s.Env, fd: -1}
	edit := false
	if f, ok := s.In.(*os.File); ok && s.InTerminal {
		if r, err := EditMode(int(f.Fd())); err == nil {
			t.fd, t.restore, edit = int(f.Fd()), r, true
		}
	}
	t.Console = New(s.Out, s.Columns(), edit)
	t.stopSigs = WatchTerminal(
		func() { t.SetWidth(s.Columns()) },
		func() {
			t.mu.Lock()
			if t.restore != nil {
				EditMode(t.fd)
			}
			t.mu.Unlock()
			t.Redraw()
		})
	return t
}

// Close takes the input line off the screen and gives the terminal back as it was found.
// It may be called more than once.
func (t *Terminal) Close() {
	t.Console.Close()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopSigs != nil {
		t.stopSigs()
		t.stopSigs = nil
	}
	if t.restore != nil {
		t.restore()
		t.restore = nil
	}
}

// Read reads what the person types until ctx is done or input ends, and passes each finished
// line to send, then eof once (Ctrl-D on an empty line, or the end of the input). send
// reports false to stop reading. A d typed at a prompt that has a page (SetPage) shows the
// page instead, and the prompt asks again.
func (t *Terminal) Read(ctx context.Context, send func(l Line, eof bool) bool) {
	give := func(l Line, eof bool) bool {
		if ctx.Err() != nil {
			return false
		}
		if !eof && l.PromptID != 0 && approvalprompt.Read(l.Text) == approvalprompt.Diff {
			if page := t.pageFor(l.PromptID); page != nil {
				// Here, in the goroutine reading the terminal, so that the pager is the only
				// one reading it meanwhile.
				t.Page(page())
				return true
			}
		}
		return send(l, eof)
	}
	if !t.edit {
		r := bufio.NewReader(t.in)
		for {
			s, err := r.ReadString('\n')
			if s != "" && (err == nil || strings.TrimSpace(s) != "") {
				if !give(t.CookedLine(strings.TrimRight(s, "\r\n")), false) {
					return
				}
			}
			if err != nil {
				give(Line{}, true)
				return
			}
		}
	}
	buf := make([]byte, 4096)
	for {
		n, err := t.in.Read(buf)
		if n > 0 {
			lines, eof := t.Feed(buf[:n])
			for _, l := range lines {
				if !give(l, false) {
					return
				}
			}
			if eof {
				give(Line{}, true)
				return
			}
		}
		if err != nil {
			give(Line{}, true)
			return
		}
	}
}

// CookedLine is a line the terminal's own line editing delivered: the prompt shown when it
// came answers it.
func (c *Console) CookedLine(text string) Line {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := Line{Text: text, PromptID: c.promptID}
	if !c.closed {
		// The person's Enter ended the prompt's line: show it again on the next.
		io.WriteString(c.out, c.prompt)
		c.drawn = true
	}
	return l
}

// Page shows text in a pager (see Page), with output held back meanwhile and the input line
// drawn again after it.
func (t *Terminal) Page(text string) {
	t.pause()
	defer t.resume()
	Page(text, PageOn{Out: t.out, Fd: t.fd, Getenv: t.getenv, Cooked: func() func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.restore == nil {
			return func() {}
		}
		t.restore()
		return func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.restore != nil {
				EditMode(t.fd)
			}
		}
	}})
}

// PageOn is the terminal a page is shown on.
type PageOn struct {
	Out    io.Writer           // the terminal (a pager runs only where it is an *os.File)
	Fd     int                 // the terminal's input, for its jobs; -1 when not known
	Getenv func(string) string // gives $PAGER
	// Cooked puts the terminal in the mode a pager expects and returns what puts it back;
	// nil when it is in that mode already.
	Cooked func() (back func())
}

// Page shows text (made safe for the terminal here, whatever it holds) in $PAGER, else in
// less, as the terminal's foreground job. With neither, or when the terminal is not a file,
// text is printed on it. It is what every command that asks shows a whole diff with.
func Page(text string, on PageOn) {
	text = termsafe.Text(text)
	cmdline := strings.TrimSpace(on.Getenv("PAGER"))
	if cmdline == "" {
		if _, err := exec.LookPath("less"); err == nil {
			cmdline = "less"
		}
	}
	f, isFile := on.Out.(*os.File)
	if cmdline == "" || !isFile {
		io.WriteString(on.Out, strings.ReplaceAll(strings.TrimRight(text, "\n")+"\n", "\n", "\r\n"))
		return
	}
	back := func() {}
	if on.Cooked != nil {
		back = on.Cooked()
	}
	cmd := exec.Command("/bin/sh", "-c", cmdline)
	cmd.Stdin = strings.NewReader(text)
	cmd.Stdout, cmd.Stderr = f, f
	giveBack := func() {}
	if on.Fd >= 0 {
		giveBack = foreground(cmd, on.Fd)
	}
	err := cmd.Run()
	giveBack()
	if interrupted(err) {
		// Ctrl-C in the pager ends the pager, as quitting it does.
		err = nil
	}
	back()
	if err != nil {
		fmt.Fprintf(on.Out, "the pager %s failed (%v); the diff is below\r\n", termsafe.Line(cmdline), err)
		io.WriteString(on.Out, strings.ReplaceAll(strings.TrimRight(text, "\n")+"\n", "\n", "\r\n"))
	}
}

// interrupted says whether err is the exit of a command ended by SIGINT.
func interrupted(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGINT
}
