//go:build race

package policy

// raceEnabled: the race detector slows every memory access, so timings say nothing.
const raceEnabled = true
