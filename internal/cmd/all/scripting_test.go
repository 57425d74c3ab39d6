package all

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit/golden"
)

const scriptingPage = "../../../docs/scripting.md"

// exitRegionRE is a generated table of docs/scripting.md: the exit codes of one command (or
// subcommand, or "shared", the codes every command but fr-filter shares).
var exitRegionRE = regexp.MustCompile(`(?s)<!-- exit-codes: ([^>]*?) -->\n.*?<!-- end exit-codes -->`)

// exitTable renders codes as a Markdown table.
func exitTable(codes []cmdutil.ExitCode) string {
	var b strings.Builder
	b.WriteString("| code | meaning |\n|---|---|\n")
	for _, c := range codes {
		fmt.Fprintf(&b, "| %s | %s |\n", c, strings.ReplaceAll(c.Meaning, "|", `\|`))
	}
	return b.String()
}

// declaredExitCodes returns every command's and subcommand's exit codes by the name the page
// gives them ("fr-approve check"), and "shared".
func declaredExitCodes(t *testing.T) map[string][]cmdutil.ExitCode {
	all := map[string][]cmdutil.ExitCode{"shared": cmdutil.SharedExitCodes}
	for _, app := range Apps() {
		codes := cmdutil.AppExitCodes(app)
		if codes[""] == nil {
			t.Errorf("%s declares no exit codes of its own (cmdutil.DeclareExitCodes)", app.Name)
		}
		for _, name := range codes.Names() {
			all[strings.TrimSpace(app.Name+" "+name)] = codes[name]
		}
	}
	return all
}

// docs/scripting.md's exit-code tables are those the commands declare (and their --help and
// man pages show): go test -update rewrites them.
func TestScriptingPageExitCodes(t *testing.T) {
	b, err := os.ReadFile(scriptingPage)
	if err != nil {
		t.Fatal(err)
	}
	decl := declaredExitCodes(t)
	shown := map[string]bool{}
	page := exitRegionRE.ReplaceAllStringFunc(string(b), func(region string) string {
		name := exitRegionRE.FindStringSubmatch(region)[1]
		codes, ok := decl[name]
		if !ok {
			t.Errorf("docs/scripting.md has exit codes for %q, which no command declares", name)
			return region
		}
		shown[name] = true
		return "<!-- exit-codes: " + name + " -->\n" + exitTable(codes) + "<!-- end exit-codes -->"
	})
	var missing []string
	for name := range decl {
		if !shown[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		t.Errorf("docs/scripting.md has no exit codes for %s: add <!-- exit-codes: %s --> and <!-- end exit-codes --> where they go, then go test -update", name, name)
	}
	golden.Check(t, scriptingPage, page)
}

func TestExitTable(t *testing.T) {
	got := exitTable([]cmdutil.ExitCode{{Code: 0, Meaning: "ok"}, {Code: cmdutil.ExitPassedOn, Meaning: "a | b"}})
	if want := "| code | meaning |\n|---|---|\n| 0 | ok |\n| N | a \\| b |\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
