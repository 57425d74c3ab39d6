package jsonscan

import "testing"

// skipStringByByte is SkipString as first written, a byte at a time: the reference.
func skipStringByByte(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"0123456789abcdef\\"x`, `"0123456\\\"89abcdef"`, "\"\x01\x1f\xff\"", `"é日本😀 long text that goes on" tail`, `"unterminated \`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		if got, want := SkipString(b, 0), skipStringByByte(b, 0); got != want {
			t.Fatalf("SkipString(%q) = %d, want %d", b, got, want)
		}
	})
}
