package jsonscan

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkStringEnd compares the fast string scan with the careful one from every offset of b.
func checkStringEnd(t *testing.T, b []byte) {
	t.Helper()
	for i := 0; i <= len(b); i++ {
		e1, s1, ok1 := stringEnd(b, i)
		e2, s2, ok2 := stringEndCareful(b, i)
		if e1 != e2 || ok1 != ok2 || (ok1 && s1 != s2) {
			t.Fatalf("stringEnd(%q, %d) = %d %v %v; stringEndCareful = %d %v %v", b, i, e1, s1, ok1, e2, s2, ok2)
		}
		// The one-word scan answers only for a string with no escape that ends in its word.
		if e := wordStringEnd(b, i); e >= 0 && (e != e2 || s2 || !ok2) {
			t.Fatalf("wordStringEnd(%q, %d) = %d; stringEndCareful = %d %v %v", b, i, e, e2, s2, ok2)
		} else if e < 0 && ok2 && !s2 && e2 <= i+8 && i+8 <= len(b) {
			t.Fatalf("wordStringEnd(%q, %d) missed the string ending at %d", b, i, e2)
		} else if e >= 0 && wordASCII(b, i, e-1-i) != IsASCII(b[i:e-1]) {
			t.Fatalf("wordASCII(%q, %d, %d) = %v", b, i, e-1-i, !IsASCII(b[i:e-1]))
		}
	}
}

// randomText draws n bytes mostly from what makes string scanning hard: quotes, runs of
// backslashes, escape letters, hex digits, control characters, bytes past ASCII.
func randomText(r *rand.Rand, n int) []byte {
	const alphabet = `"\\\\\\unrtbf/0aF9"x ` + "\x00\x1f\t\n\x7f\x80\xe2\xff"
	b := make([]byte, n)
	for i := range b {
		if r.IntN(4) == 0 {
			b[i] = alphabet[r.IntN(len(alphabet))]
		} else {
			b[i] = byte('a' + r.IntN(26))
		}
	}
	return b
}

func TestStringEndSameAsCareful(t *testing.T) {
	for _, s := range []string{
		``, `"`, `abc"`, `\"`, `\\"`, `\\\"x"`, `\u0041"`, `\u004"`, `\u00zz"`, `\x"`, "a\x01\"", "\xff\xfe\"",
		strings.Repeat("a", 63) + `\"` + strings.Repeat("b", 70) + `"`,
		strings.Repeat("a", 62) + `\u0022` + `"`, strings.Repeat("a", 63) + `\u12`,
		strings.Repeat(`\\`, 40) + `"`, strings.Repeat(`\`, 65) + `""`, strings.Repeat("x", 127) + `\` + `"` + `"`,
		strings.Repeat("é", 100) + `"`, strings.Repeat("a", 200) + "\x1f" + `"`, strings.Repeat("a", 64*9) + `"`,
		// Near the end of a line, where the last word is loaded and shifted.
		`{"type":"token","text":"hello "}`, `"hi"}`, `abcdefg"`, `abcdefgh"`, `abcdefghi"`, `abcdefg\"`, "abc\x00\"", "ab\xff\"cd",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789a\"", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdefg\\\"\"",
		strings.Repeat("x", 63) + `\u00e9"`, strings.Repeat("x", 70) + `\u00e9"`, strings.Repeat("x", 15) + `\"` + strings.Repeat("y", 64) + `"`,
	} {
		checkStringEnd(t, []byte(s))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		checkStringEnd(t, randomText(r, r.IntN(300)))
	}
	// Long strings, valid, with an escape on every side of each block boundary.
	for n := 60; n < 200; n++ {
		b := append(bytes.Repeat([]byte("ab\\n"), n/4), strings.Repeat("x", n%4)...)
		checkStringEnd(t, append(b, `"tail`...))
	}
}

func FuzzStringEnd(f *testing.F) {
	f.Add([]byte(`abc\"def\\"`))
	f.Add([]byte(strings.Repeat(`a\n`, 40) + `\u00e9"`))
	f.Add([]byte(strings.Repeat("x", 63) + `\` + `"` + strings.Repeat("y", 70) + `"`))
	f.Add([]byte(`{"type":"token","text":"hello "}`))
	f.Add([]byte("ab\xe9cd\"}x\x00\"\\\"\\u12"))
	f.Fuzz(func(t *testing.T, b []byte) { checkStringEnd(t, b) })
}

// refMasks is blockMasks byte by byte, with an exact notEsc.
func refMasks(blk []byte) (m blockMask) {
	for k, c := range blk[:64] {
		bit := uint64(1) << k
		switch {
		case c == '"':
			m.quote |= bit
		case c == '\\':
			m.bslash |= bit
		case c < 0x20:
			m.ctl |= bit
		}
		if !strings.ContainsRune(`"\/bfnrt`, rune(c)) || c >= 0x80 {
			m.notEsc |= bit
		}
	}
	return m
}

func TestBlockMasks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 64*8)
	for round := range 2000 {
		for i := range b {
			if round < 4 {
				b[i] = byte(i + 64*8*round) // every byte value
			} else {
				b[i] = byte(r.Uint32())
				if r.IntN(3) == 0 {
					b[i] = `"\\u/bfnrt`[r.IntN(10)]
				}
			}
		}
		var m [8]blockMask
		blockMasks(b, m[:])
		for k := range m {
			want := refMasks(b[64*k:])
			got := m[k]
			if got.quote != want.quote || got.bslash != want.bslash || got.ctl != want.ctl || got.notEsc&want.notEsc != want.notEsc {
				t.Fatalf("block %d of %q: got %+v, want %+v", k, b[64*k:64*k+64], got, want)
			}
			q, bs, c := blockMasksGo(b[64*k:])
			if q != want.quote || bs != want.bslash || c != want.ctl {
				t.Fatalf("blockMasksGo of %q: got %x %x %x, want %+v", b[64*k:64*k+64], q, bs, c, want)
			}
		}
	}
}
