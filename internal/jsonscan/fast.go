package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// The fast string scan. A short string is looked at eight bytes at a time (stringStop), up to
// the end of the line; a long one 64 at a time (the last bytes of a line, under 64, one stop
// at a time): blockMasks gives three bit masks of the block (quotes, backslashes, control
// characters; bit k for byte k), with AVX2 on amd64 and eight bytes at a time elsewhere; the
// characters escaped by a backslash are found from the backslash mask with carries, as
// simdjson does, and the first quote that is not escaped ends the string. Only the escapes
// themselves are visited, to check the character after each backslash. Whenever something is
// wrong (a control character, a bad escape, no closing quote), the careful scan runs again from
// the start of the string, so a string that is not valid gets exactly stringEndCareful's
// answer (FuzzStringEnd checks both on every input).

const (
	low7 = 0x7f7f7f7f7f7f7f7f
	even = 0x5555555555555555 // bits 0, 2, 4, ...
)

// zeroBytes returns the high bit of each byte of x that is zero, exactly (no false positives).
func zeroBytes(x uint64) uint64 { return ^((x&low7 + low7) | x | low7) }

// compact gathers the high bits of the eight bytes of m (only high bits set) into bits 0-7.
func compact(m uint64) uint64 { return (m >> 7) * 0x0102040810204080 >> 56 }

// wordMasks returns the quotes, the backslashes and the control characters (bytes below 0x20)
// of the eight bytes of w, as bits 0-7.
func wordMasks(w uint64) (q, bs, c uint64) {
	return compact(zeroBytes(w ^ (lsb * '"'))), compact(zeroBytes(w ^ (lsb * '\\'))), compact(^((w&low7 + lsb*0x60) | w) & msb)
}

// blockMasksPortable is blockMasks in plain Go, eight bytes at a time, with notEsc all ones.
func blockMasksPortable(b []byte, m []blockMask) {
	for k := range m {
		q, bs, c := blockMasksGo(b[64*k:])
		m[k] = blockMask{q, bs, c, ^uint64(0)}
	}
}

// blockMasksGo returns the quote, backslash and control-character masks of the 64 bytes at
// blk, eight bytes at a time.
func blockMasksGo(blk []byte) (quote, bslash, ctl uint64) {
	_ = blk[63]
	for k := 0; k < 64; k += 8 {
		q, b, c := wordMasks(binary.LittleEndian.Uint64(blk[k:]))
		quote |= q << k
		bslash |= b << k
		ctl |= c << k
	}
	return quote, bslash, ctl
}

// blockMask is what blockMasks finds in 64 bytes: bit k of each mask is byte k.
type blockMask struct {
	quote, bslash uint64
	ctl           uint64 // bytes below 0x20
	// notEsc may have bits for bytes that cannot follow a backslash as they are (all but
	// " \ / b f n r t; 'u' needs four hex digits, so it is one of them), and must have them.
	notEsc uint64
}

// escapedChars returns the bits of the characters escaped by a backslash in a block whose
// backslash mask is bs; carry (0 or 1) says the block's first byte is escaped by the block
// before, and is set for the next block.
func escapedChars(bs uint64, carry *uint64) uint64 {
	bs &^= *carry
	follows := bs<<1 | *carry
	oddStarts := bs &^ even &^ follows
	seqEven, c := bits.Add64(oddStarts, bs, 0)
	*carry = c
	return (even ^ seqEven<<1) & follows
}

// validEscape[c] says c may follow a backslash ('u' must then have four hex digits).
var validEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true, 'u': true}

// wordStringEnd is stringEnd for the commonest string, with no escape and its closing quote
// among the eight bytes at b[i:]: it returns the index past that quote, or -1 when the string
// is not one of those (or len(b) < i+8).
func wordStringEnd(b []byte, i int) int {
	if i+8 <= len(b) {
		if m := stringStop(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			if p := i + bits.TrailingZeros64(m)>>3; b[p] == '"' {
				return p + 1
			}
		}
	}
	return -1
}

// wordASCII reports whether the n < 8 bytes at b[i:] are ASCII, for i+8 <= len(b).
func wordASCII(b []byte, i, n int) bool {
	return binary.LittleEndian.Uint64(b[i:])&msb&(1<<(8*n)-1) == 0
}

// stringEnd scans a JSON string whose opening quote is at b[i-1]. It returns the index just
// past the closing quote, whether the string holds escapes, and ok=false when the string is
// not valid JSON (control character, bad escape, no closing quote), with end where it stops
// being valid, as stringEndCareful says.
func stringEnd(b []byte, i int) (end int, esc, ok bool) {
	start := i
	// Most keys and short values end within a few words, with no escape: the first byte
	// stringStop stops at is then their closing quote. Up to the last eight bytes of the line
	// a word is loaded as it is; past them, the line's last eight bytes are loaded and shifted
	// down, so the bytes past its end come in as zeros, which stop like control characters.
	// The words skipped hold no stop, so a scan resumed after them (careful or by blocks) is
	// in the state the careful scan from start would be in.
	for i-start < 16 || len(b)-i < 64 {
		var w uint64
		if i+8 <= len(b) {
			w = binary.LittleEndian.Uint64(b[i:])
		} else if len(b) >= 8 && i < len(b) {
			w = binary.LittleEndian.Uint64(b[len(b)-8:]) >> (8 * (i + 8 - len(b)))
		} else {
			return stringEndCareful(b, i)
		}
		m := stringStop(w)
		if m == 0 {
			i += 8
			continue
		}
		if p := i + bits.TrailingZeros64(m)>>3; p < len(b) && b[p] == '"' {
			return p + 1, false, true
		}
		if len(b)-i < 64 {
			// Less than a block to the end of the line: a few stops at most.
			return stringEndCareful(b, i)
		}
		break
	}
	var (
		carry uint64
		m     [8]blockMask
		batch = 1 // blocks at a time: most strings end in the first
	)
	for {
		n := min((len(b)-i)>>6, batch)
		if n == 0 {
			// Less than a block is left: the careful scan takes it from here (from the
			// backslash when the first byte is escaped).
			end, e, ok := stringEndCareful(b, i-int(carry))
			if !ok {
				return stringEndCareful(b, start)
			}
			return end, esc || e, true
		}
		blockMasks(b[i:], m[:n])
		batch = min(2*batch, len(m))
		for k := range n {
			bm := &m[k]
			if bm.quote|bm.bslash|bm.ctl|carry == 0 {
				i += 64
				continue
			}
			escd := escapedChars(bm.bslash, &carry)
			quote := bm.quote &^ escd
			below := ^uint64(0) // the bytes before the closing quote
			if quote != 0 {
				below = uint64(1)<<bits.TrailingZeros64(quote) - 1
			}
			if bm.ctl&below != 0 || !escapesValid(b, i, escd&below&bm.notEsc) {
				return stringEndCareful(b, start)
			}
			if bm.bslash&below != 0 {
				esc = true
			}
			if quote != 0 {
				if p := i + bits.TrailingZeros64(quote); p < len(b) {
					return p + 1, esc, true
				}
				return stringEndCareful(b, start)
			}
			i += 64
		}
	}
}

// escapesValid checks characters escaped by a backslash in the block at b[i:]: bit k of escd
// is b[i+k].
func escapesValid(b []byte, i int, escd uint64) bool {
	for ; escd != 0; escd &= escd - 1 {
		p := i + bits.TrailingZeros64(escd)
		if p >= len(b) || !validEscape[b[p]] {
			return false
		}
		if b[p] == 'u' && (p+5 > len(b) || !isHex(b[p+1]) || !isHex(b[p+2]) || !isHex(b[p+3]) || !isHex(b[p+4])) {
			return false
		}
	}
	return true
}
