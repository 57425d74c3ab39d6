package console

import (
	"fmt"
	"strconv"
	"strings"

	asking "github.com/fuseraft/fr/internal/approvalprompt"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

// DiffMore is said under a file write's diff that was cut, where the prompt is answered on a
// Terminal.
const DiffMore = "type d at the prompt to see the whole diff in $PAGER"

// Asker keeps the prompts (approval_request, question) a person answers on the input line, in
// the order the session asks them: the oldest is on the input line, and the next line typed
// there is its answer, never a task.
type Asker struct {
	con     *Console
	color   bool
	prompts []waiting
	serial  int
}

// waiting is a prompt waiting for its answer.
type waiting struct {
	id  int
	typ string // wire.TypeApproval or wire.TypeQuestion
	q   *wire.Question
	req *wire.ApprovalRequest
	raw []byte // the approval_request as it came
}

// NewAsker asks on con's input line.
func NewAsker(con *Console, color bool) *Asker { return &Asker{con: con, color: color} }

// Observe follows an event of the session, already rendered (and observed by its gate). It
// reports whether the input line is to change: call Refresh.
func (a *Asker) Observe(ev wire.Event) bool {
	switch {
	case ev.Type == wire.TypeApproval || ev.Type == wire.TypeQuestion:
		a.serial++
		p := waiting{id: a.serial, typ: ev.Type}
		if ev.Type == wire.TypeQuestion {
			p.q = &wire.Question{}
			if ev.Decode(p.q) != nil {
				p.q = &wire.Question{}
			}
		} else if req, err := wire.DecodeApprovalRequest(ev.Raw); err == nil {
			p.req = req
		} else {
			p.raw = ev.Raw
		}
		a.prompts = append(a.prompts, p)
		return true
	case wire.EndsPrompts(ev.Type):
		// As the gate: a new connection voids prompts (the daemon asks again); a finished
		// task or turn waits for no answer.
		if len(a.prompts) == 0 {
			return false
		}
		a.prompts = nil
		return true
	}
	return false
}

// Waiting is how many prompts wait for an answer.
func (a *Asker) Waiting() int { return len(a.prompts) }

// Refresh puts on the input line the prompt for what waits: ready for a task (ready is the
// input line's prompt, e.g. "› "), or asking the oldest approvalprompt. aside reports that a line half
// typed was set aside for the answer (it comes back afterwards).
func (a *Asker) Refresh(ready string) (aside bool) {
	if len(a.prompts) == 0 {
		a.con.SetPage(0, nil)
		a.con.SetSubject("", "")
		a.con.SetPrompt(a.paint("\x1b[1;36m", ready), render.StringWidth(ready), 0)
		return false
	}
	p := a.prompts[0]
	text := asking.Approval
	if p.typ == wire.TypeQuestion {
		text = questionPrompt(p.q)
	}
	if req := p.req; req != nil && req.Kind == wire.KindFileWrite {
		a.con.SetPage(p.id, func() string {
			return render.UnifiedDiff(req.Path, req.OldContent, req.NewContent, render.DiffOptions{})
		})
	} else {
		a.con.SetPage(0, nil)
	}
	bar := a.paint("\x1b[1;33m", "┃ ")
	subject := ""
	if p.typ == wire.TypeApproval {
		subject = Subject(p.req, p.raw, a.con.Cols())
	}
	a.con.SetSubject(bar, subject)
	return a.con.SetPrompt(bar+a.paint("\x1b[1m", text), 2+render.StringWidth(text), p.id)
}

func (a *Asker) paint(sgr, s string) string {
	if !a.color {
		return s
	}
	return sgr + s + "\x1b[0m"
}

// Reply is what a typed line comes to: at most one of its fields is set.
type Reply struct {
	// Answer answers the prompt it was typed at (which no longer waits): send it, show it,
	// and Refresh.
	Answer *wire.Input
	// Note is to be told the person; nothing is sent, and a prompt waiting still waits.
	Note string
	// Task is a line typed with no prompt waiting: a task, a message (as typed).
	Task string
}

// Read reads a line the person typed.
func (a *Asker) Read(t Line) Reply {
	if t.PromptID != 0 {
		if len(a.prompts) == 0 || a.prompts[0].id != t.PromptID {
			return Reply{Note: fmt.Sprintf("not sent: %q answered a prompt that no longer waits", cmdutil.FirstLine(t.Text))}
		}
		p := a.prompts[0]
		var in wire.Input
		if p.typ == wire.TypeApproval {
			var allow bool
			switch asking.Read(t.Text) {
			case asking.Allow:
				allow = true
			case asking.Deny:
			case asking.Diff:
				return Reply{Note: "d shows the whole diff of a file write; this prompt is not one: " + asking.Hint}
			default:
				return Reply{Note: fmt.Sprintf("%s: %q was not sent as a task", asking.Hint, cmdutil.FirstLine(strings.TrimSpace(t.Text)))}
			}
			in = wire.Input{Line: wire.ApprovalResponse(allow), Type: wire.TypeApprovalResponse}
		} else {
			ans, ok := questionAnswer(p.q, t.Text)
			if !ok {
				return Reply{Note: fmt.Sprintf("%q is not an option: pick 1-%d, or press enter to skip", strings.TrimSpace(t.Text), len(p.q.Options))}
			}
			in = wire.Input{Line: wire.QuestionResponse(ans), Type: wire.TypeQuestionResponse}
		}
		a.prompts = a.prompts[1:]
		return Reply{Answer: &in}
	}
	text := strings.TrimSpace(t.Text)
	switch {
	case text == "":
		return Reply{}
	case bareAnswer(text) && len(a.prompts) > 0:
		return Reply{Note: fmt.Sprintf("%q was typed before the prompt appeared, so it does not answer it", text)}
	case bareAnswer(text):
		return Reply{Note: fmt.Sprintf("no prompt waits for an answer: %q was not sent", text)}
	}
	return Reply{Task: t.Text}
}

// Subject restates what an approval asks about, in a line: its kind and its command, path,
// action or route. Where the prompt printed more than a few rows (a file write's diff, a
// long or many-lined command or detail, an event that could not be read), it is shown again
// right above the input line while the prompt waits, so that it is in view however far the
// rest scrolled; else it is "" (the prompt is in view already). width is the terminal's.
func Subject(req *wire.ApprovalRequest, raw []byte, width int) string {
	if req == nil {
		if len(raw) == 0 {
			return ""
		}
		return "approval: a malformed request (deny it)"
	}
	long := func(s string) bool { return strings.Contains(strings.TrimSpace(s), "\n") || len(s) > 10*width }
	switch {
	case req.Kind == wire.KindFileWrite, !wire.KnownKind(req.Kind),
		req.Kind == wire.KindShellCommand && long(req.Command),
		req.Kind == wire.KindToolAction && long(req.Detail):
		return "approval: " + termsafe.Line(strings.Join(strings.Fields(req.Summary()), " "))
	}
	return ""
}

// questionPrompt is the input line's prompt for a question.
func questionPrompt(q *wire.Question) string {
	switch n := len(q.Options); {
	case n == 1 && q.AllowOther:
		return "answer 1 or your own (empty skips): "
	case n == 1:
		return "answer 1 (empty skips): "
	case n > 0 && q.AllowOther:
		return fmt.Sprintf("answer 1-%d or your own (empty skips): ", n)
	case n > 0:
		return fmt.Sprintf("answer 1-%d (empty skips): ", n)
	}
	return "answer (empty skips): "
}

// questionAnswer reads a typed answer to a question: an option's number, an option's text,
// any text when the question allows its own answers, or nothing to skip (nil). ok is false
// when the answer fits none of these, and the question is asked again.
func questionAnswer(q *wire.Question, s string) (answer *string, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, true
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(q.Options) {
		o := q.Options[n-1]
		return &o, true
	}
	for _, o := range q.Options {
		if strings.EqualFold(strings.TrimSpace(o), s) {
			return &o, true
		}
	}
	if len(q.Options) == 0 || q.AllowOther {
		return &s, true
	}
	return nil, false
}

// bareAnswer is a line that reads as an answer to a prompt, not as a task.
func bareAnswer(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "y", "yes", "n", "no":
		return true
	}
	return false
}
