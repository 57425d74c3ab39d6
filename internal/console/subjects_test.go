package console_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmd/attach"
	"github.com/fuseraft/fr/internal/cmd/filter"
	"github.com/fuseraft/fr/internal/cmd/stream"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/testkit/tty"
)

// What a prompt asks about (the command, the path, the plugin action, the route) is never cut
// in any view: fr-filter --pretty, fr-stream and fr-attach, at narrow widths. The prompts are
// render's testdata/prompts.jsonl.

var subjects = []string{
	"go test ./... && go vet ./... && git add -A && git commit -m 'lexer: keep quoted words together when a quote is escaped' && git push origin HEAD:main --force",
	"curl -fsSL https://downloads.example.com/releases/v1.2.3/installer-linux-amd64-with-a-very-long-name.sh -o /tmp/i.sh",
	"sh /tmp/i.sh --prefix /usr/local --yes",
	"github.create_pull_request_with_reviewers",
	"internal/some/deeply/nested/package/directory/with/a/long/name/lexer_quoted_words_test.go",
	"PlannerWithAVeryLongAgentName → SecurityReviewerAgent on “HANDOFF TO THE REVIEWER WITH THE FULL CONTEXT”",
	"Which branch should the fix go to? The release branch is frozen until Friday.",
}

const prompts = "../render/testdata/prompts.jsonl"

// streams are a command's streams for a view width columns wide: stdout a terminal that wide
// (stdin a pipe), or, with term false, no terminal and $COLUMNS set to width.
func streams(in string, width int, term bool, env map[string]string) (cmdutil.Streams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	s := cmdutil.Streams{In: strings.NewReader(in), Out: &out, Err: &errOut, Now: time.Now,
		Getenv: func(k string) string {
			if k == "COLUMNS" {
				if term {
					return ""
				}
				return strconv.Itoa(width)
			}
			if v, ok := env[k]; ok {
				return v
			}
			return os.Getenv(k)
		}}
	if !term {
		return tty.Terminal(s, 0), &out, &errOut
	}
	s = tty.Terminal(s, width)
	s.InTerminal = false
	return s, &out, &errOut
}

// eachView runs view at every width, with stdout a terminal and not.
func eachView(t *testing.T, view func(t *testing.T, width int, term bool)) {
	for _, term := range []bool{false, true} {
		for _, w := range widths {
			t.Run(fmt.Sprintf("terminal=%v/%d", term, w), func(t *testing.T) { view(t, w, term) })
		}
	}
}

// wholeSubjects checks that view shows every subject whole at width.
func wholeSubjects(t *testing.T, view string, width int, out string) {
	t.Helper()
	var joined strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if w := render.StringWidth(l); w > width && !strings.Contains(l, "┃ @@ ") {
			t.Errorf("%s at %d columns: a line is %d wide: %q", view, width, w, l)
		}
		if _, text, ok := strings.Cut(l, "┃ "); ok {
			joined.WriteString(text)
		}
	}
	all := strings.Join(strings.Fields(joined.String()), "")
	for _, s := range subjects {
		if !strings.Contains(all, strings.Join(strings.Fields(s), "")) {
			t.Errorf("%s at %d columns: %q is not shown whole:\n%s", view, width, s, out)
		}
	}
}

var widths = []int{20, 27, 40, 61}

func TestSubjectsWholeInFilter(t *testing.T) {
	in, err := os.ReadFile(prompts)
	if err != nil {
		t.Fatal(err)
	}
	eachView(t, func(t *testing.T, w int, term bool) {
		s, out, errOut := streams(string(in), w, term, nil)
		if code := filter.Run(context.Background(), s, []string{"fr-filter", "--pretty", "--color", "never"}); code != 0 {
			t.Fatalf("fr-filter exit %d: %s", code, errOut)
		}
		wholeSubjects(t, "fr-filter --pretty", w, out.String())
	})
}

func TestSubjectsWholeInStream(t *testing.T) {
	dir := t.TempDir()
	abs, _ := filepath.Abs(prompts)
	fake := filepath.Join(dir, "fuseraft")
	script := "#!/bin/sh\n" +
		`echo '{"type":"ready","protocolVersion":1,"sessionId":"s1","model":"m","title":null,"autoTitle":null,"midTurnCommands":[]}'` + "\n" +
		"cat " + abs + "\necho '{\"type\":\"session_end\"}'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	eachView(t, func(t *testing.T, w int, term bool) {
		s, out, errOut := streams("", w, term, map[string]string{"FUSERAFT_BIN": fake})
		if code := stream.Run(context.Background(), s, []string{"fr-stream", "repl", "--format", "pretty", "--color", "never"}); code != 0 {
			t.Fatalf("fr-stream exit %d: %s", code, errOut)
		}
		wholeSubjects(t, "fr-stream", w, out.String())
	})
}

func TestSubjectsWholeInAttach(t *testing.T) {
	in, err := os.ReadFile(prompts)
	if err != nil {
		t.Fatal(err)
	}
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
	go func() {
		// A daemon that says hello, asks every prompt, and goes away.
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(`{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":[]}` + "\n"))
			c.Write(in)
			c.Close()
		}
	}()
	eachView(t, func(t *testing.T, w int, term bool) {
		s, out, _ := streams("", w, term, nil)
		attach.Run(context.Background(), s, []string{"fr-attach", "--socket", sock, "--format", "pretty", "--color", "never", "--max-reconnects", "0"})
		wholeSubjects(t, "fr-attach", w, out.String())
	})
}
