package testkit

import "testing"

// AgainWithoutRace is what [WithoutRace] says when it skips a test under the race detector;
// `make test` (internal/testkit/testsum) runs every test that said it once more, without the
// race detector, and counts that run instead of the skip.
const AgainWithoutRace = "runs again without the race detector"

// WithoutRace skips t when the tests were built with -race. It is for a test that runs the
// same code over much data or many inputs (a conformance suite, a differential test over
// random filters, a memory bound over hundreds of MB), whose goroutines other tests already
// run under the race detector: there it finds nothing more, and makes the test ten times
// slower. It is also for the documents' examples, run as a user runs them, with commands
// built without it. `make test` runs such a test again without -race, so it still runs.
func WithoutRace(t testing.TB) {
	t.Helper()
	if raceEnabled {
		t.Skip("the same code over many inputs: " + AgainWithoutRace)
	}
}
