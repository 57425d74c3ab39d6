package jsonscan

import "encoding/binary"

// PlainText reports whether b is all ASCII and holds no backslash followed by 'u': text
// that is UTF-8 and escapes no UTF-16 surrogate, whatever else it holds. It looks at each
// byte once (32 at a time with AVX2); false says nothing more than that one of the two
// was seen.
func PlainText(b []byte) bool {
	i := 0
	if hasAVX2 && len(b) > 32 {
		n := (len(b) - 1) / 32 // blocks whose byte after them is in b
		if !plainAVX2(&b[0], n) {
			return false
		}
		i = 32 * n
	}
	return plainFrom(b, i)
}

// plainFrom is PlainText for the bytes of b from i on (a backslash at i-1 was looked at).
func plainFrom(b []byte, i int) bool {
	for ; i+8 < len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i : i+8])
		if w&msb != 0 {
			return false
		}
		// the high bit of each byte of bs (u) that is zero: a backslash (a u) there
		bs, u := zeroBytes(w^(lsb*'\\')), zeroBytes(w^(lsb*'u'))
		if bs<<8&u != 0 || bs>>63 != 0 && b[i+8] == 'u' {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 || b[i] == '\\' && i+1 < len(b) && b[i+1] == 'u' {
			return false
		}
	}
	return true
}

