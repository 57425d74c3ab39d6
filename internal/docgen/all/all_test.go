package all

import (
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/docgen"
	"github.com/fuseraft/fr/internal/sim/serve"
)

// The committed man pages and completions must match the commands' definitions.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	if drift := docgen.Drift("../../..", Apps()); len(drift) > 0 {
		t.Fatalf("generated docs are out of date; run 'make man':\n%s", strings.Join(drift, "\n"))
	}
}

// Every man page carries the hand-written sections users look for.
func TestManPagesHaveHandWrittenSections(t *testing.T) {
	for _, app := range Apps() {
		man := docgen.Man(app)
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
	files := docgen.Files(Apps())
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
