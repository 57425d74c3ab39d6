package report

import (
	"html/template"
	"io"
	"strings"
)

// The page is one file: inline CSS, no script, no image, no font, no link to anything, and a
// Content-Security-Policy that forbids all of them should any markup ever get in. Every string
// of the model goes through html/template's escaping.
const pageCSS = `
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:60em;padding:0 1em;color:#1f2328;background:#fff}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;width:100%;margin:.5em 0}th,td{border:1px solid #d0d7de;padding:.25em .5em;text-align:left;vertical-align:top}
td.n{text-align:right;white-space:nowrap}
.succeeded,.ended,.allow{color:#1a7f37}.failed,.deny{color:#cf222e}.unfinished,.unknown{color:#9a6700}
pre{background:#f6f8fa;padding:.5em;overflow-x:auto;white-space:pre-wrap;word-break:break-all;font:13px/1.35 ui-monospace,monospace}
.diff .add{background:#dafbe1}.diff .del{background:#ffebe9}.diff .hunk{color:#0550ae}
.entry{border-left:3px solid #d0d7de;padding:.2em .8em;margin:.6em 0}
.entry.prompt{border-color:#9a6700}.entry.result{border-color:#0969da}.entry.user{border-color:#8250df}
.who{font-weight:600}.meta{color:#59636e;font-size:.9em}
@media print{details{display:block}pre{white-space:pre-wrap}body{margin:0;max-width:none}}
`

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"headline": headline, "tokens": tokens, "cost": cost, "duration": duration, "who": who,
	"taskName": taskName, "approvalCounts": approvalCounts, "inputNote": inputNote, "auditNote": auditNote,
	"omittedNote": omittedNote, "join": strings.Join, "diffLines": diffLines, "sections": sections, "sessionName": sessionName,
	"css":   func() template.CSS { return template.CSS(pageCSS) },
	"deref": func(b *bool) bool { return b != nil && *b },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fr-report: {{headline .}}</title>
<style>{{css}}</style></head>
<body>
<h1 class="{{.Outcome}}">fr-report: {{headline .}}</h1>
{{if .Sessions}}<table><tr><th>outcome</th><th>task</th><th>agents</th><th>turns</th><th>duration</th><th>tokens in / out / cached</th><th>cost</th></tr>
{{range .Sessions}}<tr><td class="{{.Outcome}}">{{.Outcome}}</td><td>{{taskName .}}{{if .Error}}<br><span class="failed">{{.Error}}</span>{{end}}{{if .ID}}<br><span class="meta">{{.Kind}} {{.ID}}</span>{{end}}</td><td>{{join .Agents ", "}}</td><td class="n">{{.Turns}}</td><td class="n">{{duration .Seconds}}</td><td class="n">{{tokens .Tokens}}</td><td class="n">{{cost .CostUSD}}</td></tr>
{{end}}</table>{{end}}
{{if .Unpriced}}<p class="meta">No price for {{join .Unpriced ", "}} in --prices.</p>{{end}}
<h2>Approvals: {{approvalCounts .}}</h2>
{{if .Approvals}}<table><tr><th>#</th><th>decision</th>{{if gt (len .Sessions) 1}}<th>session</th>{{end}}<th>prompt</th><th>decided by</th></tr>
{{range .Approvals}}<tr id="p{{.Seq}}"><td class="n">{{.Seq}}</td><td class="{{.Decision}}">{{.Decision}}</td>{{if gt (len $.Sessions) 1}}<td>{{sessionName $ .Session}}</td>{{end}}<td>{{.Summary}}{{if .Path}} <span class="meta">+{{.Added}} −{{.Removed}}</span>{{end}}{{if .Diff}}<details><summary>diff</summary><pre class="diff">{{range diffLines .Diff}}<span class="{{.Class}}">{{.Text}}</span>
{{end}}</pre></details>{{end}}</td><td>{{who .Decider .Rule}}{{if .Reason}}: {{.Reason}}{{end}}</td></tr>
{{end}}</table>{{end}}
<p class="meta">{{auditNote .}}</p>
{{if .Questions}}<h2>Questions</h2><table><tr><th>question</th><th>options</th><th>answer</th><th>decided by</th></tr>
{{range .Questions}}<tr><td>{{.Question}}</td><td>{{join .Options ", "}}</td><td class="{{.Decision}}">{{if .Answer}}{{.Answer}}{{else}}{{.Decision}}{{end}}</td><td>{{who .Decider .Rule}}</td></tr>
{{end}}</table>{{end}}
{{if .Files}}<h2>Files changed</h2><table><tr><th></th><th>file</th><th>added</th><th>removed</th></tr>
{{range .Files}}<tr><td>{{.Sigil}}</td><td>{{.Path}}{{if eq .Decision "unknown"}} <span class="meta">(write asked for; decision unknown)</span>{{end}}</td><td class="n">+{{.Added}}</td><td class="n">−{{.Removed}}</td></tr>
{{end}}</table>{{end}}
<h2>Transcript</h2>
{{$many := gt (len .Sessions) 1}}{{range sections .}}{{if $many}}<h3 class="{{.Session.Outcome}}">{{.Session.Kind}}{{if or .Session.Task .Session.Title}}: {{taskName .Session}}{{end}}{{if .Session.ID}} <span class="meta">{{.Session.ID}}</span>{{end}}</h3>
{{end}}{{range .Entries}}<div class="entry {{.Kind}}">{{if eq .Kind "reply"}}<pre>{{.Text}}</pre>{{else if eq .Kind "thinking"}}<details><summary class="meta">thinking</summary><pre>{{.Text}}</pre></details>{{else if eq .Kind "user"}}<span class="who">user</span><pre>{{.Text}}</pre>{{else if eq .Kind "agent"}}<span class="who">{{.Agent}}</span> <span class="meta">{{.Title}}</span><pre>{{.Text}}</pre>{{else if eq .Kind "tool"}}<span class="meta">tool</span> <span class="who">{{.Title}}</span>{{if .Agent}} <span class="meta">({{.Agent}})</span>{{end}} {{.Text}}{{else if eq .Kind "output"}}<details><summary class="meta">{{.Title}} {{if .OK}}{{if deref .OK}}ok{{else}}failed{{end}}{{end}}</summary><pre>{{.Text}}</pre></details>{{else if eq .Kind "prompt"}}<span class="meta">prompt</span> <a href="#p{{.Ref}}">#{{.Ref}}</a> {{.Text}}{{else if eq .Kind "result"}}<span class="who {{.Title}}">{{.Text}}</span>{{else}}<span class="meta">{{.Kind}} {{.Title}}</span> {{.Text}}{{end}}</div>
{{end}}{{end}}
<h2>Input</h2><p class="meta">{{inputNote .}}.{{with omittedNote .}}<br>{{.}}.{{end}}{{if .Redacted}}<br>Secrets redacted.{{end}}</p>
</body></html>
`))

// section is one session's part of the transcript.
type section struct {
	Session *Session
	Entries []*Entry
}

// sections groups the transcript by session, in the order the sessions began, each keeping the
// order of its entries: sessions a daemon ran at once are shown one after the other.
func sections(r *Report) []section {
	out := make([]section, len(r.Sessions))
	for i, s := range r.Sessions {
		out[i].Session = s
	}
	var other []*Entry
	for _, e := range r.Transcript {
		if e.Session >= 0 && e.Session < len(out) {
			out[e.Session].Entries = append(out[e.Session].Entries, e)
		} else {
			other = append(other, e)
		}
	}
	if len(other) > 0 {
		out = append(out, section{Session: &Session{Kind: "other", Task: "(sessions left out of this report)"}, Entries: other})
	}
	return out
}

type diffLine struct{ Class, Text string }

func diffLines(d string) []diffLine {
	var out []diffLine
	for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
		c := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			c = "hunk"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		}
		out = append(out, diffLine{c, l})
	}
	return out
}

type htmlPrinter struct{}

func (htmlPrinter) Print(w io.Writer, r *Report) error { return page.Execute(w, r) }
