package filter

import (
	"strconv"
	"time"

	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/internal/prices"
	"github.com/fuseraft/fr/pkg/wire"
)

// limitFlags are --pretty's limits: the totals of the stream read (every event, whatever the
// filter keeps), counted as fr-stream counts them, shown against --max-turns, --max-tokens,
// --max-duration and --max-cost after each turn and at the end.
func limitFlags() []flagDef {
	return []flagDef{
		{name: "max-turns", args: 1, usage: "with --pretty, show the turns read against a limit of `N`",
			set: func(o *options, vals []string, _ *string) error {
				return parseLimit(&o.limits.Turns, "--max-turns", vals[0])
			}},
		{name: "max-tokens", args: 1, usage: "with --pretty, show the tokens read (input + output) against a limit of `N`",
			set: func(o *options, vals []string, _ *string) error {
				return parseLimit(&o.limits.Tokens, "--max-tokens", vals[0])
			}},
		{name: "max-duration", args: 1, usage: "with --pretty, show the time since the first event read against a limit of `DURATION`",
			set: func(o *options, vals []string, _ *string) error {
				d, err := time.ParseDuration(vals[0])
				if err != nil || d < 0 {
					return usageErr("--max-duration %s: not a duration such as 30m", quoteArg(vals[0]))
				}
				o.limits.Duration = d
				return nil
			}},
		{name: "max-cost", args: 1, usage: "with --pretty, show the cost (priced with --prices) against a limit of `USD` dollars",
			set: func(o *options, vals []string, _ *string) error {
				v, err := strconv.ParseFloat(vals[0], 64)
				if err != nil || v < 0 || v != v {
					return usageErr("--max-cost %s: not an amount of dollars", quoteArg(vals[0]))
				}
				o.limits.CostUSD = v
				return nil
			}},
		{name: "prices", args: 1, usage: "the price table `FILE` for --max-cost (YAML, as fr-report's)",
			set: func(o *options, vals []string, _ *string) error {
				t, err := prices.Load(vals[0])
				if err != nil {
					return usageErr("--prices: %v", err)
				}
				o.limits.Prices = t
				return nil
			}},
	}
}

func parseLimit(dst *int64, flag, s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return usageErr("%s %s: not a whole number", flag, quoteArg(s))
	}
	*dst = n
	return nil
}

// limitsView counts the stream read and says where it stands against the limits.
type limitsView struct {
	lim     budget.Limits
	b       *budget.Budget // from the first line read: the time is the stream's since then
	pending bool           // a turn ended (or a limit was passed) since the totals were last shown
	shown   bool
}

func newLimitsView(lim budget.Limits) *limitsView {
	if !lim.Any() {
		return nil
	}
	return &limitsView{lim: lim}
}

// counted are the event types the totals count.
var counted = map[string]bool{wire.TypeReady: true, wire.TypeTurnStart: true, wire.TypeAgentStarting: true,
	wire.TypeMessageEnd: true, wire.TypeAgentMessage: true, wire.TypeResult: true}

// read counts one input line.
func (v *limitsView) read(line []byte) {
	if v.b == nil {
		v.b = budget.New(v.lim, budget.Options{})
	}
	q, _ := jsonscan.QuickType(line)
	if !q.Typed || !counted[q.Type()] {
		return
	}
	ev := wire.Event{Type: q.Type(), Raw: line}
	if v.b.Observe(ev) != nil {
		v.pending = true
	}
	switch ev.Type {
	case wire.TypeMessageEnd, wire.TypeAgentMessage, wire.TypeResult:
		v.pending = true
	}
}

// note is the totals against the limits, when they are to be shown now (or at the end).
func (v *limitsView) note(end bool) (string, bool) {
	if v.b == nil || !v.pending && (!end || v.shown) {
		return "", false
	}
	v.pending, v.shown = false, true
	return "limits: " + v.b.Against(), true
}
