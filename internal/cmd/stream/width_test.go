//go:build unix

package stream

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/tty"
)

// Pretty output is as wide as the terminal stdout is, else $COLUMNS, else 80: the session's
// header, longer than any of them, is cut to exactly that width.
func TestPrettyWidth(t *testing.T) {
	title := strings.Repeat("a long title ", 20)
	fake := fakeFuseraft(t, `echo '{"type":"session_renamed","title":"`+title+`"}'; echo '{"type":"session_end"}'`)
	for _, tc := range []struct {
		name    string
		width   int // the terminal's; 0: stdout is no terminal
		columns string
		want    int
	}{
		{"terminal 60", 60, "", 60},
		{"terminal 120, COLUMNS ignored", 120, "40", 120},
		{"no terminal", 0, "", 80},
		{"no terminal, COLUMNS=132", 0, "132", 132},
		{"no terminal, COLUMNS=x", 0, "x", 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			s := tty.Terminal(cmdutil.Streams{In: strings.NewReader(""), Out: &out, Err: &errb,
				Getenv: testkit.Env("FUSERAFT_BIN", fake, "COLUMNS", tc.columns)}, tc.width)
			s.InTerminal = false // input from a pipe: no chat
			if code := Run(context.Background(), s, []string{"fr-stream", "repl", "--format", "pretty", "--color", "never"}); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			widest := 0
			for _, l := range strings.Split(out.String(), "\n") {
				widest = max(widest, render.StringWidth(l))
			}
			if widest != tc.want {
				t.Errorf("the widest line is %d columns, want %d:\n%s", widest, tc.want, out.String())
			}
		})
	}
}
