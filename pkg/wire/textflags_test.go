package wire

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/jsonscan"
)

// FuzzLineTextFlags: what ParseLine hands on of a line's bytes (Line.TextFlags), so that a
// decoder of the prompt need not look again, is what looking again finds; and the checks made
// with it (ValidText, NotText) agree with the ones made without.
func FuzzLineTextFlags(f *testing.F) {
	for _, s := range []string{
		`{"type":"approval_request","kind":"shell_command","command":"ls"}`,
		`{"type":"approval_request","kind":"shell_command","command":"caf\u00e9 é"}`,
		"{\"type\":\"approval_request\",\"kind\":\"shell_command\",\"command\":\"ls\xff\"}",
		`{"type":"question","question":"\ud800?"}`,
		`{"type":"token","text":"😀 \ud83d\ude00"}`,
		`[1,"é"]`, `{"a":1}`, `not json`, "\"\xc3\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l := ParseLine(b)
		flags, ok := l.TextFlags()
		if !ok {
			if l.Kind != Noise {
				t.Fatalf("%q: a %s line without its text flags", b, l.Kind)
			}
			return
		}
		if !json.Valid(b) {
			t.Fatalf("%q: text flags for a line that is not JSON", b)
		}
		want := jsonscan.TextFlags(b)
		if want&jsonscan.HighBytes != 0 && utf8.Valid(b) {
			want |= jsonscan.CheckedUTF8
		}
		if flags != want {
			t.Fatalf("%q: ParseLine's flags %b, looking again finds %b", b, flags, want)
		}
		if got, want := jsonscan.ValidText(b, flags), ValidText(b); got != want {
			t.Fatalf("%q: ValidText with the line's flags %v, without %v", b, got, want)
		}
		if got, want := l.NotText(), l.Kind == EventLine && isPrompt(l.Type) && !utf8.Valid(b); got != want {
			t.Fatalf("%q: NotText %v, want %v", b, got, want)
		}
	})
}
