package jsonscan

import "golang.org/x/sys/cpu"

var hasAVX2 = cpu.X86.HasAVX2

// blockMasks fills m[k] with the masks of the 64 bytes at b[64k:], for each k < len(m);
// len(b) >= 64*len(m) > 0. With AVX2 notEsc is exact; with SSE2 alone (which every amd64 has)
// it is all ones.
func blockMasks(b []byte, m []blockMask) {
	_ = b[64*len(m)-1]
	if hasAVX2 {
		blockMasksAVX2(&b[0], len(m), &m[0])
		return
	}
	for k := range m {
		q, bs, c := blockMasksSSE2(&b[64*k])
		m[k] = blockMask{q, bs, c, ^uint64(0)}
	}
}

//go:noescape
func blockMasksSSE2(p *byte) (quote, bslash, ctl uint64)

//go:noescape
func blockMasksAVX2(p *byte, n int, out *blockMask)
