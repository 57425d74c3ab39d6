//go:build !amd64

package jsonscan

// blockMasks fills m[k] with the masks of the 64 bytes at b[64k:], for each k < len(m);
// len(b) >= 64*len(m) > 0. notEsc is all ones.
func blockMasks(b []byte, m []blockMask) { blockMasksPortable(b, m) }

var hasAVX2 = false

func plainAVX2(p *byte, n int) int { panic("no AVX2") }
