package budget

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Runs sharing a file hold room for each other's turns in flight, each as large as the largest
// turn recorded: a run whose turn starts when the rest of the budget is held for others' turns
// stops there, and its turn no longer holds room.
func TestTurnsInFlight(t *testing.T) {
	const start = `{"type":"agent_starting","agent":"a"}`
	steps := []struct {
		run   int // 0 (A), 1 (B) or 2 (C)
		event string
		want  string // the breach, "" none
	}{
		{0, start, ""}, {0, agentMsg("600", "400"), ""}, // A's turn: 1000 tokens, the largest
		{0, start, ""}, {1, start, ""}, // 1000 used, A's and B's turns in flight: 2000 held
		{2, start, "--max-tokens 3000: 1000 tokens used (600 input + 400 output) and 2000 held for 2 other runs' turns in flight, no more turns may start today"},
		{0, agentMsg("600", "400"), ""}, // 2000 used, B's turn in flight
		{0, start, "--max-tokens 3000: 2000 tokens used (1200 input + 800 output) and 1000 held for 1 other runs' turns in flight"},
		{1, agentMsg("600", "400"), ""}, // B's turn was in flight: 3000 used, the limit
	}
	c := newClock()
	path := filepath.Join(t.TempDir(), "b.json")
	var runs [3]*Budget
	for i := range runs {
		st, err := OpenStore(path)
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = New(Limits{Tokens: 3000}, Options{Now: c.now, Store: st})
		if br := runs[i].Start(); br != nil {
			t.Fatal(br)
		}
		runs[i].Observe(ev(runReady))
	}
	for i, s := range steps {
		br := runs[s.run].Observe(ev(s.event))
		switch {
		case s.want == "" && br != nil:
			t.Fatalf("step %d: breach %v", i, br)
		case s.want != "" && (br == nil || !strings.HasPrefix(br.String(), s.want)):
			t.Fatalf("step %d: breach %v, want %q", i, br, s.want)
		}
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"largestTurnTokens": 1000`) || strings.Contains(string(b), `"pid"`) {
		t.Errorf("the file holds the largest turn and no turn in flight:\n%s", b)
	}
	// A run's turn is in flight until it ends, or the run does.
	st, _ := OpenStore(path)
	e := New(Limits{}, Options{Now: c.now, Store: st})
	e.Start()
	e.Observe(ev(start))
	if b, _ := os.ReadFile(path); strings.Count(string(b), `"pid"`) != 1 {
		t.Errorf("a turn started is not in flight:\n%s", b)
	}
	e.Close()
	if b, _ := os.ReadFile(path); strings.Contains(string(b), `"pid"`) {
		t.Errorf("a closed run's turn is still in flight:\n%s", b)
	}
}

// A turn in flight of a process that has gone, or a day old, is forgotten.
func TestStaleTurnsInFlightAreForgotten(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := &storeFile{InFlight: map[string]inFlight{
		"dead":  {PID: 1 << 30, Since: now},
		"old":   {PID: os.Getpid(), Since: now.Add(-25 * time.Hour)},
		"live":  {PID: os.Getpid(), Since: now.Add(-time.Hour)},
		"nopid": {PID: 0, Since: now},
	}}
	if !f.turn(now, Turn{Run: "me", InFlight: true, Done: 7}) {
		t.Fatal("no change reported")
	}
	if len(f.InFlight) != 2 || f.InFlight["live"].PID == 0 || f.InFlight["me"].PID != os.Getpid() || f.Largest != 7 {
		t.Errorf("in flight %v, largest %d; want live and me, 7", f.InFlight, f.Largest)
	}
	if f.turn(now, Turn{Run: "me", InFlight: true, Done: 3}) {
		t.Error("a change reported where there was none")
	}
}
