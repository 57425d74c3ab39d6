package clidoc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func sampleApp() *cli.App {
	return &cli.App{
		Name:      "fr-demo",
		Usage:     "show what the generator does",
		UsageText: "fr-demo [options] RESOURCE",
		Description: `Lists things. A second sentence with a -dash.

EXIT STATUS
  0   success
  10  nothing to talk to

EXAMPLES
  fr-demo sessions --format tsv | cut -f1
.starts with a dot`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "output format: jsonl, json", Value: "jsonl"},
			&cli.BoolFlag{Name: "all", Usage: "include completed ones"},
			&cli.StringFlag{Name: "output", Usage: "write to `FILE`"},
			&cli.StringFlag{Name: "secret", Hidden: true},
		},
		Commands: []*cli.Command{
			{Name: "check", Usage: "check a stream", UsageText: "fr-demo check [EVENTS]",
				Flags: []cli.Flag{&cli.StringFlag{Name: "policy", Usage: "the policy [yaml]: strict"}}},
			{Name: "hidden", Hidden: true},
		},
	}
}

func TestManSections(t *testing.T) {
	m := Man(sampleApp())
	for _, want := range []string{
		".TH FR-DEMO 1",
		".SH NAME\nfr\\-demo \\- show what the generator does\n",
		".SH SYNOPSIS\n.nf\nfr\\-demo [options] RESOURCE\n.fi\n",
		".SH DESCRIPTION\n.PP\nLists things. A second sentence with a \\-dash.\n",
		".SH OPTIONS\n",
		"\\fB\\-\\-format\\fR, \\fB\\-f\\fR \\fIvalue\\fR\noutput format: jsonl, json (default: \"jsonl\")\n",
		"\\fB\\-\\-output\\fR \\fIFILE\\fR\nwrite to FILE\n",
		".SH COMMANDS\n.SS check\n",
		".SH EXIT STATUS\n.PP\n.RS 4\n.nf\n0   success\n10  nothing to talk to\n.fi\n.RE\n",
		".SH EXAMPLES\n",
		"\\&.starts with a dot",
		".SH SEE ALSO\n",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("man page lacks %q\n%s", want, m)
		}
	}
	for _, not := range []string{"secret", "hidden"} {
		if strings.Contains(m, not) {
			t.Errorf("man page shows hidden %q", not)
		}
	}
}

func TestManRendersWithMan(t *testing.T) {
	// When man(1) is installed, the page must render without warnings.
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("man not installed")
	}
	p := filepath.Join(t.TempDir(), "fr-demo.1")
	if err := os.WriteFile(p, []byte(Man(sampleApp())), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("man", "--warnings", "-l", p).CombinedOutput()
	if err != nil || strings.Contains(string(out), "warning") {
		t.Fatalf("man: %v\n%s", err, out)
	}
}

func TestCompletions(t *testing.T) {
	app := sampleApp()
	b := Bash(app)
	for _, want := range []string{"complete -o default -F _fr_demo fr-demo", "check)", "--policy", "--format", "-f"} {
		if !strings.Contains(b, want) {
			t.Errorf("bash completion lacks %q\n%s", want, b)
		}
	}
	if strings.Contains(b, "secret") {
		t.Error("bash completion offers a hidden flag")
	}
	if _, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command("bash", "-n", "-c", b).CombinedOutput(); err != nil {
			t.Errorf("bash -n: %v %s", err, out)
		}
	}
	z := Zsh(app)
	for _, want := range []string{"#compdef fr-demo", "'check:check a stream'", `'--policy[the policy \[yaml\]\: strict]:value:_files'`} {
		if !strings.Contains(z, want) {
			t.Errorf("zsh completion lacks %q\n%s", want, z)
		}
	}
	f := Fish(app)
	for _, want := range []string{"-a check -d 'check a stream'", "complete -c fr-demo -l format -s f -r -d 'output format: jsonl, json'",
		"complete -c fr-demo -n '__fish_seen_subcommand_from check' -l policy -r"} {
		if !strings.Contains(f, want) {
			t.Errorf("fish completion lacks %q\n%s", want, f)
		}
	}
}

func TestWriteAndDrift(t *testing.T) {
	root := t.TempDir()
	apps := []*cli.App{sampleApp()}
	if d := Drift(root, apps); len(d) != 4 {
		t.Fatalf("drift before writing: %v", d)
	}
	if err := Write(root, apps); err != nil {
		t.Fatal(err)
	}
	if d := Drift(root, apps); len(d) != 0 {
		t.Fatalf("drift after writing: %v", d)
	}
	apps[0].Flags = append(apps[0].Flags, &cli.BoolFlag{Name: "new"})
	if d := Drift(root, apps); len(d) == 0 || !strings.Contains(strings.Join(d, " "), "man/fr-demo.1: out of date") {
		t.Fatalf("a new flag must show as drift: %v", d)
	}
}

// After a subcommand, bash offers its flags, even when a global flag and its value come first.
func TestBashCompletesSubcommandFlags(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script := Bash(sampleApp()) + `
complete() { :; }
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
_fr_demo
printf '%s\n' "${COMPREPLY[@]}"
`
	for _, tc := range []struct {
		words []string
		want  string
		not   string
	}{
		{[]string{"fr-demo", "check", "--p"}, "--policy", ""},
		{[]string{"fr-demo", "--format", "json", "check", "--p"}, "--policy", ""},
		{[]string{"fr-demo", "--output", "x", "--p"}, "", "--policy"},
		{[]string{"fr-demo", "ch"}, "check", ""},
	} {
		out, err := exec.Command("bash", append([]string{"-c", script, "bash"}, tc.words...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v %s", tc.words, err, out)
		}
		got := strings.Fields(string(out))
		has := func(w string) bool {
			for _, g := range got {
				if g == w {
					return true
				}
			}
			return false
		}
		if tc.want != "" && !has(tc.want) {
			t.Errorf("%q: completions %q lack %s", tc.words, got, tc.want)
		}
		if tc.not != "" && has(tc.not) {
			t.Errorf("%q: completions %q offer %s", tc.words, got, tc.not)
		}
	}
}

func TestFishSharedFlagIsOneLine(t *testing.T) {
	shared := &cli.StringFlag{Name: "input", Usage: "read `PATH`"}
	app := &cli.App{Name: "fr-two", Commands: []*cli.Command{
		{Name: "repl", Usage: "a chat", Flags: []cli.Flag{shared, &cli.BoolFlag{Name: "questions", Usage: "ask"}}},
		{Name: "run", Usage: "a run", Flags: []cli.Flag{&cli.StringFlag{Name: "config", Usage: "a config"}, shared}},
	}}
	f := Fish(app)
	want := "complete -c fr-two -n '__fish_seen_subcommand_from repl run' -l input -r -d 'read PATH'\n"
	if strings.Count(f, "-l input") != 1 || !strings.Contains(f, want) {
		t.Errorf("--input of both subcommands: want the one line %q in\n%s", want, f)
	}
	for _, own := range []string{"'__fish_seen_subcommand_from repl' -l questions", "'__fish_seen_subcommand_from run' -l config"} {
		if !strings.Contains(f, own) {
			t.Errorf("lacks %q in\n%s", own, f)
		}
	}
}
