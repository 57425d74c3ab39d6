package jsonscan

import "testing"

// TestBlockMasksSSE2 checks the SSE2 path, which only machines without AVX2 take.
func TestBlockMasksSSE2(t *testing.T) {
	if !hasAVX2 {
		t.Skip("the default path is SSE2 here: TestBlockMasks covers it")
	}
	hasAVX2 = false
	defer func() { hasAVX2 = true }()
	TestBlockMasks(t)
	TestStringEndSameAsCareful(t)
}
