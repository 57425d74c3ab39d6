package policy

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/fuseraft/fr/pkg/wire"
)

// validText is wire.ValidText(raw), faster on text with many escapes: only a \u escape can
// name a lone surrogate, and most prompts have none (file contents have a \n or \" every few
// dozen bytes, which wire.ValidText visits one by one).
func validText(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	return !mayHaveEscapeU(raw) || wire.ValidText(raw)
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// mayHaveEscapeU reports whether raw may hold a backslash followed by u; false means it holds
// none. Eight positions are looked at a time, with bit tricks that may find one where there is
// none, never the other way.
func mayHaveEscapeU(raw []byte) bool {
	i := 0
	for ; i+8 < len(raw); i += 8 {
		w := binary.LittleEndian.Uint64(raw[i : i+8])
		bs, u := w^(lsb*'\\'), w^(lsb*'u')
		// the high bit of each byte of bs (u) that is zero: a backslash (a u) there
		bs, u = (bs-lsb)&^bs&msb, (u-lsb)&^u&msb
		if bs<<8&u != 0 || bs>>63 != 0 && raw[i+8] == 'u' {
			return true
		}
	}
	for ; i+1 < len(raw); i++ {
		if raw[i] == '\\' && raw[i+1] == 'u' {
			return true
		}
	}
	return false
}
