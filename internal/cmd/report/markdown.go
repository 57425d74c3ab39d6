package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// mdEscaper makes outside text literal in GitHub-flavoured Markdown, in a table cell too: HTML is
// escaped as entities, and every character Markdown gives meaning to is backslash-escaped.
var mdEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "|", `\|`,
	"~", `\~`, "#", `\#`, "!", `\!`, "(", `\(`, ")", `\)`, "$", `\$`, "@", "@\u200b",
)

// md is text for one table cell or line: on one line, cut to n characters, escaped.
func md(s string, n int) string { return mdEscaper.Replace(clip(oneLine(s), n)) }

type markdownPrinter struct{}

func (markdownPrinter) Print(w io.Writer, r *Report) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("### %s fr-report: %s\n\n", mark(r.Outcome), md(headline(r), 200))
	if len(r.Sessions) > 0 {
		p("| | task | agents | turns | duration | tokens in / out / cached | cost |\n|---|---|---|--:|--:|--:|--:|\n")
		for _, s := range r.Sessions {
			task := md(taskName(s), 120)
			if s.Error != "" {
				task += "<br>" + md(s.Error, 300)
			} else if s.Outcome == Unfinished {
				task += "<br>the stream ended before it finished"
			}
			p("| %s %s | %s | %s | %d | %s | %s | %s |\n", mark(s.Outcome), s.Outcome, task,
				md(strings.Join(s.Agents, ", "), 120), s.Turns, duration(s.Seconds), tokens(s.Tokens), cost(s.CostUSD))
		}
		if len(r.Sessions) > 1 {
			p("| | **total** | | | | %s | %s |\n", tokens(r.Tokens), cost(r.CostUSD))
		}
		p("\n")
	}
	if len(r.Unpriced) > 0 {
		p("No price for %s in --prices.\n\n", md(strings.Join(r.Unpriced, ", "), 300))
	}
	if len(r.Limits) > 0 {
		p("**Limits:** %s.\n\n", md(limitsLine(r), 1000))
	}
	p("**Approvals:** %s.", approvalCounts(r))
	if r.Audit == nil && len(r.Approvals) > 0 {
		p(" No audit log was given (`--audit`), so the decisions are unknown.")
	}
	p("\n\n")
	var shown, allowed []*Approval
	for _, a := range r.Approvals {
		if a.Decision == Allow {
			allowed = append(allowed, a)
		} else {
			shown = append(shown, a)
		}
	}
	// With several sessions each prompt says whose it was.
	many := len(r.Sessions) > 1
	table := func(list []*Approval) {
		if many {
			p("| decision | session | prompt | decided by |\n|---|---|---|---|\n")
		} else {
			p("| decision | prompt | decided by |\n|---|---|---|\n")
		}
		for i, a := range list {
			if i == 50 {
				if many {
					p("| | | and %d more (see --format json or html) | |\n", len(list)-i)
				} else {
					p("| | and %d more (see --format json or html) | |\n", len(list)-i)
				}
				break
			}
			by := who(a.Decider, a.Rule)
			if a.Reason != "" {
				by += ": " + a.Reason
			}
			if many {
				p("| %s | %s | %s | %s |\n", decisionMark(a.Decision), md(sessionName(r, a.Session), 60), md(a.Summary, 200), md(by, 200))
			} else {
				p("| %s | %s | %s |\n", decisionMark(a.Decision), md(a.Summary, 200), md(by, 200))
			}
		}
	}
	if len(shown) > 0 {
		table(shown)
		p("\n")
	}
	if len(allowed) > 0 {
		p("<details><summary>%s</summary>\n\n", plural(len(allowed), "allowed prompt", "allowed prompts"))
		table(allowed)
		p("\n</details>\n\n")
	}
	if len(r.Files) > 0 {
		p("<details><summary>%s</summary>\n\n| | file | added | removed |\n|---|---|--:|--:|\n", plural(len(r.Files), "file changed", "files changed"))
		for i, f := range r.Files {
			if i == 100 {
				p("| | and %d more | | |\n", len(r.Files)-i)
				break
			}
			note := ""
			if f.Decision == Unknown {
				note = " (write asked for; decision unknown)"
			}
			p("| %s | %s%s | +%d | -%d |\n", md(f.Sigil, 4), md(f.Path, 200), note, f.Added, f.Removed)
		}
		p("\n</details>\n\n")
	}
	if len(r.Questions) > 0 {
		p("<details><summary>%s</summary>\n\n| question | answer | decided by |\n|---|---|---|\n", plural(len(r.Questions), "question", "questions"))
		for _, q := range r.Questions {
			ans := q.Decision
			if q.Answer != nil {
				ans = *q.Answer
			}
			p("| %s | %s | %s |\n", md(q.Question, 200), md(ans, 200), md(who(q.Decider, q.Rule), 100))
		}
		p("\n</details>\n\n")
	}
	p("<details><summary>Input</summary>\n\n%s.<br>%s.", md(inputNote(r), 2000), md(auditNote(r), 500))
	if n := omittedNote(r); n != "" {
		p("<br>%s.", md(n, 500))
	}
	if r.Redacted {
		p("<br>Secrets redacted.")
	}
	p("\n\n</details>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

var _ = strconv.Itoa
