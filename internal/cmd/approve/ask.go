package approve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/fuseraft/fr/internal/approvalprompt"
	"github.com/fuseraft/fr/internal/cmd/approve/policy"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/console"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

// Deciders beyond the policy's own.
const (
	ByPerson  = "person"
	ByTimeout = "timeout"
	ByNoTTY   = "no-tty"
)

// Asker asks a person. Everything it shows and reads goes through the terminal, never stdin
// or stdout, which carry the protocol.
type Asker interface {
	// Approve asks whether to allow req; decider is ByPerson, ByTimeout or ByNoTTY, typed
	// every line the person typed at the prompt, in order.
	Approve(ctx context.Context, req *wire.ApprovalRequest, d policy.Decision) (allow bool, decider string, typed []string, err error)
	// Question asks a question; nil skips it.
	Question(ctx context.Context, q *wire.Question) (answer *string, decider string, typed []string, err error)
}

// ttyAsker asks on a terminal device (/dev/tty by default).
type ttyAsker struct {
	path    string
	timeout time.Duration
	color   string // --color
	getenv  func(string) string
	warn    func(format string, args ...any)

	once    sync.Once
	f       *os.File
	openErr error
	lines   chan ttyLine
	// want asks the reader for one more line: the terminal is read only while an answer is
	// awaited, so that a pager run meanwhile is the only one reading it
	want    chan struct{}
	wanting bool // a line was asked for and has not come
	warned  bool
	// shown is when the current prompt was put up: a line read before it answers nothing
	shown time.Time
}

type ttyLine struct {
	s   string
	err error
	at  time.Time // when it was read
}

func (a *ttyAsker) open() error {
	a.once.Do(func() {
		f, err := os.OpenFile(a.path, os.O_RDWR, 0)
		if err != nil {
			a.openErr = err
			return
		}
		a.f = f
		a.lines = make(chan ttyLine, 16)
		a.want = make(chan struct{}, 1)
		lines, want := a.lines, a.want
		go func() {
			r := bufio.NewReader(f)
			for range want {
				s, err := r.ReadString('\n')
				if err != nil {
					lines <- ttyLine{s: s, err: err, at: time.Now()}
					close(lines)
					return
				}
				lines <- ttyLine{s: s, at: time.Now()}
			}
		}()
	})
	if a.openErr != nil && !a.warned {
		a.warned = true
		a.warn("no terminal to ask on (%v); prompts the policy would ask about are denied", a.openErr)
	}
	return a.openErr
}

// discard drops whatever was typed before the prompt, so a key pressed early never answers it.
func (a *ttyAsker) discard() {
	console.DiscardTypeahead(int(a.f.Fd()))
	a.shown = time.Now()
	for {
		select {
		case l, ok := <-a.lines:
			a.wanting = false
			if !ok || l.err != nil {
				// keep the end of input for the read that follows
				a.lines = closedWith(l)
				return
			}
		default:
			return
		}
	}
}

func closedWith(l ttyLine) chan ttyLine {
	c := make(chan ttyLine, 1)
	if l.err == nil {
		l.err = io.EOF
	}
	c <- l
	close(c)
	return c
}

// deadline is the timer of one prompt: however often it is asked again, --ask-timeout counts
// from when it was first shown. nil when there is no timeout.
func (a *ttyAsker) deadline() (<-chan time.Time, func()) {
	if a.timeout <= 0 {
		return nil, func() {}
	}
	t := time.NewTimer(a.timeout)
	return t.C, func() { t.Stop() }
}

// read waits for a line, the prompt's deadline or ctx.
func (a *ttyAsker) read(ctx context.Context, timer <-chan time.Time) (string, string, error) {
	for {
		if !a.wanting {
			select {
			case a.want <- struct{}{}:
			default:
			}
			a.wanting = true
		}
		select {
		case l, ok := <-a.lines:
			a.wanting = false
			if !ok || l.err != nil {
				if ok {
					a.lines = closedWith(l)
				}
				return "", ByNoTTY, nil
			}
			if l.at.Before(a.shown) {
				continue // typed before the prompt was shown
			}
			return strings.TrimSpace(l.s), ByPerson, nil
		case <-timer:
			fmt.Fprintf(a.f, "\nno answer within %s\n", a.timeout)
			return "", ByTimeout, nil
		case <-ctx.Done():
			fmt.Fprintln(a.f)
			return "", "", ctx.Err()
		}
	}
}

// close closes the terminal, which also ends the goroutine reading it.
func (a *ttyAsker) close() {
	if a.f != nil && a.want != nil {
		a.f.Close()
		close(a.want)
		a.want = nil
	}
}

func (a *ttyAsker) useColor() bool {
	return cmdutil.UseColor(a.color, a.getenv, true)
}

// size is the terminal's width (else $COLUMNS, else 80) and height (0 when unknown).
func (a *ttyAsker) size() (width, height int) {
	width = render.Width(a.f, a.getenv)
	if _, h, err := term.GetSize(int(a.f.Fd())); err == nil && h > 0 {
		height = h
	}
	return width, height
}

// rows is how many rows of a terminal width columns wide the line s takes.
func rows(s string, width int) int {
	return max(1, (render.StringWidth(s)+width-1)/width)
}

func (a *ttyAsker) Approve(ctx context.Context, req *wire.ApprovalRequest, d policy.Decision) (bool, string, []string, error) {
	if err := a.open(); err != nil {
		return false, ByNoTTY, nil, nil
	}
	a.discard()
	color := a.useColor()
	width, height := a.size()
	paint := func(sgr, s string) string {
		if color {
			return sgr + s + "\x1b[0m"
		}
		return s
	}
	var b strings.Builder
	head := "approval: " + termsafe.Line(req.Summary())
	b.WriteString("\n" + paint("\x1b[1;33m", head) + "\n")
	// The policy's reason wraps at spaces, never inside a word that fits on a line.
	why := strings.Join(render.Wrap(whyText(req, d), width-1), "\n")
	b.WriteString(why + "\n")
	switch {
	case req.Kind == wire.KindFileWrite:
		// UnifiedDiff makes the text safe for the terminal itself, and needs the raw contents to
		// tell binary files and line-end changes apart. On a terminal of known height, the
		// diff is cut to what fits on the screen with the rest of the prompt; d shows it whole.
		maxLines := 400
		if height > 0 {
			used := 1 + rows(head, width) + strings.Count(why, "\n") + 1 + 2 + restateRows(head, why, width) + 1
			maxLines = max(height-used, 5)
		}
		diff, cut := render.UnifiedDiffCut(req.Path, req.OldContent, req.NewContent,
			render.DiffOptions{Color: color, MaxLines: maxLines})
		b.WriteString(diff)
		if !strings.HasSuffix(diff, "\n") {
			b.WriteByte('\n')
		}
		if cut {
			b.WriteString(paint("\x1b[2m", console.DiffMore) + "\n")
		}
	case req.Kind == wire.KindShellCommand && strings.ContainsAny(req.Command, "\n"):
		for _, l := range strings.Split(req.Command, "\n") {
			b.WriteString("  | " + termsafe.Line(l) + "\n")
		}
	case !wire.KnownKind(req.Kind):
		raw := string(req.Raw)
		if len(raw) > 4000 {
			raw = raw[:4000] + "… (cut)"
		}
		b.WriteString("  " + termsafe.Line(raw) + "\n")
	}
	// What is asked about is said again right above the question where the prompt printed
	// more than a few rows (the rule fr-attach and fr-stream follow): however far its first
	// lines scrolled, the person sees what they answer.
	if console.Subject(req, nil, width) != "" {
		b.WriteString(restated(head, why, width, paint) + "\n")
	}
	b.WriteString(approvalprompt.Approval)
	allow := false
	by, typed, err := a.ask(ctx, b.String(), func(ans string) bool {
		switch approvalprompt.Read(ans) {
		case approvalprompt.Allow:
			allow = true
		case approvalprompt.Deny:
		case approvalprompt.Diff:
			if req.Kind != wire.KindFileWrite {
				fmt.Fprintf(a.f, "d shows the whole diff of a file write; this prompt is not one: %s: %s", approvalprompt.Hint, approvalprompt.Approval)
				return false
			}
			// The whole diff in $PAGER, through the pager every command that asks uses; then
			// what is asked about, and the question, again.
			console.Page(render.UnifiedDiff(req.Path, req.OldContent, req.NewContent, render.DiffOptions{}),
				console.PageOn{Out: a.f, Fd: int(a.f.Fd()), Getenv: a.getenv})
			fmt.Fprintf(a.f, "%s\n%s", restated(head, why, width, paint), approvalprompt.Approval)
			return false
		default:
			// Anything else (a typo) answers nothing: ask again.
			fmt.Fprintf(a.f, "%s: %s", approvalprompt.Hint, approvalprompt.Approval)
			return false
		}
		a.outcome(allow, color)
		return true
	})
	return allow, by, typed, err
}

// whyText says what the policy made of a prompt: its verdict, the rule (its name quoted) or
// what decided, the part of a command that decided, and the reason.
func whyText(req *wire.ApprovalRequest, d policy.Decision) string {
	why := "policy: " + d.Verdict.String()
	if d.Rule != "" {
		why += " (rule " + termsafe.Line(strconv.Quote(d.Rule)) + ")"
	} else {
		why += " (" + termsafe.Line(d.Decider) + ")"
	}
	if d.Part != "" && d.Part != strings.TrimSpace(req.Command) {
		why += ", for " + termsafe.Line(d.Part)
	}
	if d.Reason != "" && d.Decider != policy.ByRule {
		why += ": " + termsafe.Line(d.Reason)
	}
	return why
}

// maxRestateRows bounds the rows the subject of a prompt takes when it is restated above the
// question (it was shown whole above).
const maxRestateRows = 3

// restated is what a prompt asks about (head, cut to a few rows) and the policy's reason
// (why, already wrapped), to show right above the question.
func restated(head, why string, width int, paint func(sgr, s string) string) string {
	var b strings.Builder
	for _, row := range render.WrapRows(head, width-1, maxRestateRows) {
		b.WriteString(paint("\x1b[1;33m", row) + "\n")
	}
	return b.String() + why
}

// restateRows is how many rows restated takes.
func restateRows(head, why string, width int) int {
	return len(render.WrapRows(head, width-1, maxRestateRows)) + strings.Count(why, "\n") + 1
}

// ask shows text, then reads answers until done takes one. It returns who answered
// (ByPerson, or why nobody did: a timeout, no terminal) and every line typed.
func (a *ttyAsker) ask(ctx context.Context, text string, done func(ans string) bool) (string, []string, error) {
	if _, err := io.WriteString(a.f, text); err != nil {
		return ByNoTTY, nil, nil
	}
	timer, stop := a.deadline()
	defer stop()
	var typed []string
	for {
		ans, by, err := a.read(ctx, timer)
		if err != nil || by != ByPerson {
			return by, typed, err
		}
		typed = append(typed, ans)
		if done(ans) {
			return ByPerson, typed, nil
		}
	}
}

// outcome shows what the person's answer decided.
func (a *ttyAsker) outcome(allow bool, color bool) {
	s := approvalprompt.Outcome(allow)
	if color {
		sgr := "\x1b[31m"
		if allow {
			sgr = "\x1b[32m"
		}
		s = sgr + s + "\x1b[0m"
	}
	fmt.Fprintln(a.f, s)
}

func (a *ttyAsker) Question(ctx context.Context, q *wire.Question) (*string, string, []string, error) {
	if err := a.open(); err != nil {
		return nil, ByNoTTY, nil, nil
	}
	a.discard()
	var b strings.Builder
	head := "question: " + termsafe.Line(q.Question)
	if a.useColor() {
		head = "\x1b[1;36m" + head + "\x1b[0m"
	}
	b.WriteString("\n" + head + "\n")
	for i, o := range q.Options {
		fmt.Fprintf(&b, "  %d) %s\n", i+1, termsafe.Line(o))
	}
	switch {
	case len(q.Options) > 0 && q.AllowOther:
		b.WriteString("number or answer (empty skips): ")
	case len(q.Options) > 0:
		b.WriteString("number (empty skips): ")
	default:
		b.WriteString("answer (empty skips): ")
	}
	var answer *string
	by, typed, err := a.ask(ctx, b.String(), func(ans string) bool {
		if ans == "" {
			return true
		}
		if n, err := strconv.Atoi(ans); err == nil && n >= 1 && n <= len(q.Options) {
			o := q.Options[n-1]
			answer = &o
			return true
		}
		if len(q.Options) == 0 || q.AllowOther {
			answer = &ans
			return true
		}
		fmt.Fprintf(a.f, "pick 1-%d, or press enter to skip: ", len(q.Options))
		return false
	})
	return answer, by, typed, err
}
