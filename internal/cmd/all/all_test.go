package all

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/clidoc"
	"github.com/fuseraft/fr/internal/cmd/sim/serve"
	"github.com/fuseraft/fr/pkg/wire"
)

// The committed man pages and completions must match the commands' definitions.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	if drift := clidoc.Drift("../../..", Apps()); len(drift) > 0 {
		t.Fatalf("generated docs are out of date; run 'make man':\n%s", strings.Join(drift, "\n"))
	}
}

// Every man page carries the hand-written sections users look for.
func TestManPagesHaveHandWrittenSections(t *testing.T) {
	for _, app := range Apps() {
		man := clidoc.Man(app)
		for _, sec := range []string{".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH EXAMPLES"} {
			if !strings.Contains(man, sec+"\n") {
				t.Errorf("%s: man page has no %s section", app.Name, strings.TrimPrefix(sec, ".SH "))
			}
		}
	}
}

// Subcommands that parse their own arguments still have their flags documented: every flag
// of fr-sim serve is in fr-sim's man page and completions, offered after "serve".
func TestSubcommandFlagsAreDocumented(t *testing.T) {
	files := clidoc.Files(Apps())
	man := files["man/fr-sim.1"]
	if !strings.Contains(man, ".SS serve\n") {
		t.Fatal("man/fr-sim.1 has no serve section")
	}
	serveSec := man[strings.Index(man, ".SS serve\n"):]
	serveSec = serveSec[:strings.Index(serveSec[1:], "\n.SS ")+1]
	bash := files["completions/bash/fr-sim"]
	var bashServe string
	for _, l := range strings.Split(bash, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "serve)") {
			bashServe = l
		}
	}
	zsh, fish := files["completions/zsh/_fr-sim"], files["completions/fish/fr-sim.fish"]
	for _, f := range serve.Flags() {
		name := f.Names()[0]
		if !strings.Contains(serveSec, `\fB\-\-`+strings.ReplaceAll(name, "-", `\-`)+`\fR`) {
			t.Errorf("man/fr-sim.1's serve section lacks --%s", name)
		}
		if !strings.Contains(bashServe, " --"+name+" ") && !strings.Contains(bashServe, " --"+name+`"`) && !strings.Contains(bashServe, `"--`+name+" ") {
			t.Errorf("bash completion of fr-sim serve lacks --%s: %s", name, bashServe)
		}
		if !strings.Contains(zsh, "'--"+name+"[") {
			t.Errorf("zsh completion of fr-sim lacks --%s", name)
		}
		if !strings.Contains(fish, "-n '__fish_seen_subcommand_from serve' -l "+name+" ") {
			t.Errorf("fish completion of fr-sim serve lacks --%s", name)
		}
	}
	if !strings.Contains(man, `\-\-reconnect\-grace`) {
		t.Error("man/fr-sim.1 does not mention --reconnect-grace")
	}
	// fr-stream's repl and run have their own sections with their flags.
	st := files["man/fr-stream.1"]
	for _, want := range []string{".SS repl\n", ".SS run\n", `\fB\-\-questions\fR`, `\fB\-\-config\fR, \fB\-c\fR`} {
		if !strings.Contains(st, want) {
			t.Errorf("man/fr-stream.1 lacks %q", want)
		}
	}
}

// complete runs the generated bash completion of app for words (the last one being completed)
// in dir and returns COMPREPLY.
func complete(t *testing.T, app, dir string, words ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script := clidoc.Files(Apps())["completions/bash/"+app] + `
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
` + "_" + strings.ReplaceAll(app, "-", "_") + `
printf '%s\n' "${COMPREPLY[@]}"
`
	cmd := exec.Command("bash", append([]string{"--norc", "--noprofile", "-c", script, "bash"}, words...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%q: %v %s", words, err, out)
	}
	got := strings.Fields(string(out))
	sort.Strings(got)
	return got
}

// After a flag with known values, bash offers those values, not flags.
func TestBashCompletesFlagValues(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		app   string
		words []string
		want  []string
	}{
		{"fr-ls", []string{"fr-ls", "sessions", "--format", ""}, []string{"json", "jsonl", "table", "tsv"}},
		{"fr-ls", []string{"fr-ls", "--format", "t"}, []string{"table", "tsv"}},
		{"fr-ls", []string{"fr-ls", "sessions", "--format", "=", ""}, []string{"json", "jsonl", "table", "tsv"}},
		{"fr-ls", []string{"fr-ls", "validate", "--color", ""}, []string{"always", "auto", "never"}},
		{"fr-stream", []string{"fr-stream", "run", "-f", ""}, []string{"jsonl", "pretty"}},
		{"fr-attach", []string{"fr-attach", "--format", ""}, []string{"jsonl", "pretty"}},
		{"fr-filter", []string{"fr-filter", "--color", "a"}, []string{"always", "auto"}},
		{"fr-filter", []string{"fr-filter", "--type", "tool_c"}, []string{"tool_call", "tool_calling"}},
		{"fr-filter", []string{"fr-filter", "--completion", ""}, []string{"bash", "fish", "zsh"}},
		{"fr-sim", []string{"fr-sim", "serve", "--unattended-policy", ""}, []string{"allow", "deny"}},
		// a subcommand is offered only the flags it takes
		{"fr-approve", []string{"fr-approve", "--au"}, []string{"--audit", "--audit-fsync", "--audit-stream"}},
		{"fr-approve", []string{"fr-approve", "check", "--au"}, nil},
		{"fr-approve", []string{"fr-approve", "check", "--po"}, []string{"--policy"}},
		{"fr-ls", []string{"fr-ls", "sessions", "--ver"}, nil},
		{"fr-ls", []string{"fr-ls", "--ver"}, []string{"--version"}},
		{"fr-ls", []string{"fr-ls", "comp"}, []string{"completion"}},
	} {
		if got := complete(t, tc.app, dir, tc.words...); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q: completions %q, want %q", tc.words, got, tc.want)
		}
	}
}

// Flags are offered only on a word that starts with "-"; elsewhere bash completes subcommands
// where one is expected, else file names.
func TestBashCompletesFilesAndFlags(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.yaml", "b.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := []string{"a.yaml", "b.jsonl"}
	for _, tc := range []struct {
		app   string
		words []string
		want  []string
	}{
		{"fr-ls", []string{"fr-ls", "validate", ""}, files},
		{"fr-ls", []string{"fr-ls", "validate", "a"}, []string{"a.yaml"}},
		{"fr-filter", []string{"fr-filter", ".", ""}, files},
		{"fr-filter", []string{"fr-filter", "-f", ""}, files},
		{"fr-ls", []string{"fr-ls", "sessions", "--project", ""}, files},
		{"fr-ls", []string{"fr-ls", "sessions", "--f"}, []string{"--fields", "--format", "--fuseraft"}},
		{"fr-ls", []string{"fr-ls", "--format", "json", "sessions"}, []string{"sessions"}},
		{"fr-ls", []string{"fr-ls", "--format", "=", "json", "mem"}, []string{"memory", "memory-agents"}},
		{"fr-ls", []string{"fr-ls", "--fields", "x", "v"}, []string{"validate"}},
		{"fr-stream", []string{"fr-stream", "r"}, []string{"repl", "run"}},
		{"fr-ls", []string{"fr-ls", "--col"}, []string{"--color"}},
	} {
		if got := complete(t, tc.app, dir, tc.words...); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q: completions %q, want %q", tc.words, got, tc.want)
		}
	}
}

// Every flag with known values takes a value and names each value in its usage, but for
// fr-filter --type, whose values are the event types.
func TestFlagValuesMatchFlags(t *testing.T) {
	n := 0
	for _, app := range Apps() {
		flags := append([]cli.Flag{}, app.Flags...)
		for _, c := range app.Commands {
			flags = append(flags, c.Flags...)
		}
		for _, f := range flags {
			name := f.Names()[0]
			vals := clidoc.Values(app, name)
			if vals == nil {
				continue
			}
			n++
			d, ok := f.(cli.DocGenerationFlag)
			if !ok || !d.TakesValue() {
				t.Errorf("%s --%s has values but takes none", app.Name, name)
				continue
			}
			if app.Name == "fr-filter" && name == "type" {
				if strings.Join(vals, " ") != strings.Join(wire.EventTypes(), " ") {
					t.Errorf("fr-filter --type completes %q, not the event types", vals)
				}
				continue
			}
			for _, v := range vals {
				if !strings.Contains(d.GetUsage(), v) {
					t.Errorf("%s --%s: usage %q does not name the value %s", app.Name, name, d.GetUsage(), v)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d flags with known values", n)
	}
}

// zsh and fish offer the known values too, instead of file names.
func TestZshAndFishCompleteFlagValues(t *testing.T) {
	files := clidoc.Files(Apps())
	for file, want := range map[string]string{
		"completions/zsh/_fr-stream":       `]:value:(jsonl pretty)' \`,
		"completions/zsh/_fr-attach":       `--color[colour in pretty output\: WHEN is auto, always or never]:value:(auto always never)'`,
		"completions/fish/fr-ls.fish":      "complete -c fr-ls -l format -x -a 'jsonl json tsv table' -d ",
		"completions/fish/fr-stream.fish":  "-l format -s f -x -a 'jsonl pretty' -d ",
		"completions/fish/fr-approve.fish": "-l format -x -a 'jsonl table' -d ",
	} {
		if !strings.Contains(files[file], want) {
			t.Errorf("%s lacks %q", file, want)
		}
	}
}
