package jsonscan

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// Flags of TextFlags.
const (
	HighBytes = 1 << iota // a byte of 0x80 or more: the text is not ASCII
	EscapeU               // a backslash followed by 'u'
	// CheckedUTF8 is never set by TextFlags: a caller that has found text with HighBytes to
	// be UTF-8 adds it, and ValidText then does not look again.
	CheckedUTF8
)

// PlainText reports whether b is all ASCII and holds no backslash followed by 'u': text
// that is UTF-8 and escapes no UTF-16 surrogate, whatever else it holds.
func PlainText(b []byte) bool { return TextFlags(b) == 0 }

// TextFlags reports, exactly, whether b has a byte of 0x80 or more (HighBytes) and whether
// it has a backslash followed by 'u' (EscapeU). It looks at each byte once, 32 at a time
// with AVX2.
func TextFlags(b []byte) int {
	i, f := 0, 0
	if hasAVX2 && len(b) > 32 {
		n := (len(b) - 1) / 32 // blocks whose byte after them is in b
		f = plainAVX2(&b[0], n)
		i = 32 * n
	}
	return f | flagsFrom(b, i)
}

// flagsFrom is TextFlags for the bytes of b from i on (a backslash at i-1 was looked at).
func flagsFrom(b []byte, i int) int {
	f := 0
	for ; i+8 < len(b) && f != HighBytes|EscapeU; i += 8 {
		w := binary.LittleEndian.Uint64(b[i : i+8])
		if w&msb != 0 {
			f |= HighBytes
		}
		// the high bit of each byte of bs (u) that is zero: a backslash (a u) there
		bs, u := zeroBytes(w^(lsb*'\\')), zeroBytes(w^(lsb*'u'))
		if bs<<8&u != 0 || bs>>63 != 0 && b[i+8] == 'u' {
			f |= EscapeU
		}
	}
	if f == HighBytes|EscapeU {
		return f // nothing more to find
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 {
			f |= HighBytes
		} else if b[i] == '\\' && i+1 < len(b) && b[i+1] == 'u' {
			f |= EscapeU
		}
	}
	return f
}

// ValidText reports whether the JSON text raw, whose TextFlags are flags, is UTF-8 throughout
// and escapes no UTF-16 surrogate that is not half of a pair (wire.ValidText). With CheckedUTF8
// in flags, raw is known to be UTF-8.
func ValidText(raw []byte, flags int) bool {
	if flags&(HighBytes|CheckedUTF8) == HighBytes && !utf8.Valid(raw) {
		return false
	}
	if flags&EscapeU == 0 {
		// Only a \u escape can name a surrogate: most texts have none, and file contents
		// have a \n or \" every few dozen bytes, which the walk below visits one by one.
		return true
	}
	hex := func(i int) rune {
		if i > len(raw) {
			return -1
		}
		return HexEscape(raw[i:])
	}
	for i := 0; i < len(raw); i++ {
		j := bytes.IndexByte(raw[i:], '\\') // the next escape, skipping the text between at once
		if j < 0 {
			break
		}
		i += j
		switch r := hex(i); {
		case 0xD800 <= r && r < 0xDC00:
			if lo := hex(i + 6); lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 11
		case 0xDC00 <= r && r <= 0xDFFF:
			return false
		default:
			i++ // the escaped character, which may be a backslash
		}
	}
	return true
}

// UTF8 reports whether b is UTF-8, as utf8.Valid does, but skips ASCII 8 bytes at a time
// throughout (utf8.Valid does so only up to the first byte of 0x80 or more): JSON lines are
// mostly ASCII with a few characters that are not, and only the runs of those are decoded.
func UTF8(b []byte) bool {
	for i := 0; i < len(b); {
		for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:i+8])&msb == 0 {
			i += 8
		}
		for i < len(b) && b[i] < utf8.RuneSelf {
			i++
		}
		j := i // a run of bytes of 0x80 or more: only they make up characters that are not ASCII
		for j < len(b) && b[j] >= utf8.RuneSelf {
			j++
		}
		if !utf8.Valid(b[i:j]) {
			return false
		}
		i = j
	}
	return true
}
