package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fuseraft/fr/internal/prices"
	"github.com/fuseraft/fr/internal/render"
)

// Helpers shared by the printers.

func duration(sec *float64) string {
	if sec == nil {
		return "—"
	}
	s := *sec
	switch {
	case s < 60:
		return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64) + "s"
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%dh%02dm", int(s)/3600, (int(s)%3600)/60)
}

func cost(usd *float64) string {
	if usd == nil {
		return "—"
	}
	if *usd > 0 && *usd < 0.01 {
		return fmt.Sprintf("$%.4f", *usd)
	}
	return fmt.Sprintf("$%.2f", *usd)
}

func tokens(u prices.Usage) string {
	return render.Commas(u.Input) + " / " + render.Commas(u.Output) + " / " + render.Commas(u.Cached)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// clip cuts s to n runes with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// taskName is what a session is called in a report: its task, else its title, else its id.
func taskName(s *Session) string {
	switch {
	case s.Task != "":
		return s.Task
	case s.Title != "":
		return s.Title
	case s.ID != "":
		return s.Kind + " " + s.ID
	}
	return "(" + s.Kind + " without a task text)"
}

// sessionName names the session with id for a row of a table: its task or title, else its id.
func sessionName(r *Report, id string) string {
	if id == "" {
		return "—"
	}
	for _, s := range r.Sessions {
		if s.ID == id {
			return taskName(s)
		}
	}
	return id
}

// who says who or what decided a prompt.
func who(decider, rule string) string {
	switch {
	case rule != "" && (decider == "rule" || decider == ""):
		return "rule " + rule
	case rule != "":
		return decider + " (rule " + rule + ")"
	case decider != "":
		return decider
	}
	return "—"
}

// headline is the report's one-line outcome.
func headline(r *Report) string {
	counts := map[string]int{}
	kinds := map[string]int{}
	for _, s := range r.Sessions {
		counts[s.Outcome]++
		kinds[s.Kind]++
	}
	what := ""
	switch {
	case len(r.Sessions) == 0:
		return "no task or run in the input"
	case len(kinds) == 1 && kinds["run"] > 0:
		what = plural(len(r.Sessions), "run", "runs")
	case len(kinds) == 1 && kinds["chat"] > 0:
		what = plural(len(r.Sessions), "chat", "chats")
	case len(kinds) == 1:
		what = plural(len(r.Sessions), "task", "tasks")
	default:
		what = plural(len(r.Sessions), "session", "sessions")
	}
	var parts []string
	for _, o := range []string{Failed, Unfinished, Succeeded, Ended} {
		if counts[o] > 0 {
			parts = append(parts, strconv.Itoa(counts[o])+" "+o)
		}
	}
	if len(r.Sessions) == 1 {
		return what + ": " + r.Sessions[0].Outcome
	}
	return what + ": " + strings.Join(parts, ", ")
}

// approvalCounts is "2 refused, 1 allowed, 3 decision unknown".
func approvalCounts(r *Report) string {
	n := map[string]int{}
	for _, a := range r.Approvals {
		n[a.Decision]++
	}
	var parts []string
	if n[Deny] > 0 {
		parts = append(parts, strconv.Itoa(n[Deny])+" refused")
	}
	if n[Allow] > 0 {
		parts = append(parts, strconv.Itoa(n[Allow])+" allowed")
	}
	if n[Unknown] > 0 {
		parts = append(parts, strconv.Itoa(n[Unknown])+" decision unknown")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func mark(outcome string) string {
	switch outcome {
	case Succeeded, Ended:
		return "✅"
	case Failed:
		return "❌"
	}
	return "⚠️"
}

func decisionMark(d string) string {
	switch d {
	case Allow:
		return "✅ allow"
	case Deny:
		return "❌ deny"
	}
	return "❔ unknown"
}

func omittedNote(r *Report) string {
	if len(r.Omitted) == 0 {
		return ""
	}
	var keys []string
	for k := range r.Omitted {
		keys = append(keys, k)
	}
	sortStrings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, render.Commas(int64(r.Omitted[k]))+" "+k)
	}
	return "left out of this report to keep it small: " + strings.Join(parts, ", ")
}

func inputNote(r *Report) string {
	in := r.Input
	s := render.Commas(in.Lines) + " lines, " + render.Commas(in.Events) + " events"
	if in.Noise > 0 {
		s += ", " + render.Commas(in.Noise) + " not JSON (skipped)"
	}
	if in.OtherJSON > 0 {
		s += ", " + render.Commas(in.OtherJSON) + " JSON but not events (skipped)"
	}
	if in.Malformed > 0 {
		s += ", " + render.Commas(in.Malformed) + " malformed events (skipped)"
	}
	if len(in.Unknown) > 0 {
		var t []string
		for _, u := range in.Unknown {
			t = append(t, u.Type+" ×"+render.Commas(u.Count))
		}
		s += "; unknown event types: " + strings.Join(t, ", ")
	}
	return s
}

func auditNote(r *Report) string {
	if r.Audit == nil {
		return "no audit log given (--audit): decisions unknown"
	}
	if len(r.Audits) > 1 {
		return fmt.Sprintf("audit logs %s: %d chains, each verified on its own, %s, %d matched to prompts of these sessions",
			r.Audit.File, len(r.Audits), plural(r.Audit.Records, "record", "records"), r.Audit.Matched)
	}
	return fmt.Sprintf("audit log %s: %s, %d matched to prompts of this session", r.Audit.File,
		plural(r.Audit.Records, "record", "records"), r.Audit.Matched)
}

// limitText is one limit against its total: "tokens 2,150 of --max-tokens 2,000: past".
func limitText(l *Limit) string {
	show := func(v float64) string {
		switch l.Limit {
		case "max-duration":
			return duration(&v)
		case "max-cost":
			return cost(&v)
		}
		return render.Commas(int64(v))
	}
	what := strings.TrimPrefix(l.Limit, "max-")
	used := "unknown (no --prices)"
	if l.Used != nil {
		used = show(*l.Used)
	}
	s := what + " " + used + " of --" + l.Limit + " " + show(l.Max)
	if l.Past {
		s += ": past"
	}
	return s
}

// limitsLine is every limit, for one line.
func limitsLine(r *Report) string {
	parts := make([]string, len(r.Limits))
	for i, l := range r.Limits {
		parts[i] = limitText(l)
	}
	return strings.Join(parts, "; ")
}
