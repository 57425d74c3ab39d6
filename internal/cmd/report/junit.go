package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The JUnit shape Jenkins, GitLab and most CI systems read: testsuites > testsuite > testcase,
// a failed case with <failure message type>, one that never finished with <error>.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Props    *junitProps `xml:"properties,omitempty"`
	Cases    []junitCase `xml:"testcase"`
	Out      string      `xml:"system-out,omitempty"`
}

type junitProps struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Out       string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitPrinter struct{}

func secs(p *float64) string {
	if p == nil {
		return "0"
	}
	return fmt.Sprintf("%.3f", *p)
}

func (junitPrinter) Print(w io.Writer, r *Report) error {
	suite := junitSuite{Name: "fr session", Out: inputNote(r) + "\n" + auditNote(r)}
	var total float64
	for i, s := range r.Sessions {
		c := junitCase{Name: clip(oneLine(taskName(s)), 200), Classname: "fr." + s.Kind, Time: secs(s.Seconds)}
		if s.Seconds != nil {
			total += *s.Seconds
		}
		var out strings.Builder
		fmt.Fprintf(&out, "%s %s\nsession: %s\nagents: %s\nturns: %d\ntokens in/out/cached: %s\ncost: %s\n",
			s.Kind, s.Outcome, s.ID, strings.Join(s.Agents, ", "), s.Turns, tokens(s.Tokens), cost(s.CostUSD))
		for _, a := range r.Approvals {
			if a.Session == s.ID || (s.ID == "" && len(r.Sessions) == 1) {
				fmt.Fprintf(&out, "prompt %s: %s (%s)\n", a.Decision, a.Summary, who(a.Decider, a.Rule))
			}
		}
		if s.LastMessage != "" {
			fmt.Fprintf(&out, "%s: %s\n", s.LastAgent, s.LastMessage)
		}
		c.Out = out.String()
		switch s.Outcome {
		case Failed:
			msg := s.Error
			if msg == "" {
				msg = s.Kind + " failed"
			}
			c.Failure = &junitProblem{Message: clip(oneLine(msg), 1000), Type: "failed", Text: msg}
			suite.Failures++
		case Unfinished:
			c.Error = &junitProblem{Message: "the session stream ended before the " + s.Kind + " finished", Type: "unfinished"}
			suite.Errors++
		}
		_ = i
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	suite.Time = fmt.Sprintf("%.3f", total)
	props := []junitProp{{"outcome", r.Outcome}, {"tokens.input", fmt.Sprint(r.Tokens.Input)},
		{"tokens.output", fmt.Sprint(r.Tokens.Output)}, {"tokens.cached", fmt.Sprint(r.Tokens.Cached)},
		{"approvals", approvalCounts(r)}}
	if r.CostUSD != nil {
		props = append(props, junitProp{"costUSD", fmt.Sprintf("%.4f", *r.CostUSD)})
	}
	suite.Props = &junitProps{props}
	doc := junitSuites{Name: "fr-report", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Time: suite.Time, Suites: []junitSuite{suite}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, xml.Header+string(out)+"\n")
	return err
}
