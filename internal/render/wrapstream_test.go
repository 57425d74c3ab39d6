package render_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/internal/testkit/screentest"
	"github.com/fuseraft/fr/internal/testkit/tty"
	"github.com/fuseraft/fr/pkg/wire"
)

// streamOn renders text streamed as the given kind of event, cut into tokens at the offsets
// cuts (in bytes, inside words too), on a terminal cols wide, and returns the screen.
func streamOn(t *testing.T, cols int, typ, text string, cuts []int, timestamps bool) []string {
	t.Helper()
	var out bytes.Buffer
	opts := render.OutputOptions(tty.Terminal(cmdutil.Streams{}, cols), false)
	opts.Timestamps = timestamps
	r := render.New(&out, opts)
	prev := 0
	for _, c := range append(cuts, len(text)) {
		if c <= prev {
			continue
		}
		raw, _ := json.Marshal(map[string]string{"type": typ, "text": text[prev:c]})
		if err := r.Event(wire.Event{Type: typ, Raw: raw}); err != nil {
			t.Fatal(err)
		}
		prev = c
	}
	r.Close()
	s := screentest.NewScreen(cols, 200)
	s.OutputCR = true
	s.Write(out.Bytes())
	return strings.Split(strings.TrimRight(s.Text(false), "\n"), "\n")
}

const reply = "I ran the tests and wrote a test for it. The parser now keeps quoted words together when a quote is escaped, and supercalifragilisticexpialidocious-words-that-are-longer-than-any-line still break where the line ends."

// Streamed text breaks at spaces, never inside a word that fits on a line, however the
// tokens cut it: the words on the screen are the words sent, in order.
func TestStreamWrapsAtSpaces(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, cols := range []int{20, 33, 60, 120} {
		for _, typ := range []string{"token", "thinking", "shell_output"} {
			for range 30 {
				var cuts []int
				for i := 0; i < len(reply); i += 1 + rng.IntN(6) {
					cuts = append(cuts, i)
				}
				rows := streamOn(t, cols, typ, reply, cuts, false)
				var words []string
				for _, row := range rows {
					if w := len([]rune(row)); w > cols-1 {
						t.Fatalf("%d columns, %s: a row of %d columns: %q", cols, typ, w, row)
					}
					row = strings.TrimPrefix(strings.TrimPrefix(row, "┊ "), "│ ")
					words = append(words, strings.Fields(row)...)
				}
				for _, w := range strings.Fields(reply) {
					if len(words) == 0 {
						t.Fatalf("%d columns, %s: %q missing:\n%s", cols, typ, w, strings.Join(rows, "\n"))
					}
					if words[0] == w {
						words = words[1:]
						continue
					}
					// only a word longer than a line is broken, each piece filling its line
					if len(w) <= cols-3 || !strings.HasPrefix(w, words[0]) {
						t.Fatalf("%d columns, %s: %q split as %q:\n%s", cols, typ, w, words[0], strings.Join(rows, "\n"))
					}
					rest := w
					for len(words) > 0 && rest != "" && strings.HasPrefix(rest, words[0]) {
						rest = rest[len(words[0]):]
						words = words[1:]
					}
					if rest != "" {
						t.Fatalf("%d columns, %s: %q broken wrong:\n%s", cols, typ, w, strings.Join(rows, "\n"))
					}
				}
			}
		}
	}
}

// The case that was seen: "it." streamed as "i" and "t." at the end of a line.
func TestStreamWordTakenBack(t *testing.T) {
	text := "I ran the tests and wrote a test for it."
	i := strings.Index(text, "it.")
	rows := streamOn(t, 39, "token", text, []int{i + 1}, false)
	if len(rows) != 2 || rows[0] != "I ran the tests and wrote a test for" || rows[1] != "it." {
		t.Errorf("rows: %q", rows)
	}
	rows = streamOn(t, 39, "token", text, []int{i + 1}, true)
	if len(rows) != 2 || !strings.HasSuffix(rows[1], " it.") || strings.Contains(rows[0], " i") && strings.HasSuffix(rows[0], " i") {
		t.Errorf("rows with times: %q", rows)
	}
}

// Whatever streams in, however cut, a terminal never has to wrap a row (none is wider than the
// width less one column), and no text is lost: the letters shown are the letters sent.
func FuzzStreamWrap(f *testing.F) {
	f.Add(reply, uint64(1), uint8(20))
	f.Add("a\tb  c\n\nd "+strings.Repeat("x", 50)+" 漢字漢字 é", uint64(7), uint8(11))
	f.Fuzz(func(t *testing.T, text string, seed uint64, w uint8) {
		cols := 4 + int(w)%150
		if len(text) > 2000 || !utf8.ValidString(text) {
			t.Skip()
		}
		rng := rand.New(rand.NewPCG(seed, 1))
		var cuts []int
		for i := 1; i < len(text); i += 1 + rng.IntN(8) {
			if utf8.RuneStart(text[i]) {
				cuts = append(cuts, i)
			}
		}
		rows := streamOn(t, cols, "token", text, cuts, false)
		var got strings.Builder
		for _, row := range rows {
			if render.StringWidth(row) > cols-1 {
				t.Fatalf("%d columns: a row of %d: %q", cols, render.StringWidth(row), row)
			}
			got.WriteString(row)
		}
		strip := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if want := strip(termsafe.Text(text)); strip(got.String()) != want {
			t.Fatalf("%d columns: shown %q, sent %q", cols, strip(got.String()), want)
		}
	})
}
