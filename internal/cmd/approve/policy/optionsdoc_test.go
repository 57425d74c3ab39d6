package policy

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/testkit/golden"
)

// policyPage is the page of the policy language, whose table of options is written from
// programOptions.
const policyPage = "../../../../docs/policy.md"

var optionsRegionRE = regexp.MustCompile(`(?s)<!-- options-table -->\n.*?<!-- end options-table -->`)

// optionNames renders an option's spellings: `-a`/`--all`.
func optionNames(d *optDef) string {
	var s []string
	for _, n := range d.names {
		s = append(s, "`"+n+"`")
	}
	return strings.Join(s, "/")
}

// optionCells renders a table's harmless options and the others, grouped by why, with extra
// notes for each column.
func optionCells(t *optTable, harmlessNotes, riskyNotes []string) (harmless, risky string) {
	var ok []string
	byRisk := map[riskKind][]string{}
	if t != nil {
		if t.numeric {
			ok = append(ok, "`-NUM`")
		}
		if t.negate {
			ok = append(ok, "`--no-NAME` of each")
		}
		for _, d := range t.defs {
			if d.risk == 0 {
				ok = append(ok, optionNames(d))
			} else {
				byRisk[d.risk] = append(byRisk[d.risk], optionNames(d))
			}
		}
	}
	ok = append(ok, harmlessNotes...)
	var kinds []int
	for k := range byRisk {
		kinds = append(kinds, int(k))
	}
	sort.Ints(kinds)
	var bad []string
	for _, k := range kinds {
		bad = append(bad, riskKind(k).String()+": "+strings.Join(byRisk[riskKind(k)], " "))
	}
	bad = append(bad, riskyNotes...)
	if len(ok) == 0 {
		ok = []string{"none"}
	}
	return strings.Join(ok, " "), strings.Join(bad, "; ")
}

// optionsTable renders programOptions as a Markdown table: a row per program (programs that
// share a row together) and per subcommand it knows.
func optionsTable() string {
	names := map[*progSpec][]string{}
	for name, s := range programOptions {
		names[s] = append(names[s], name)
	}
	type row struct{ key, program, harmless, risky string }
	var rows []row
	for s, ns := range names {
		sort.Strings(ns)
		var quoted []string
		for _, n := range ns {
			quoted = append(quoted, "`"+n+"`")
		}
		prog := strings.Join(quoted, ", ")
		var hn, rn []string
		if s.style == styleNone {
			hn = append(hn, "every option: none matters")
		}
		if s.assigns {
			rn = append(rn, "every `NAME=VALUE` operand (sets a variable of the program)")
		}
		if s.writesOperand > 0 {
			rn = append(rn, "operand "+string(rune('0'+s.writesOperand))+" (a file it writes)")
		}
		if s.atFile {
			rn = append(rn, "`@FILE` (reads more arguments from FILE)")
		}
		if s.oldStyle {
			hn = append(hn, "(the first word is a cluster of options even without a `-`)")
		}
		if s.subcmd {
			rn = append(rn, "every subcommand not listed below")
		}
		h, r := optionCells(s.opts, hn, rn)
		rows = append(rows, row{ns[0], prog, h, r})
		var subs []string
		for sub := range s.subs {
			subs = append(subs, sub)
		}
		sort.Strings(subs)
		for _, sub := range subs {
			h, r := optionCells(s.subs[sub], nil, nil)
			rows = append(rows, row{ns[0] + " " + sub, "`" + ns[0] + " " + sub + "`", h, r})
		}
		if s.args != nil {
			h, r := optionCells(s.args, nil, nil)
			rows = append(rows, row{ns[0] + " test -args", "`" + ns[0] + " test -args`", h, r})
		}
		if s.afterDashDash != nil {
			var rn []string
			if len(s.afterDashDash.defs) == 0 {
				rn = []string{"every option"}
			}
			h, r := optionCells(s.afterDashDash, nil, rn)
			rows = append(rows, row{ns[0] + " ~", "`" + ns[0] + "` after `--`", h, r})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].key < rows[j].key })
	var b strings.Builder
	b.WriteString("<!-- options-table -->\n")
	b.WriteString("| program | harmless: an allow rule takes these | not harmless: an allow rule must name them |\n|---|---|---|\n")
	for _, r := range rows {
		b.WriteString("| " + r.program + " | " + r.harmless + " | " + r.risky + " |\n")
	}
	b.WriteString("<!-- end options-table -->")
	return b.String()
}

// docs/policy.md's table of options is programOptions, the table fr-approve decides and
// lints with: go test -update rewrites it.
func TestPolicyPageOptionsTable(t *testing.T) {
	b, err := os.ReadFile(policyPage)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(optionsRegionRE.FindAllIndex(b, -1)); n != 1 {
		t.Fatalf("docs/policy.md has %d tables of options (<!-- options-table --> ... <!-- end options-table -->), want 1", n)
	}
	page := optionsRegionRE.ReplaceAllLiteralString(string(b), optionsTable())
	golden.Check(t, policyPage, page)
}
