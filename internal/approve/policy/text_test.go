package policy

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/fuseraft/fr/pkg/wire"
)

var textPieces = []string{"a", "bcdefghij", `\`, `\\`, `\"`, `\n`, `\u0041`, `\ud83d\ude00`, `\ud800`, `\udc00`, `\ud800\u0041`,
	`\ud83d`, `\ude00`, `\udbff\udfff`, `\udbff`, `\udfff`, `\uDBFF\uDC00`, `\uDc00`, `\u`, `\ud8`, `\\ud800`, "é", "日本", "😀", "\xff", "\xe6\x97", "\x80", "\xed\xa0\x80", `"`, "u", "d800"}

// TestValidText: validText says what wire.ValidText says, on texts of every
// escape, surrogate and byte that is not UTF-8.
func TestValidText(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 50000; i++ {
		var b []byte
		for k := r.Intn(12); k > 0; k-- {
			b = append(b, textPieces[r.Intn(len(textPieces))]...)
		}
		if got, want := validText(b), wire.ValidText(b); got != want {
			t.Fatalf("%q: %v, wire.ValidText says %v", b, got, want)
		}
		if got, want := mayHaveEscapeU(b), bytes.Contains(b, []byte(`\u`)); want && !got {
			t.Fatalf("%q: holds \\u, missed", b)
		}
	}
}

// FuzzValidText: validText says what wire.ValidText says.
func FuzzValidText(f *testing.F) {
	for _, s := range textPieces {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validText(b), wire.ValidText(b); got != want {
			t.Fatalf("%q: %v, wire.ValidText says %v", b, got, want)
		}
	})
}
