package wire

import (
	"bytes"
	"math/rand"
	"testing"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/jsonscan"
)

// validTextByByte is ValidText as first written, looking at every byte after the first
// backslash: the reference the faster loop must agree with.
func validTextByByte(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	hex := func(i int) rune {
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return -1
		}
		var r rune
		for _, c := range raw[i+2 : i+6] {
			switch {
			case '0' <= c && c <= '9':
				r = r<<4 | rune(c-'0')
			case 'a' <= c && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case 'A' <= c && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return -1
			}
		}
		return r
	}
	for i := bytes.IndexByte(raw, '\\'); i >= 0 && i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		switch r := hex(i); {
		case 0xD800 <= r && r < 0xDC00:
			if lo := hex(i + 6); lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 11
		case 0xDC00 <= r && r <= 0xDFFF:
			return false
		default:
			i++
		}
	}
	return true
}

func FuzzValidText(f *testing.F) {
	for _, s := range []string{`"a\ud800"`, `"\\ud800"`, `"\\\ud800"`, `"\ud83d\ude00 x \udc00"`, `"x\ud83d\u0041"`,
		"\"\xff\"", `"caf\u00e9 \n \\ \" \/"`, `\`, `\\`, `"\ud800\ud800\udc00"`, `"\ud8`, `"a\\\\\udfff"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := ValidText(raw), validTextByByte(raw); got != want {
			t.Fatalf("ValidText(%q) = %v, want %v", raw, got, want)
		}
	})
}

var textPieces = []string{"a", "bcdefghij", `\`, `\\`, `\"`, `\n`, `\u0041`, `\ud83d\ude00`, `\ud800`, `\udc00`, `\ud800\u0041`,
	`\ud83d`, `\ude00`, `\udbff\udfff`, `\udbff`, `\udfff`, `\uDBFF\uDC00`, `\uDc00`, `\u`, `\ud8`, `\\ud800`, "é", "日本", "😀", "\xff", "\xe6\x97", "\x80", "\xed\xa0\x80", `"`, "u", "d800"}

// TestValidTextPieces: ValidText says what the byte-by-byte reference says on texts of every
// escape, surrogate and byte that is not UTF-8, and jsonscan.TextFlags misses no \u.
func TestValidTextPieces(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 50000; i++ {
		var b []byte
		for k := r.Intn(12); k > 0; k-- {
			b = append(b, textPieces[r.Intn(len(textPieces))]...)
		}
		if got, want := ValidText(b), validTextByByte(b); got != want {
			t.Fatalf("%q: %v, the reference says %v", b, got, want)
		}
		if got, want := jsonscan.TextFlags(b)&jsonscan.EscapeU != 0, bytes.Contains(b, []byte(`\u`)); want && !got {
			t.Fatalf("%q: holds \\u, missed", b)
		}
	}
}
