package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// Cursors over JSON already known to be valid (Scan said so): they find where a value ends
// without checking it again, for code that picks fields out of a line by hand.

// SkipSpace returns the index of the first byte at or after i that is not JSON whitespace.
func SkipSpace(b []byte, i int) int { return skipWS(b, i) }

// SkipString returns the index just past the JSON string starting at b[i] == '"'. Text
// without quotes or backslashes is passed eight bytes at a time.
func SkipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		for i+8 <= len(b) {
			if m := stringStop(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// SkipValue returns the index just past the JSON value starting at b[i].
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = SkipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// ValueEnd validates the JSON value starting at b[i] (no leading space) and returns the index
// just past it. When ok is false, end is where the value stops being JSON; end == len(b) means
// b ends before the value does (it may go on in more input).
func ValueEnd(b []byte, i int) (end int, ok bool) { return valueEnd(b, i, 0) }

// ValueEndDepth is ValueEnd for a value held depth levels deep: a container in it may nest
// 10,000 levels less depth (encoding/json's limit counts from the outermost value).
func ValueEndDepth(b []byte, i, depth int) (end int, ok bool) { return valueEnd(b, i, depth) }
