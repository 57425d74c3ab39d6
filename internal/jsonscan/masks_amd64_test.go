package jsonscan

import "testing"

// TestBlockMasksNoAVX2 checks the plain Go path, which machines without AVX2 take.
func TestBlockMasksNoAVX2(t *testing.T) {
	if !hasAVX2 {
		t.Skip("the default path is plain Go here: TestBlockMasks covers it")
	}
	hasAVX2 = false
	defer func() { hasAVX2 = true }()
	TestBlockMasks(t)
	TestStringEndSameAsCareful(t)
}
