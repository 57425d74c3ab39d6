package jsonscan

import "golang.org/x/sys/cpu"

var hasAVX2 = cpu.X86.HasAVX2

// blockMasks fills m[k] with the masks of the 64 bytes at b[64k:], for each k < len(m);
// len(b) >= 64*len(m) > 0. With AVX2 notEsc is exact; without, it is all ones.
func blockMasks(b []byte, m []blockMask) {
	_ = b[64*len(m)-1]
	if hasAVX2 {
		blockMasksAVX2(&b[0], len(m), &m[0])
		return
	}
	blockMasksPortable(b, m)
}

//go:noescape
func blockMasksAVX2(p *byte, n int, out *blockMask)

// plainAVX2 is TextFlags for the 32*n bytes at p (n > 0), each with the byte after it.
//
//go:noescape
func plainAVX2(p *byte, n int) int
