package attach_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/cmd/attach"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/tty"
)

// Pretty output is as wide as the terminal stdout is, else $COLUMNS, else 80: an event's
// line, longer than any of them, is cut to exactly that width.
func TestPrettyWidth(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "frw")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	title := strings.Repeat("a long title ", 20)
	go func() {
		// A daemon that says hello, calls a tool, and goes away.
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(`{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}` + "\n"))
			c.Write([]byte(`{"type":"tool_calling","agent":null,"tool":"search_code","argsSummary":"` + title + `"}` + "\n"))
			c.Close()
		}
	}()
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
				Getenv: testkit.Env("COLUMNS", tc.columns)}, tc.width)
			s.InTerminal = false // input from a pipe: not interactive
			attach.Run(context.Background(), s, []string{"fr-attach", "--socket", sock, "--format", "pretty", "--color", "never", "--max-reconnects", "0"})
			widest := 0
			for _, l := range strings.Split(out.String(), "\n") {
				widest = max(widest, render.StringWidth(l))
			}
			if widest != tc.want {
				t.Errorf("the widest line is %d columns, want %d:\n%s\nstderr:\n%s", widest, tc.want, out.String(), errb.String())
			}
		})
	}
}
