package report

import (
	"fmt"
	"io"
	"strings"
)

// GitHub Actions workflow commands: ::error, ::warning and ::notice, with their escaping. A
// command's message escapes %, CR and LF; a property value also : and , (as @actions/core does).
var (
	ghData = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	ghProp = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

type githubPrinter struct{}

func ghCommand(b *strings.Builder, cmd string, props [][2]string, msg string) {
	b.WriteString("::" + cmd)
	for i, p := range props {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(p[0] + "=" + ghProp.Replace(p[1]))
	}
	b.WriteString("::" + ghData.Replace(msg) + "\n")
}

func (githubPrinter) Print(w io.Writer, r *Report) error {
	var b strings.Builder
	for _, s := range r.Sessions {
		switch s.Outcome {
		case Failed:
			msg := s.Kind + " failed: " + clip(taskName(s), 200)
			if s.Error != "" {
				msg += ": " + s.Error
			}
			ghCommand(&b, "error", [][2]string{{"title", "fr-report: " + s.Kind + " failed"}}, clip(msg, 2000))
		case Unfinished:
			ghCommand(&b, "error", [][2]string{{"title", "fr-report: " + s.Kind + " did not finish"}},
				s.Kind+" did not finish (the session stream ended first): "+clip(taskName(s), 200))
		}
	}
	for _, a := range r.Refused() {
		by := who(a.Decider, a.Rule)
		msg := a.Summary + " was refused by " + by
		if len(r.Sessions) > 1 {
			msg = a.Summary + " (" + clip(sessionName(r, a.Session), 100) + ") was refused by " + by
		}
		if a.Reason != "" {
			msg += ": " + a.Reason
		}
		msg = clip(msg, 2000)
		if a.Kind == "file_write" && a.Path != "" {
			ghCommand(&b, "warning", [][2]string{{"file", a.Path}, {"title", "fr-report: write refused"}}, msg)
		} else {
			ghCommand(&b, "notice", [][2]string{{"title", "fr-report: " + a.Kind + " refused"}}, msg)
		}
	}
	unknown := 0
	for _, a := range r.Approvals {
		if a.Decision == Unknown {
			unknown++
		}
	}
	summary := fmt.Sprintf("%s; prompts: %s; tokens in/out/cached %s", headline(r), approvalCounts(r), tokens(r.Tokens))
	if r.CostUSD != nil {
		summary += "; cost " + cost(r.CostUSD)
	}
	if unknown > 0 && r.Audit == nil {
		summary += " (no --audit: decisions unknown)"
	}
	for _, l := range r.Limits {
		if l.Past {
			ghCommand(&b, "warning", [][2]string{{"title", "fr-report: limit passed"}}, limitText(l))
		}
	}
	if len(r.Limits) > 0 {
		summary += "; limits: " + limitsLine(r)
	}
	ghCommand(&b, "notice", [][2]string{{"title", "fr-report"}}, summary)
	_, err := io.WriteString(w, b.String())
	return err
}
