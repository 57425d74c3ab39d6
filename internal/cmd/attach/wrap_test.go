package attach_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/render"
)

const longCommand = "go test ./... && go vet ./... && git add -A && git commit -m 'lexer: keep quoted words together when a quote is escaped' && git tag -a v1.2.3 -m 'release 1.2.3' && git push origin HEAD:main --force && git push --tags"

// A command longer than three lines of the terminal is shown whole at the prompt, at 60 and
// 120 columns, with and without colour: every character of it is on the screen, in order, once
// the wrapped lines are joined, and no line of the prompt is wider than the terminal.
func TestInteractiveLongCommandWraps(t *testing.T) {
	t.Parallel()
	if render.StringWidth(longCommand) <= 3*60 {
		t.Fatalf("the command is not longer than three lines of 60 columns")
	}
	for _, cols := range []uint16{60, 120} {
		for _, color := range []string{"never", "always"} {
			t.Run(fmt.Sprintf("%d-%s", cols, color), func(t *testing.T) {
				t.Parallel()
				sock, record := daemon(t)
				tm := startTermSize(t, cols, "--socket", sock, "--color", color)
				tm.waitFor("▶ attached", 1)
				tm.typeKeys("push it\r")
				tm.waitPrompt("┃ approve? shell command", 1)
				screen := tm.text()
				start := strings.Index(screen, "┃ approve? shell command")
				end := strings.LastIndex(screen, "┃ allow? [y/N] ")
				var joined strings.Builder
				for _, l := range strings.Split(screen[start:end], "\n") {
					if l == "" {
						continue
					}
					if w := render.StringWidth(l); w > int(cols) {
						t.Errorf("a line of %d columns on a %d-column terminal: %q", w, cols, l)
					}
					_, text, ok := strings.Cut(l, "┃ ")
					if !ok {
						t.Errorf("a line of the prompt without its bar: %q", l)
					}
					if strings.Contains(text, "…") {
						t.Errorf("the prompt is cut: %q", l)
					}
					joined.WriteString(text)
				}
				if squash(joined.String()) != squash("approve? shell command$ "+longCommand) {
					t.Errorf("the command is not shown whole, in order:\n%s", screen[start:end])
				}
				tm.typeKeys("n\r")
				tm.waitFor("✗ denied", 1)
				tm.waitFor("approval denied: the push", 1)
				tm.typeKeys("\x04")
				tm.exit()
				if got := received(t, record); len(got) != 2 || got[1] != `{"type":"approval_response","approved":false}` {
					t.Errorf("the daemon received %q", got)
				}
			})
		}
	}
}

// squash drops white space, which wrapping replaces with line ends.
func squash(s string) string { return strings.Join(strings.Fields(s), "") }
