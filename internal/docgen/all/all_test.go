package all

import (
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/docgen"
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
