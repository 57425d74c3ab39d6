package filter

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/pkg/wire"
)

// The paths fr-filter may take over a line: --type, the identity, the skip-ahead of a
// select(.type == ...) filter (and the same filter without it), a filter that builds values,
// the output layouts, and the readers of several values (-n, --slurp, --stream, --seq).
var notTextPaths = []struct {
	args  []string
	cfg   config
	slurp bool     // the output holds every value at once
	types []string // the types it keeps, when it keeps some only
}{
	{args: []string{"--type", "token"}, types: []string{"token"}},
	{args: []string{"--type", "token", "."}, types: []string{"token"}},
	{args: []string{"."}},
	{args: []string{}},
	{args: []string{`select(.type == "token")`}, types: []string{"token"}},
	{args: []string{`select(.type == "token")`}, cfg: config{noSkip: true}, types: []string{"token"}},
	{args: []string{`select(.type == "token" or .type == "status")`}, types: []string{"token", "status"}},
	{args: []string{".text"}},
	{args: []string{"-r", ".text"}},
	{args: []string{"-j", "--type", "token", ".text"}, types: []string{"token"}},
	{args: []string{"{t: .type}"}},
	{args: []string{"-c", "."}},
	{args: []string{"--indent", "2", "."}},
	{args: []string{"--tab", "."}},
	{args: []string{"-S", "."}},
	{args: []string{"-a", "."}},
	{args: []string{"-C", "."}},
	{args: []string{"--seq", "."}},
	{args: []string{"--strict", "--type", "token"}},
	{args: []string{"-n", "[inputs]"}, slurp: true},
	{args: []string{"-s", "."}, slurp: true},
	{args: []string{"-c", "--stream", "."}},
	{args: []string{"--pretty"}},
}

// testPiece is the piece size the tests here read long lines in (the default is 4 MiB): a
// line of a few hundred kilobytes takes the same path as one of megabytes, in a fraction of
// the time under the race detector.
const testPiece = 64 << 10

// notTextLines are lines that are JSON but for bytes that are not UTF-8: in a string, in a
// key, in the type, in an array, split over two lines, long enough to be read in pieces.
var notTextLines = []string{
	"{\"type\":\"token\",\"text\":\"a\xff\"}",
	"{\"type\":\"token\",\"text\":\"\xc3\"}",
	"{\"type\":\"token\",\"\xfe\":1}",
	"{\"type\":\"tok\xe9n\"}",
	"{\"type\":\"status\",\"text\":\"\xed\xa0\x80\"}", // an encoded surrogate
	"[\"\xff\"]",
	"\"\xc0\xaf\"",
	"{\"type\":\"token\",\n\"text\":\"\xff\"}",
	"{\"type\":\"token\",\"text\":\"" + strings.Repeat("é", testPiece+100) + "\xff\"}",
	"{\"type\":\"token\",\"text\":\"" + strings.Repeat("é", testPiece+100) + "\xe2\x82\"}",
}

const goodLines = "{\"type\":\"ready\",\"protocolVersion\":1}\n{\"type\":\"token\",\"text\":\"é1\"}\n" +
	"{\"type\":\"status\",\"text\":\"s\"}\n"

// Every path treats a line that is not UTF-8 as a line that is not JSON: what it prints is
// what it prints when the line is replaced by one that is not JSON, and it warns.
func TestNotUTF8IsNotJSONOnEveryPath(t *testing.T) {
	testkit.WithoutRace(t)
	for _, bad := range notTextLines {
		input := goodLines + bad + "\n" + "{\"type\":\"token\",\"text\":\"é2\"}\n"
		noise := goodLines + "not json\n" + strings.Repeat("not json\n", strings.Count(bad, "\n")) + "{\"type\":\"token\",\"text\":\"é2\"}\n"
		for _, p := range notTextPaths {
			name := strings.Join(p.args, " ")
			cfg := p.cfg
			cfg.piece = testPiece
			got, gotErr, gotCode := runConfigured(cfg, p.args, []byte(input))
			want, _, wantCode := runConfigured(cfg, p.args, []byte(noise))
			short := bad
			if len(short) > 60 {
				short = short[:30] + "…" + short[len(short)-20:]
			}
			if !utf8.ValidString(got) {
				t.Errorf("fr-filter %s on %q: the output is not UTF-8: %q", name, short, cut(got))
			}
			if got != want || gotCode != wantCode {
				t.Errorf("fr-filter %s on %q: exit %d, out %q; with a line that is not JSON instead: exit %d, out %q",
					name, short, gotCode, cut(got), wantCode, cut(want))
			}
			// A line dropped for its type need not be read: it is not always counted.
			dropped := p.types != nil
			if sh := jsonscan.Scan([]byte(bad)); sh.Typed && slices.Contains(p.types, sh.Type()) {
				dropped = false
			}
			if !dropped && !strings.Contains(gotErr, wire.NotJSON) {
				t.Errorf("fr-filter %s on %q: no warning that a line is %s: %q", name, short, wire.NotJSON, gotErr)
			}
		}
	}
}

func cut(s string) string {
	if len(s) > 400 {
		return s[:200] + "…" + s[len(s)-100:]
	}
	return s
}

// A prompt that is not UTF-8 never vanishes where the filter keeps it: it is passed on
// unchanged, with a warning, for the command that answers prompts downstream (fr-approve) to
// refuse, so that it still gets exactly one answer. An output the filter makes from it is
// dropped (it would be made of text that is not UTF-8), and so is the prompt a filter drops.
func TestPromptNotUTF8PassedOnUnchanged(t *testing.T) {
	prompts := []string{
		"{\"type\":\"approval_request\",\"kind\":\"shell_command\",\"command\":\"ls \xff\"}",
		"{\"type\":\"question\",\"text\":\"\xfe?\"}",
		"{\"type\":\"approval_request\",\"kind\":\"shell_command\",\"command\":\"" + strings.Repeat("é", testPiece+100) + "\xff\"}",
	}
	for _, prompt := range prompts {
		input := "{\"type\":\"token\",\"text\":\"x\"}\n" + prompt + "\n{\"type\":\"token\",\"text\":\"y\"}\n"
		typ := "approval_request"
		if strings.Contains(prompt, `"question"`) {
			typ = "question"
		}
		for _, tc := range []struct {
			args []string
			cfg  config
			keep bool
		}{
			{args: []string{"--type", typ}, keep: true},
			{args: []string{"--type", "token," + typ, "."}, keep: true},
			{args: []string{"."}, keep: true},
			{args: []string{"-c", "."}, keep: true},
			{args: []string{"--strict", "."}, keep: true},
			{args: []string{`select(.type == "` + typ + `")`}, keep: true},
			{args: []string{`select(.type == "` + typ + `")`}, cfg: config{noSkip: true}, keep: true},
			{args: []string{`select(.type != "token")`}, keep: true},
			{args: []string{"-S", "."}, keep: true},
			{args: []string{"--type", typ, ".command"}},
			{args: []string{"{t: .type}"}},
			{args: []string{"--type", "token"}},
			{args: []string{`select(.type == "token")`}},
		} {
			name := strings.Join(tc.args, " ")
			cfg := tc.cfg
			cfg.piece = testPiece
			out, errs, code := runConfigured(cfg, tc.args, []byte(input))
			n := strings.Count(out, prompt+"\n")
			if tc.keep && n != 1 {
				t.Errorf("fr-filter %s: the prompt is passed on %d times, want once unchanged: %q", name, n, cut(out))
			}
			if !tc.keep && n != 0 {
				t.Errorf("fr-filter %s: the prompt is passed on: %q", name, cut(out))
			}
			if rest := strings.Replace(out, prompt+"\n", "", 1); !utf8.ValidString(rest) {
				t.Errorf("fr-filter %s: output made from the prompt is not UTF-8: %q", name, cut(rest))
			}
			warned := strings.Contains(errs, wire.NotTextPrompt(typ))
			selected := tc.keep || strings.Contains(name, ".command") || strings.Contains(name, "{t:")
			if warned != selected {
				t.Errorf("fr-filter %s: warned %v, want %v: %q", name, warned, selected, errs)
			}
			wantCode := 0
			if tc.args[0] == "--strict" {
				wantCode = exitRuntime // passed on, and then an error, as any line that is not JSON
			}
			if code != wantCode {
				t.Errorf("fr-filter %s: exit %d, want %d: %s", name, code, wantCode, errs)
			}
		}
	}
}

// piecesUTF8 agrees with utf8.Valid on the pieces put together, wherever the cuts fall.
func TestPiecesUTF8(t *testing.T) {
	texts := []string{"", "a", "é", "€uro", "😀x", "\xff", "a\xe2\x82", "\xe2\x82\xac", "\xf0\x9f\x98", "\xed\xa0\x80", "ab\xc3\xa9cd\xf0\x9f\x98\x80"}
	for _, s := range texts {
		b := []byte(s)
		// every way of cutting b in up to three pieces, empty pieces included
		for i := 0; i <= len(b); i++ {
			for j := i; j <= len(b); j++ {
				chunks := [][]byte{b[:i], b[i:j], b[j:]}
				if got, want := piecesUTF8(chunks), utf8.Valid(b); got != want {
					t.Errorf("piecesUTF8(%q) = %v, want %v", chunks, got, want)
				}
			}
		}
	}
	long := bytes.Repeat([]byte("é"), 100)
	if !piecesUTF8([][]byte{long[:51], long[51:]}) || piecesUTF8([][]byte{long[:51], []byte("\xff"), long[51:]}) {
		t.Error("piecesUTF8 is wrong on a long text")
	}
}
