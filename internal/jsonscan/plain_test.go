package jsonscan

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// refFlags is TextFlags byte by byte.
func refFlags(b []byte) int {
	f := 0
	for i, c := range b {
		if c >= 0x80 {
			f |= HighBytes
		}
		if c == '\\' && i+1 < len(b) && b[i+1] == 'u' {
			f |= EscapeU
		}
	}
	return f
}

func checkPlain(t *testing.T, b []byte) {
	t.Helper()
	// every length and offset near the block edges of the input, so that each byte is
	// looked at by the 32-byte, the 8-byte and the last loop
	for lo := 0; lo < len(b) && lo < 40; lo++ {
		for hi := len(b); hi >= lo && hi > len(b)-40; hi-- {
			s := b[lo:hi]
			if got, want := TextFlags(s), refFlags(s); got != want {
				t.Fatalf("TextFlags(%q) = %v, want %v", s, got, want)
			}
			if hasAVX2 {
				hasAVX2 = false
				got := TextFlags(s)
				hasAVX2 = true
				if want := refFlags(s); got != want {
					t.Fatalf("TextFlags without AVX2 (%q) = %v, want %v", s, got, want)
				}
			}
		}
	}
}

func TestTextFlags(t *testing.T) {
	base := strings.Repeat("abcdefgh", 12)
	for _, c := range []string{`\u`, `\\u`, `\\]u`, `\]u`, "é", "\x80", "\xff", "é\\u", `\u` + "é", `\`, `u`, `\n`, `ut\`, `\t`} {
		for k := 0; k <= len(base); k++ {
			checkPlain(t, []byte(base[:k]+c+base[k:]))
		}
	}
}

func FuzzTextFlags(f *testing.F) {
	f.Add([]byte(`{"kind":"shell_command","command":"ls \\u"}`))
	f.Add([]byte(strings.Repeat("x", 31) + `\u00e9` + strings.Repeat("y", 40)))
	f.Add([]byte(strings.Repeat("x", 31) + `\\]u` + strings.Repeat("y", 40)))
	f.Add([]byte(strings.Repeat("x", 63) + "é" + strings.Repeat("y", 40)))
	f.Fuzz(func(t *testing.T, b []byte) { checkPlain(t, b) })
}

// UTF8 agrees with utf8.Valid.
func FuzzUTF8(f *testing.F) {
	for _, s := range []string{"", "a", "é", "aaaaaaaaé", "aaaaaaaa\xff", "\xe2\x82", "€€€€€€€€€x", "abcdefgh\xed\xa0\x80abcdefgh", "\xf0\x9f\x98\x80aaaaaaaaaa\xc3"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := UTF8(b), utf8.Valid(b); got != want {
			t.Fatalf("UTF8(%q) = %v, want %v", b, got, want)
		}
	})
}
