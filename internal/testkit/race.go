package testkit

import "testing"

// AgainWithoutRace is what [WithoutRace] says when it skips a test under the race detector;
// `make test` (internal/testkit/testsum) runs every test that said it once more, without the
// race detector, and counts that run instead of the skip.
const AgainWithoutRace = "runs again without the race detector"

// WithoutRace skips t when the tests were built with -race. It is for a test that drives one
// goroutine through much data (a conformance suite, a memory bound over hundreds of MB): the
// race detector finds nothing there that the other tests do not, and makes it ten times
// slower. `make test` runs such a test in a second pass without -race, so it still runs.
func WithoutRace(t testing.TB) {
	t.Helper()
	if raceEnabled {
		t.Skip("one goroutine through much data: " + AgainWithoutRace)
	}
}
