// Package budget holds a live session to the limits a user set: turns, tokens, wall-clock time
// and cost, for this run alone or, with a budget file, for every run of the day or week that
// shares the file.
//
// A [Budget] is fed every event fuseraft sends ([Budget.Observe]) and asked before a message
// starts a turn ([Budget.BeforeTurn]); each says, once, when a limit is breached and by what
// figures ([Breach]). What it counts is what fuseraft reports:
//
//   - a turn is a turn_start (repl --vscode) or an agent_starting (run --bridge, serve);
//   - tokens are input plus output: message_end's inputTokens and outputTokens (repl), each
//     agent_message's message.inputTokens and outputTokens (run), and the result's totals
//     (run): for each component the larger of the result's total and the sum of the session's
//     turns counts, so a total is never counted twice and tokens reported only at the end
//     still count. cachedInputTokens are a part of the input (they are priced, not added);
//     token_budget_warning is fuseraft's own warning and counts nothing;
//   - time is wall-clock time since the Budget started;
//   - cost prices those tokens with an [prices.Table], by the model ready names (the table's
//     default for a run, whose ready names none). Tokens of a model the table cannot price
//     breach --max-cost: a cap that cannot be computed is not a cap.
//
// Turns and tokens are checked twice: as they are reported (past a limit is a breach) and
// before a turn starts (no turn starts once a limit is reached), so a run goes past a limit by
// at most the turn it was running when it got there.
package budget

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fuseraft/fr/internal/prices"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/pkg/wire"
)

// Limits are the caps a user set; a zero field is no cap.
type Limits struct {
	Turns    int64
	Tokens   int64 // input + output
	Duration time.Duration
	CostUSD  float64
	// Prices prices tokens for CostUSD (and for the cost shown with the others).
	Prices *prices.Table
}

// Any reports whether any limit is set.
func (l Limits) Any() bool {
	return l.Turns > 0 || l.Tokens > 0 || l.Duration > 0 || l.CostUSD > 0
}

// Usage is what was used: by one run, or by every run of a period in a budget file.
type Usage struct {
	Runs    int64   `json:"runs"`
	Turns   int64   `json:"turns"`
	Input   int64   `json:"inputTokens"`
	Output  int64   `json:"outputTokens"`
	Cached  int64   `json:"cachedInputTokens"`
	Seconds float64 `json:"seconds"`
	CostUSD float64 `json:"costUSD"`
}

// Tokens is input plus output.
func (u Usage) Tokens() int64 { return u.Input + u.Output }

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{Runs: u.Runs + v.Runs, Turns: u.Turns + v.Turns, Input: u.Input + v.Input,
		Output: u.Output + v.Output, Cached: u.Cached + v.Cached, Seconds: u.Seconds + v.Seconds,
		CostUSD: u.CostUSD + v.CostUSD}
}

// Breach says which limit was breached and by what figures.
type Breach struct {
	Limit string // the flag: --max-turns, --max-tokens, --max-duration, --max-cost, --budget-file, --budget-kv
	Max   string // the limit as given ("2000", "10m0s", "$5.00")
	Used  string // what was used ("2150 tokens (1500 input + 650 output)")
	// Scope is "" for this run alone, else the period of the budget file the figures are of
	// ("today (2026-12-01) in budget.json").
	Scope string
	Usage Usage // the figures the limit was held to
}

// String is the breach for a person: "--max-tokens 2000: 2150 tokens used (1500 input + 650 output)".
func (b *Breach) String() string {
	s := b.Limit
	if b.Max != "" {
		s += " " + b.Max
	}
	s += ": " + b.Used
	if b.Scope != "" {
		s += " " + b.Scope
	}
	return s
}

// Options are the Budget's surroundings.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Store, when set, is the budget file or bucket the limits are held to: they apply to the
	// totals of Per (every run that shares it), not to this run alone.
	Store Store
	// Per is the period of Store's totals: "day" (the default) or "week".
	Per string
	// KeepStore leaves Store open at Close: it is shared by other Budgets of this process.
	KeepStore bool
}

// Budget counts one session's use and holds it to Limits. It is safe for concurrent use.
type Budget struct {
	mu    sync.Mutex
	lim   Limits
	now   func() time.Time
	store Store
	per   string
	keep  bool // KeepStore

	start      time.Time
	lastCommit time.Time
	run        Usage // this run
	pending    Usage // this run's use not yet in the store
	shared     Usage // the period's totals in the store as last read, ours included
	period     string

	model    string
	sessMsg  Usage // tokens of the current session's turns, for its result
	unpriced string
	breach   *Breach

	// With a store: this run's id there, its turn in flight and that turn's tokens so far, the
	// largest turn ended and not yet recorded, and what the store said of the other runs.
	id       string
	inTurn   bool
	turnTok  int64
	doneTurn int64
	others   Shared
}

// New returns a Budget for lim, started now.
func New(lim Limits, o Options) *Budget {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	per := o.Per
	if per == "" {
		per = "day"
	}
	t := now()
	b := &Budget{lim: lim, now: now, store: o.Store, per: per, keep: o.KeepStore, start: t, lastCommit: t}
	if b.store != nil {
		var r [6]byte
		rand.Read(r[:])
		b.id = strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(r[:])
	}
	return b
}

// Limits returns the limits the Budget holds to.
func (b *Budget) Limits() Limits { return b.lim }

// Start records the run in the budget file, if any, and reports a breach when the period's
// totals already reached a limit: then the run should not start at all.
func (b *Budget) Start() *Breach {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.store == nil {
		return nil
	}
	if b.commit() {
		return b.breach
	}
	if br := b.atStart(); br != nil {
		return br
	}
	b.pending.Runs++
	b.run.Runs++
	b.commit()
	return b.breach
}

// Breached returns the breach, once there has been one.
func (b *Budget) Breached() *Breach {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.breach
}

// Usage returns this run's use so far, and, with a budget file, the period's totals (ours
// included) as last read.
func (b *Budget) Usage() (run, shared Usage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	run = b.run
	run.Seconds = b.now().Sub(b.start).Seconds()
	return run, b.shared
}

// Left returns how long until --max-duration is reached (0 or less: it is), and false when
// there is no such limit. Call Tick when it runs out: with a budget file, other runs' time
// may have moved it.
func (b *Budget) Left() (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lim.Duration <= 0 {
		return 0, false
	}
	return b.lim.Duration - b.elapsed(), true
}

// Tick checks the time (and, with a budget file, brings it up to date). It returns the breach
// the first time there is one.
func (b *Budget) Tick() *Breach {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.settle()
}

// Close writes what the store has not been told yet (the time since the last event).
func (b *Budget) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.store != nil && (b.breach == nil || b.breach.Limit != storeFlag(b.store)) {
		b.endTurn()
		b.commit()
	}
	if c, ok := b.store.(interface{ Close() }); ok && !b.keep {
		c.Close()
	}
}

// BeforeTurn is asked before a message that starts a turn is sent: once a limit is reached, no
// turn starts. It returns the breach the first time there is one.
func (b *Budget) BeforeTurn() *Breach {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.breach != nil {
		return nil
	}
	if b.store != nil && b.commit() {
		return b.breach
	}
	if br := b.atStart(); br != nil {
		return br
	}
	return b.settle()
}

// Observe counts an event. It returns the breach the first time there is one.
func (b *Budget) Observe(ev wire.Event) *Breach {
	b.mu.Lock()
	defer b.mu.Unlock()
	var d Usage
	turnStart := StartsTurn(ev.Type)
	if turnStart {
		d.Turns = 1
		b.endTurn() // a daemon's agent turns end as the next one starts
		b.inTurn = true
	}
	switch ev.Type {
	case wire.TypeReady:
		var r struct {
			Model string `json:"model"`
		}
		if ev.Decode(&r) == nil {
			b.model = r.Model
		}
		b.sessMsg = Usage{}
	case "message_end":
		var m struct {
			In     *int64 `json:"inputTokens"`
			Out    *int64 `json:"outputTokens"`
			Cached *int64 `json:"cachedInputTokens"`
		}
		if ev.Decode(&m) != nil {
			return nil
		}
		d.Input, d.Output, d.Cached = val(m.In), val(m.Out), val(m.Cached)
		b.sessMsg = b.sessMsg.Add(d)
	case "agent_message":
		var m struct {
			Message struct {
				In  *int64 `json:"inputTokens"`
				Out *int64 `json:"outputTokens"`
			} `json:"message"`
		}
		if ev.Decode(&m) != nil {
			return nil
		}
		d.Input, d.Output = val(m.Message.In), val(m.Message.Out)
		b.sessMsg = b.sessMsg.Add(d)
	case wire.TypeResult:
		var r struct {
			In  *int64 `json:"inputTokens"`
			Out *int64 `json:"outputTokens"`
		}
		if ev.Decode(&r) == nil {
			// The run's totals against the sum of its turns: only what the turns did not
			// report counts now.
			if r.In != nil && *r.In > b.sessMsg.Input {
				d.Input = *r.In - b.sessMsg.Input
			}
			if r.Out != nil && *r.Out > b.sessMsg.Output {
				d.Output = *r.Out - b.sessMsg.Output
			}
		}
		b.sessMsg = Usage{}
	}
	b.turnTok += d.Tokens()
	if endsTurn(ev.Type) && b.inTurn {
		b.endTurn()
		if d == (Usage{}) && b.store != nil && b.breach == nil {
			b.commit() // the turn is no longer in flight
		}
	}
	if d == (Usage{}) {
		return nil
	}
	b.add(d)
	if b.breach != nil {
		return nil
	}
	if turnStart {
		br := b.settle()
		if br == nil {
			br = b.tokensReached()
		}
		if br != nil && b.store != nil {
			// This turn is to be interrupted: the other runs need not hold room for it.
			b.endTurn()
			b.commit()
		}
		return br
	}
	return b.settle()
}

// StartsTurn reports whether an event starts a turn, as a Budget counts turns: a turn_start
// (repl --vscode) or an agent_starting (run --bridge, serve).
func StartsTurn(eventType string) bool {
	return eventType == wire.TypeTurnStart || eventType == wire.TypeAgentStarting
}

// endsTurn reports whether an event ends a turn: an agent_message is a run's turn done.
func endsTurn(eventType string) bool {
	return wire.EndsTurn(eventType) || eventType == "agent_message"
}

// endTurn ends this run's turn in flight, if any, keeping its tokens for the store's largest.
func (b *Budget) endTurn() {
	if b.inTurn {
		b.doneTurn = max(b.doneTurn, b.turnTok)
	}
	b.inTurn, b.turnTok = false, 0
}

func val(p *int64) int64 {
	if p == nil || *p < 0 {
		return 0
	}
	return *p
}

// add counts d, priced.
func (b *Budget) add(d Usage) {
	if d.Input > 0 || d.Output > 0 {
		if p, ok := b.lim.Prices.Lookup(b.model); ok {
			d.CostUSD = p.Cost(prices.Usage{Input: d.Input, Output: d.Output, Cached: d.Cached})
		} else if b.lim.Prices != nil || b.lim.CostUSD > 0 {
			b.unpriced = "model " + b.model
			if b.model == "" {
				b.unpriced = "a run (its ready names no model)"
			}
		}
	}
	b.run = b.run.Add(d)
	b.pending = b.pending.Add(d)
}

// elapsed is the time held to --max-duration: this run's, or the period's with ours.
func (b *Budget) elapsed() time.Duration {
	now := b.now()
	if b.store != nil {
		return time.Duration(b.shared.Seconds*float64(time.Second)) + now.Sub(b.lastCommit)
	}
	return now.Sub(b.start)
}

// commit adds what is pending to the store and reads the period's totals back. It reports
// true when the store failed: a limit that cannot be kept is a breach.
func (b *Budget) commit() bool {
	if b.store == nil {
		return false
	}
	now := b.now()
	d := b.pending
	d.Seconds += now.Sub(b.lastCommit).Seconds()
	day, week, sh, err := b.store.Commit(now, d, &Turn{Run: b.id, InFlight: b.inTurn, Done: b.doneTurn})
	if err != nil {
		if b.breach == nil {
			b.breach = &Breach{Limit: storeFlag(b.store), Used: "cannot be updated: " + err.Error()}
		}
		return true
	}
	b.pending, b.lastCommit, b.doneTurn, b.others = Usage{}, now, 0, sh
	b.shared, b.period = day, "today ("+DayKey(now)+")"
	if b.per == "week" {
		b.shared, b.period = week, "this week ("+WeekKey(now)+")"
	}
	return false
}

// storeFlag is the flag that named the store: a breach by the store itself names it.
func storeFlag(s Store) string {
	if _, ok := s.(*KVStore); ok {
		return "--budget-kv"
	}
	return "--budget-file"
}

// used is the figures held to the limits.
func (b *Budget) used() Usage {
	if b.store != nil {
		u := b.shared.Add(b.pending)
		u.Seconds = b.elapsed().Seconds()
		return u
	}
	u := b.run
	u.Seconds = b.elapsed().Seconds()
	return u
}

func (b *Budget) scope() string {
	if b.store == nil {
		return ""
	}
	return b.period + " in " + b.store.Name()
}

// settle brings the store up to date and checks every limit: past one is a breach.
func (b *Budget) settle() *Breach {
	if b.breach != nil {
		return nil
	}
	if b.store != nil && b.commit() {
		return b.breach
	}
	u := b.used()
	l := b.lim
	switch {
	case l.Turns > 0 && u.Turns > l.Turns:
		b.breach = &Breach{Limit: "--max-turns", Max: strconv.FormatInt(l.Turns, 10),
			Used: fmt.Sprintf("turn %d started", u.Turns)}
	case l.Tokens > 0 && u.Tokens() > l.Tokens:
		b.breach = &Breach{Limit: "--max-tokens", Max: strconv.FormatInt(l.Tokens, 10), Used: tokensUsed(u)}
	case l.CostUSD > 0 && b.unpriced != "":
		b.breach = &Breach{Limit: "--max-cost", Max: USD(l.CostUSD),
			Used: "the price table has no price for " + b.unpriced + " and no default, so the cost is not known"}
	case l.CostUSD > 0 && u.CostUSD > l.CostUSD:
		b.breach = &Breach{Limit: "--max-cost", Max: USD(l.CostUSD), Used: costUsed(u)}
	case l.Duration > 0 && u.Seconds >= l.Duration.Seconds():
		b.breach = &Breach{Limit: "--max-duration", Max: l.Duration.String(),
			Used: Seconds(u.Seconds) + " used"}
	}
	if b.breach != nil {
		b.breach.Scope, b.breach.Usage = b.scope(), u
	}
	return b.breach
}

// atStart is the check before a turn: a limit reached (not only passed) lets no turn start.
func (b *Budget) atStart() *Breach {
	if b.breach != nil {
		return nil
	}
	u := b.used()
	l := b.lim
	switch {
	case l.Turns > 0 && u.Turns >= l.Turns:
		b.breach = &Breach{Limit: "--max-turns", Max: strconv.FormatInt(l.Turns, 10),
			Used: fmt.Sprintf("%d turns done, no more may start", u.Turns)}
	default:
		return b.tokensReached()
	}
	b.breach.Scope, b.breach.Usage = b.scope(), u
	return b.breach
}

// tokensReached is the check of tokens and cost as a turn starts: reached is enough.
func (b *Budget) tokensReached() *Breach {
	if b.breach != nil {
		return nil
	}
	u := b.used()
	l := b.lim
	held := int64(b.others.Others) * b.others.Largest // other runs' turns in flight
	switch {
	case l.Tokens > 0 && u.Tokens()+held >= l.Tokens:
		b.breach = &Breach{Limit: "--max-tokens", Max: strconv.FormatInt(l.Tokens, 10), Used: tokensUsed(u) + b.heldFor(held) + ", no more turns may start"}
	case l.CostUSD > 0 && u.CostUSD >= l.CostUSD:
		b.breach = &Breach{Limit: "--max-cost", Max: USD(l.CostUSD), Used: costUsed(u) + ", no more turns may start"}
	case l.Duration > 0 && u.Seconds >= l.Duration.Seconds():
		b.breach = &Breach{Limit: "--max-duration", Max: l.Duration.String(), Used: Seconds(u.Seconds) + " used"}
	default:
		return nil
	}
	b.breach.Scope, b.breach.Usage = b.scope(), u
	return b.breach
}

// Against is the totals against each limit set, short, for a person: "turns 2 of 5 · tokens
// 4,256 of 4,000: past · cost $0.0022 of $1.00 · time 1m2s of 30m0s". With a budget file they
// are the period's totals.
func (b *Budget) Against() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, l := b.used(), b.lim
	var parts []string
	add := func(what, used, max string, past bool) {
		s := what + " " + used + " of " + max
		if past {
			s += ": past"
		}
		parts = append(parts, s)
	}
	if l.Turns > 0 {
		add("turns", render.Commas(u.Turns), render.Commas(l.Turns), u.Turns > l.Turns)
	}
	if l.Tokens > 0 {
		add("tokens", render.Commas(u.Tokens()), render.Commas(l.Tokens), u.Tokens() > l.Tokens)
	}
	if l.CostUSD > 0 {
		if b.unpriced != "" {
			add("cost", "unknown", USD(l.CostUSD), false)
		} else {
			add("cost", USD(u.CostUSD), USD(l.CostUSD), u.CostUSD > l.CostUSD)
		}
	}
	if l.Duration > 0 {
		add("time", Seconds(u.Seconds), l.Duration.String(), u.Seconds >= l.Duration.Seconds())
	}
	s := strings.Join(parts, " · ")
	if b.store != nil {
		s += " (" + b.scope() + ")"
	}
	return s
}

// heldFor says the tokens held for other runs' turns in flight, if any.
func (b *Budget) heldFor(held int64) string {
	if held == 0 {
		return ""
	}
	return fmt.Sprintf(" and %d held for %d other runs' turns in flight", held, b.others.Others)
}

func tokensUsed(u Usage) string {
	return fmt.Sprintf("%d tokens used (%d input + %d output)", u.Tokens(), u.Input, u.Output)
}

func costUsed(u Usage) string {
	return fmt.Sprintf("%s used (%d tokens)", USD(u.CostUSD), u.Tokens())
}

// USD formats dollars: "$1.23", with more digits (up to six) where cents would round a
// fraction of a cent away ("$0.0105", "$0.500125"), so a cost past a limit never reads as
// the limit itself.
func USD(v float64) string {
	cents := strconv.FormatFloat(v, 'f', 2, 64)
	if c, _ := strconv.ParseFloat(cents, 64); c == v || v == 0 {
		return "$" + cents
	}
	s := strings.TrimRight(strconv.FormatFloat(v, 'f', 6, 64), "0")
	if i := strings.IndexByte(s, '.'); len(s)-i < 3 {
		return "$" + cents
	}
	return "$" + s
}

// Seconds formats a duration given in seconds, to the tenth: "12.3s", "10m0.5s".
func Seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(100 * time.Millisecond).String()
}
