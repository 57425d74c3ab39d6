package jsonscan

import (
	"strings"
	"testing"
)

// refPlain is PlainText byte by byte.
func refPlain(b []byte) bool {
	for i, c := range b {
		if c >= 0x80 || c == '\\' && i+1 < len(b) && b[i+1] == 'u' {
			return false
		}
	}
	return true
}

func checkPlain(t *testing.T, b []byte) {
	t.Helper()
	// every length and offset near the block edges of the input, so that each byte is
	// looked at by the 32-byte, the 8-byte and the last loop
	for lo := 0; lo < len(b) && lo < 40; lo++ {
		for hi := len(b); hi >= lo && hi > len(b)-40; hi-- {
			s := b[lo:hi]
			if got, want := PlainText(s), refPlain(s); got != want {
				t.Fatalf("PlainText(%q) = %v, want %v", s, got, want)
			}
			if hasAVX2 {
				hasAVX2 = false
				got := PlainText(s)
				hasAVX2 = true
				if want := refPlain(s); got != want {
					t.Fatalf("PlainText without AVX2 (%q) = %v, want %v", s, got, want)
				}
			}
		}
	}
}

func TestPlainText(t *testing.T) {
	base := strings.Repeat("abcdefgh", 12)
	for _, c := range []string{`\u`, `\\u`, `\\]u`, `\]u`, "é", "\x80", "\xff", `\`, `u`, `\n`, `ut\`, `\t`} {
		for k := 0; k <= len(base); k++ {
			checkPlain(t, []byte(base[:k]+c+base[k:]))
		}
	}
}

func FuzzPlainText(f *testing.F) {
	f.Add([]byte(`{"kind":"shell_command","command":"ls \\u"}`))
	f.Add([]byte(strings.Repeat("x", 31) + `\u00e9` + strings.Repeat("y", 40)))
	f.Add([]byte(strings.Repeat("x", 31) + `\\]u` + strings.Repeat("y", 40)))
	f.Add([]byte(strings.Repeat("x", 63) + "é" + strings.Repeat("y", 40)))
	f.Fuzz(func(t *testing.T, b []byte) { checkPlain(t, b) })
}
