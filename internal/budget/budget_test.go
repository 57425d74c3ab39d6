package budget

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/prices"
	"github.com/fuseraft/fr/pkg/wire"
)

func ev(raw string) wire.Event {
	t, _ := wire.TopLevelString([]byte(raw), "type")
	return wire.Event{Type: t, Raw: []byte(raw)}
}

// clock is a settable clock for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.Local)} }

const (
	replReady = `{"type":"ready","protocolVersion":1,"sessionId":"s1","model":"m1","title":null,"autoTitle":null,"midTurnCommands":[]}`
	runReady  = `{"type":"ready","protocolVersion":1,"sessionId":"r1","task":"t","config":null,"resumed":false,"agents":["a"]}`
)

func msgEnd(in, out int) string {
	return fmt.Sprintf(`{"type":"message_end","turnIndex":0,"toolCalls":[],"inputTokens":%d,"outputTokens":%d,"cachedInputTokens":0}`, in, out)
}

func agentMsg(in, out string) string {
	return `{"type":"agent_message","message":{"agentName":"a","role":"assistant","content":"x","turnIndex":0,"timestamp":"2026-12-01T00:00:00Z","inputTokens":` + in + `,"outputTokens":` + out + `,"isCompactionSummary":false,"toolCalls":[]},"elapsedMs":5}`
}

func result(in, out int) string {
	return fmt.Sprintf(`{"type":"result","sessionId":"r1","task":"t","config":null,"succeeded":true,"errorMessage":null,"exitCode":0,"turns":2,"elapsedSeconds":1.5,"inputTokens":%d,"outputTokens":%d}`, in, out)
}

// TestObserve feeds event streams and checks at which event a limit is breached and what the
// breach says.
func TestObserve(t *testing.T) {
	table, _ := prices.Parse([]byte("models:\n  m1: {input: 1000, output: 1000}\n"))
	tests := []struct {
		name   string
		lim    Limits
		events []string
		at     int    // index of the event that breaches; -1 none
		want   string // in Breach.String()
		tokens int64  // run tokens counted after all events
	}{
		{"tokens per turn", Limits{Tokens: 1000}, []string{replReady, `{"type":"turn_start","text":""}`, msgEnd(400, 100), `{"type":"turn_start","text":""}`, msgEnd(400, 101)},
			4, "--max-tokens 1000: 1001 tokens used (800 input + 201 output)", 1001},
		{"exactly the limit is no breach", Limits{Tokens: 1000}, []string{replReady, `{"type":"turn_start","text":""}`, msgEnd(500, 500)}, -1, "", 1000},
		{"reached: the next turn does not start", Limits{Tokens: 1000}, []string{replReady, `{"type":"turn_start","text":""}`, msgEnd(500, 500), `{"type":"turn_start","text":""}`},
			3, "--max-tokens 1000: 1000 tokens used (500 input + 500 output), no more turns may start", 1000},
		{"turns", Limits{Turns: 2}, []string{runReady, `{"type":"agent_starting","agent":"a"}`, agentMsg("1", "1"), `{"type":"agent_starting","agent":"b"}`, agentMsg("1", "1"), `{"type":"agent_starting","agent":"a"}`},
			5, "--max-turns 2: turn 3 started", 4},
		{"result totals over the turns' sums are not counted twice", Limits{Tokens: 1000}, []string{runReady, agentMsg("300", "100"), agentMsg("300", "100"), result(600, 200)}, -1, "", 800},
		{"result totals above the turns' sums count the difference", Limits{Tokens: 1000}, []string{runReady, agentMsg("300", "100"), result(700, 400)},
			2, "--max-tokens 1000: 1100 tokens used (700 input + 400 output)", 1100},
		{"tokens reported only at the end", Limits{Tokens: 1000}, []string{runReady, agentMsg("null", "null"), result(900, 200)},
			2, "--max-tokens 1000: 1100 tokens used (900 input + 200 output)", 1100},
		{"a warning counts nothing", Limits{Tokens: 1000}, []string{runReady, `{"type":"token_budget_warning","agent":"a","inputTokens":5000,"warnThreshold":4000}`}, -1, "", 0},
		{"cost", Limits{CostUSD: 0.5, Prices: table}, []string{replReady, msgEnd(300, 200), msgEnd(1, 0)},
			2, "--max-cost $0.50: $0.501 used (501 tokens)", 501},
		{"cost of a model without a price", Limits{CostUSD: 5, Prices: table}, []string{runReady, agentMsg("1", "1")},
			1, "--max-cost $5.00: the price table has no price for a run (its ready names no model) and no default, so the cost is not known", 2},
		{"no limit", Limits{}, []string{replReady, msgEnd(1e6, 1e6)}, -1, "", 2e6},
		{"a malformed event counts nothing", Limits{Tokens: 10}, []string{replReady, `{"type":"message_end","inputTokens":"many"}`}, -1, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := New(tc.lim, Options{Now: newClock().now})
			at := -1
			var got *Breach
			for i, e := range tc.events {
				if br := b.Observe(ev(e)); br != nil {
					if got != nil {
						t.Fatalf("event %d: a second breach %v", i, br)
					}
					at, got = i, br
				}
			}
			if at != tc.at {
				t.Fatalf("breached at event %d (%v), want %d", at, got, tc.at)
			}
			if got != nil && got.String() != tc.want {
				t.Errorf("breach = %q\nwant      %q", got.String(), tc.want)
			}
			if run, _ := b.Usage(); run.Tokens() != tc.tokens {
				t.Errorf("tokens = %d, want %d", run.Tokens(), tc.tokens)
			}
		})
	}
}

func TestBeforeTurn(t *testing.T) {
	b := New(Limits{Turns: 2}, Options{Now: newClock().now})
	for i := 0; i < 2; i++ {
		if br := b.BeforeTurn(); br != nil {
			t.Fatalf("turn %d: %v", i+1, br)
		}
		b.Observe(ev(`{"type":"turn_start","text":""}`))
		b.Observe(ev(msgEnd(1, 1)))
	}
	br := b.BeforeTurn()
	if br == nil || br.String() != "--max-turns 2: 2 turns done, no more may start" {
		t.Fatalf("third turn: %v", br)
	}
	if b.BeforeTurn() != nil || b.Breached() != br {
		t.Error("a breach is reported once, and kept")
	}
}

func TestDuration(t *testing.T) {
	c := newClock()
	b := New(Limits{Duration: 10 * time.Second}, Options{Now: c.now})
	if left, ok := b.Left(); !ok || left != 10*time.Second {
		t.Fatalf("Left = %v %v", left, ok)
	}
	c.add(9 * time.Second)
	if br := b.Tick(); br != nil {
		t.Fatalf("at 9s: %v", br)
	}
	c.add(time.Second)
	br := b.Tick()
	if br == nil || br.String() != "--max-duration 10s: 10s used" {
		t.Fatalf("at 10s: %v", br)
	}
}

func TestStoreAcrossRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "budget.json")
	st, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	c := newClock()
	lim := Limits{Tokens: 2000}
	// Run one uses 1500 tokens.
	b := New(lim, Options{Now: c.now, Store: st})
	if br := b.Start(); br != nil {
		t.Fatal(br)
	}
	b.Observe(ev(replReady))
	b.Observe(ev(`{"type":"turn_start","text":""}`))
	b.Observe(ev(msgEnd(1000, 500)))
	b.Close()
	// Run two the same day is breached by its second turn: 2100 of the day's 2000.
	b = New(lim, Options{Now: c.now, Store: st})
	if br := b.Start(); br != nil {
		t.Fatal(br)
	}
	b.Observe(ev(replReady))
	b.Observe(ev(`{"type":"turn_start","text":""}`))
	br := b.Observe(ev(msgEnd(500, 100)))
	if br == nil || br.String() != "--max-tokens 2000: 2100 tokens used (1500 input + 600 output) today (2026-12-01) in "+path {
		t.Fatalf("breach = %v", br)
	}
	b.Close()
	// Run three that day does not start; the next day it does; per week it does not.
	if br := New(lim, Options{Now: c.now, Store: st}).Start(); br == nil || !strings.Contains(br.String(), "no more turns may start today") {
		t.Fatalf("run three: %v", br)
	}
	c.add(24 * time.Hour)
	if br := New(lim, Options{Now: c.now, Store: st}).Start(); br != nil {
		t.Fatalf("the next day: %v", br)
	}
	if br := New(lim, Options{Now: c.now, Store: st, Per: "week"}).Start(); br == nil || !strings.Contains(br.String(), "this week (2026-W49)") {
		t.Fatalf("per week: %v", br)
	}
	day, week, err := st.Read(c.now().Add(-24 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if day.Tokens() != 2100 || day.Runs != 2 || day.Turns != 2 || week.Tokens() != 2100 || week.Runs != 3 {
		t.Errorf("day %+v week %+v", day, week)
	}
}

func TestStoreRejectsWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.json")
	os.WriteFile(path, []byte("not json"), 0o644)
	st, _ := OpenStore(path)
	b := New(Limits{Tokens: 10}, Options{Store: st})
	br := b.Start()
	if br == nil || br.Limit != "--budget-file" || !strings.Contains(br.Used, "is not a budget file") {
		t.Fatalf("a corrupt file must stop the run: %v", br)
	}
	os.WriteFile(path, []byte(`{"version":1,"days":{"2026-12-01":{"turns":-100}}}`), 0o644)
	if br := New(Limits{Turns: 10}, Options{Store: st}).Start(); br == nil || !strings.Contains(br.Used, "a total is negative") {
		t.Fatalf("a negative total must stop the run: %v", br)
	}
	if _, err := OpenStore(filepath.Join(dir, "no", "such")); err == nil {
		t.Error("a file in a missing directory")
	}
}

// TestConcurrentRuns runs two sessions at once on one budget file: no update is lost, and
// once the total reaches the limit neither starts another turn, so each goes past it by at
// most the turn it was running.
func TestConcurrentRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "budget.json")
	const limit, perTurn = 5000, 70
	st, _ := OpenStore(path)
	var wg sync.WaitGroup
	runs := make([]*Budget, 2)
	for i := range runs {
		runs[i] = New(Limits{Tokens: limit}, Options{Store: st})
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			b := runs[i]
			if b.Start() != nil {
				return
			}
			b.Observe(ev(replReady))
			for {
				if b.BeforeTurn() != nil {
					return
				}
				if b.Observe(ev(`{"type":"turn_start","text":""}`)) != nil {
					return
				}
				if b.Observe(ev(msgEnd(perTurn-20, 20))) != nil {
					return
				}
			}
		}(i)
	}
	wg.Wait()
	b0, _ := runs[0].Usage()
	b1, _ := runs[1].Usage()
	day, _, err := st.Read(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if day.Tokens() != b0.Tokens()+b1.Tokens() || day.Turns != b0.Turns+b1.Turns {
		t.Fatalf("the file holds %d tokens in %d turns, the runs used %d + %d in %d + %d turns: updates were lost",
			day.Tokens(), day.Turns, b0.Tokens(), b1.Tokens(), b0.Turns, b1.Turns)
	}
	if day.Tokens() < limit || day.Tokens() > limit-1+2*perTurn {
		t.Errorf("total %d: want the limit %d reached, and passed by at most one turn of each run (%d)", day.Tokens(), limit, 2*perTurn)
	}
	if runs[0].Breached() == nil || runs[1].Breached() == nil {
		t.Error("both runs must stop")
	}
}

// A cost past a limit never reads as the limit: cents unless they round a fraction away.
func TestUSD(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "$0.00"}, {5, "$5.00"}, {0.5, "$0.50"}, {1.23, "$1.23"}, {0.0105, "$0.0105"},
		{0.501, "$0.501"}, {0.000004, "$0.000004"}, {0.5000000001, "$0.50"}, {12.3456789, "$12.345679"},
	} {
		if got := USD(tc.v); got != tc.want {
			t.Errorf("USD(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
