package policy

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/itchyny/gojq"

	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/pkg/wire"
)

// condition is one distinct `when` source of a policy. Rules that give the same source share
// it, so it runs at most once per prompt however many rules (and simple commands) ask.
type condition struct {
	id   int
	src  string
	code *gojq.Code
	// keys are the top-level fields of the event the condition reads, when it reads nothing
	// else of the event (see fieldsRead); whole means it may look at all of it.
	keys  []string
	whole bool
	fast  *fastCond // the condition without jq, when it has a shape fastCond knows
}

// conditions gives every rule with a when its shared condition, and lists, per kind, the
// fields the conditions that only read fields need.
func (p *Policy) conditions() {
	bySrc := map[string]*condition{}
	p.conds = nil
	for _, r := range p.Rules {
		if r.When == nil {
			continue
		}
		c := bySrc[r.WhenSrc]
		if c == nil {
			c = &condition{id: len(p.conds), src: r.WhenSrc, code: r.When}
			if q, err := gojq.Parse(r.WhenSrc); err == nil {
				c.keys, c.whole = fieldsRead(q)
				if !c.whole {
					c.fast = compileFast(q)
				}
			} else {
				c.whole = true
			}
			bySrc[r.WhenSrc] = c
			p.conds = append(p.conds, c)
		}
		r.cond = c
	}
	p.whenKeys = map[string][]string{}
	for kind, rules := range p.byKind {
		var keys []string
		for _, r := range rules {
			if r.cond != nil && !r.cond.whole {
				for _, k := range r.cond.keys {
					keys = appendUnique(keys, k)
				}
			}
		}
		p.whenKeys[kind] = keys
	}
}

// fieldsRead reports which top-level fields of its input a jq query reads, when that is all
// it can learn of the input: every use of the input is `.name` (or `."name"`, `.["name"]`),
// `select(...)`, `type`, `not`, a test of truth (and, or, //, if) or a binding of something
// else. Anything else that sees the input itself (`.`, `..`, `.[]`, keys, to_entries, paths,
// getpath, tojson, a comparison, an interpolation, a function definition, reduce, ...) gives
// whole=true: the condition then gets the whole event, decoded. Given only those fields, the
// query has the same outputs and errors as given the whole event.
func fieldsRead(q *gojq.Query) (keys []string, whole bool) {
	a := &readAnalysis{}
	if _, ok := a.query(q, true); !ok {
		return nil, true
	}
	return a.keys, false
}

type readAnalysis struct{ keys []string }

func (a *readAnalysis) key(k string) { a.keys = appendUnique(a.keys, k) }

// query analyses q run on an input that is the event (in) or a value taken out of it (!in,
// which the query may use as it likes: nothing it holds is the event). out reports whether q
// may output the event itself; ok=false when the query may see more of the event than fields.
func (a *readAnalysis) query(q *gojq.Query, in bool) (out, ok bool) {
	if q == nil {
		return false, true
	}
	if len(q.FuncDefs) > 0 || len(q.Imports) > 0 || q.Meta != nil {
		return false, false
	}
	if !in {
		// no variable holds the event (a binding of it is refused below), so nothing here can
		// reach it
		return false, true
	}
	if q.Term != nil {
		return a.term(q.Term, in)
	}
	if q.Left == nil || q.Right == nil {
		return false, false
	}
	switch q.Op {
	case gojq.OpPipe:
		if len(q.Patterns) > 0 {
			// `L as $x | R`: R runs on the same input; $x must not hold the event
			if len(q.Patterns) != 1 || q.Patterns[0].Name == "" {
				return false, false
			}
			if lo, ok := a.query(q.Left, in); !ok || lo {
				return false, false
			}
			return a.query(q.Right, in)
		}
		lo, ok := a.query(q.Left, in)
		if !ok {
			return false, false
		}
		return a.query(q.Right, lo)
	case gojq.OpComma, gojq.OpAlt:
		lo, ok1 := a.query(q.Left, in)
		ro, ok2 := a.query(q.Right, in)
		return lo || ro, ok1 && ok2
	case gojq.OpAnd, gojq.OpOr:
		// an object is true whatever its fields
		_, ok1 := a.query(q.Left, in)
		_, ok2 := a.query(q.Right, in)
		return false, ok1 && ok2
	case gojq.OpEq, gojq.OpNe, gojq.OpGt, gojq.OpLt, gojq.OpGe, gojq.OpLe,
		gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpMod:
		lo, ok1 := a.query(q.Left, in)
		ro, ok2 := a.query(q.Right, in)
		return false, ok1 && ok2 && !lo && !ro
	}
	return false, false // assignments and updates of the event
}

func (a *readAnalysis) term(t *gojq.Term, in bool) (out, ok bool) {
	if !in {
		return false, true
	}
	switch t.Type {
	case gojq.TermTypeIdentity:
		out = true
	case gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber, gojq.TermTypeBreak:
	case gojq.TermTypeString:
		if !a.values(in, t.Str.Queries...) {
			return false, false
		}
	case gojq.TermTypeIndex:
		k, lit := literalKey(t.Index)
		if !lit {
			return false, false
		}
		a.key(k)
	case gojq.TermTypeQuery:
		if out, ok = a.query(t.Query, in); !ok {
			return false, false
		}
	case gojq.TermTypeArray:
		if !a.values(in, t.Array.Query) {
			return false, false
		}
	case gojq.TermTypeUnary:
		if o, ok := a.term(t.Unary.Term, in); !ok || o {
			return false, false
		}
	case gojq.TermTypeObject:
		if !a.object(t.Object, in) {
			return false, false
		}
	case gojq.TermTypeIf:
		if out, ok = a.ifTerm(t.If, in); !ok {
			return false, false
		}
	case gojq.TermTypeTry:
		// errors of what is allowed here carry values taken out of the event, never the event
		bo, ok1 := a.query(t.Try.Body, in)
		co, ok2 := a.query(t.Try.Catch, false)
		if !ok1 || !ok2 {
			return false, false
		}
		out = bo || co
	case gojq.TermTypeLabel:
		if out, ok = a.query(t.Label.Body, in); !ok {
			return false, false
		}
	case gojq.TermTypeFunc:
		if out, ok = a.fn(t.Func, in); !ok {
			return false, false
		}
	default: // .., reduce, foreach, @format
		return false, false
	}
	return a.suffixes(t.SuffixList, out, in)
}

// suffixes follows a term's suffixes: out says the term passes the event on whole.
func (a *readAnalysis) suffixes(list []*gojq.Suffix, out, in bool) (bool, bool) {
	for _, s := range list {
		switch {
		case s.Index != nil:
			// index expressions run on the term's input, whatever is indexed
			if !a.values(in, s.Index.Start, s.Index.End) {
				return false, false
			}
			if s.Index.Str != nil && !a.values(in, s.Index.Str.Queries...) {
				return false, false
			}
			if out {
				k, lit := literalKey(s.Index)
				if !lit {
					return false, false
				}
				a.key(k)
				out = false
			}
		case s.Iter:
			if out {
				return false, false
			}
		case s.Optional:
		default:
			return false, false
		}
	}
	return out, true
}

// values reports whether each of qs reads only fields of the event, never passing it on
// whole (a nil query is nothing).
func (a *readAnalysis) values(in bool, qs ...*gojq.Query) bool {
	for _, q := range qs {
		if o, ok := a.query(q, in); !ok || o {
			return false
		}
	}
	return true
}

func (a *readAnalysis) object(o *gojq.Object, in bool) bool {
	for _, kv := range o.KeyVals {
		if kv.KeyQuery != nil {
			if ko, ok := a.query(kv.KeyQuery, in); !ok || ko {
				return false
			}
		}
		if kv.KeyString != nil {
			for _, sq := range kv.KeyString.Queries {
				if so, ok := a.query(sq, in); !ok || so {
					return false
				}
			}
		}
		if kv.Val != nil {
			if vo, ok := a.query(kv.Val, in); !ok || vo {
				return false
			}
			continue
		}
		// {name} and {"name"} read .name; {$x} is a variable
		switch {
		case kv.Key != "" && kv.Key[0] == '$':
		case kv.Key != "":
			a.key(kv.Key)
		case kv.KeyString != nil && len(kv.KeyString.Queries) == 0:
			a.key(kv.KeyString.Str)
		default:
			return false
		}
	}
	return true
}

func (a *readAnalysis) ifTerm(f *gojq.If, in bool) (out, ok bool) {
	if _, ok := a.query(f.Cond, in); !ok {
		return false, false
	}
	to, ok := a.query(f.Then, in)
	if !ok {
		return false, false
	}
	out = to
	for _, e := range f.Elif {
		if _, ok := a.query(e.Cond, in); !ok {
			return false, false
		}
		eo, ok := a.query(e.Then, in)
		if !ok {
			return false, false
		}
		out = out || eo
	}
	if f.Else == nil {
		return true, true // no else: the input itself
	}
	eo, ok := a.query(f.Else, in)
	return out || eo, ok
}

// fn: the builtins that may see the event itself without learning more than its fields.
func (a *readAnalysis) fn(f *gojq.Func, in bool) (out, ok bool) {
	if len(f.Name) > 0 && f.Name[0] == '$' {
		return false, len(f.Args) == 0 // a variable: never the event
	}
	switch {
	case f.Name == "select" && len(f.Args) == 1:
		if _, ok := a.query(f.Args[0], in); !ok {
			return false, false
		}
		return true, true
	case (f.Name == "not" || f.Name == "type" || f.Name == "empty") && len(f.Args) == 0:
		return false, true
	}
	return false, false
}

// literalKey returns the field name of .name, ."name" or .["name"].
func literalKey(ix *gojq.Index) (string, bool) {
	switch {
	case ix.IsSlice || ix.End != nil:
		return "", false
	case ix.Name != "":
		return ix.Name, ix.Start == nil && ix.Str == nil
	case ix.Str != nil:
		return ix.Str.Str, len(ix.Str.Queries) == 0 && ix.Start == nil
	case ix.Start != nil:
		t := ix.Start.Term
		if ix.Start.Right != nil || len(ix.Start.FuncDefs) > 0 || t == nil || t.Type != gojq.TermTypeString ||
			len(t.SuffixList) > 0 || len(t.Str.Queries) > 0 {
			return "", false
		}
		return t.Str.Str, true
	}
	return "", false
}

// topFields decodes the values of the named top-level keys of the valid JSON object raw (the
// last one of a repeated key, as a whole decode keeps), into a map like the whole decode's
// but holding those keys only.
//
// known gives the decoded string of a field already decoded elsewhere (as the whole decode
// would decode it), to be used for that field when its value is a string; it may be nil.
func topFields(raw []byte, keys []string, known func(name string) (string, bool)) map[string]any {
	m := make(map[string]any, len(keys))
	var d jsonscan.Decoder
	jsonscan.Members(raw, func(key, v []byte) bool {
		if name, ok := wantedKey(&d, key, keys); ok {
			if s, isKnown := knownString(known, name, v[0]); isKnown {
				m[name] = s
			} else {
				m[name] = d.Decode(v)
			}
		}
		return true
	})
	return m
}

func knownString(known func(string) (string, bool), name string, first byte) (string, bool) {
	if known == nil || first != '"' {
		return "", false
	}
	return known(name)
}

// requestField returns the field name of r as decodeRequest decoded it, for the fields it
// decodes for r's kind (the last value of the key, unescaped as a whole decode unescapes it:
// FuzzDecodeRequest). pend: the contents of r not decoded yet.
func requestField(r *wire.ApprovalRequest, name string, pend pending) (string, bool) {
	if name == "kind" {
		return r.Kind, true
	}
	switch r.Kind {
	case wire.KindShellCommand:
		if name == "command" {
			return r.Command, true
		}
	case wire.KindFileWrite:
		switch name {
		case "path":
			return r.Path, true
		case "newContent":
			return r.NewContent, pend&newPending == 0
		case "oldContent":
			return r.OldContent, pend&oldPending == 0
		case "plugin":
			return r.Plugin, true
		case "action":
			return r.Action, true
		}
	case wire.KindToolAction:
		switch name {
		case "plugin":
			return r.Plugin, true
		case "action":
			return r.Action, true
		case "detail":
			return r.Detail, true
		}
	case wire.KindRouteApproval:
		switch name {
		case "keyword":
			return r.Keyword, true
		case "sourceAgent":
			return r.SourceAgent, true
		case "targetAgent":
			return r.TargetAgent, true
		}
	}
	return "", false
}

// value is values([]string{key}, req)[key]: the field's value (nil when absent); ok=false
// when key is not one of fieldNames.
func (f *fields) value(key string, req *wire.ApprovalRequest, pend pending) (any, bool) {
	for n, name := range fieldNames {
		if name != key {
			continue
		}
		v := f.v[n]
		if v == nil {
			return nil, true
		}
		if v[0] == '"' {
			if s, ok := requestField(req, key, pend); ok {
				return s, true
			}
		}
		var d jsonscan.Decoder
		return d.Decode(v), true
	}
	return nil, false
}

// values is topFields(raw, keys, ...) from the fields scan found, when every key is one of
// fieldNames (nil otherwise): the same last value of each key, decoded the same way.
func (f *fields) values(keys []string, req *wire.ApprovalRequest, pend pending) map[string]any {
	var idx [nFields]int
	for i, k := range keys {
		n := -1
		for j, name := range fieldNames {
			if name == k {
				n = j
				break
			}
		}
		if n < 0 {
			return nil
		}
		idx[i] = n
	}
	m := make(map[string]any, len(keys))
	var d jsonscan.Decoder
	for i, k := range keys {
		v := f.v[idx[i]]
		if v == nil {
			continue
		}
		if s, ok := knownString(func(name string) (string, bool) { return requestField(req, name, pend) }, k, v[0]); ok {
			m[k] = s
		} else {
			m[k] = d.Decode(v)
		}
	}
	return m
}

// wantedKey reports which of keys the quoted key q is, decoded as the whole decode does.
func wantedKey(d *jsonscan.Decoder, q []byte, keys []string) (string, bool) {
	plain := len(q) >= 2
	for _, c := range q[1 : len(q)-1] {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	var k string
	if plain {
		for _, name := range keys {
			if len(name) == len(q)-2 && string(q[1:len(q)-1]) == name {
				return name, true
			}
		}
		return "", false
	}
	s, ok := d.Decode(q).(string)
	if !ok {
		return "", false
	}
	k = s
	for _, name := range keys {
		if name == k {
			return name, true
		}
	}
	return "", false
}

// whenClock bounds the conditions of one prompt together (whenTimeout), with one timer for
// the whole run instead of a new context with its own timer for every prompt. Its context
// says context.DeadlineExceeded once the bound is past, as a context.WithTimeout would.
type whenClock struct {
	ctx   *boundCtx
	timer *time.Timer
	armed bool
}

// start arms the clock for the prompt being decided, once, and returns its context.
func (c *whenClock) start() context.Context {
	if c.armed {
		return c.ctx
	}
	if c.ctx != nil {
		c.ctx.steps = 0
	}
	if c.ctx == nil {
		ctx := &boundCtx{done: make(chan struct{})}
		c.ctx, c.timer = ctx, time.AfterFunc(whenTimeout, func() { close(ctx.done) })
	} else {
		c.timer.Reset(whenTimeout)
	}
	c.armed = true
	return c.ctx
}

// stop ends the prompt's bound. A timer that already fired (or is firing) has closed its
// context, which is then dropped: the next prompt gets a fresh one.
func (c *whenClock) stop() {
	if !c.armed {
		return
	}
	c.armed = false
	if !c.timer.Stop() {
		c.ctx, c.timer = nil, nil
	}
}

// boundCtx is a context that ends, with context.DeadlineExceeded, when done is closed, and
// with errWhenSteps once Done has been called more than whenSteps times: gojq calls it once
// per instruction, so it counts the steps of the conditions (Done then returns a closed
// channel, unlike other contexts: gojq asks for it anew at every step).
type boundCtx struct {
	done  chan struct{}
	steps int // calls of Done since the prompt's conditions began (whenClock.start)
}

// errWhenSteps is the error of a condition stopped by whenSteps.
type errWhenSteps struct{}

func (errWhenSteps) Error() string {
	return fmt.Sprintf("the conditions of the prompt ran past %d steps", whenSteps)
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *boundCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *boundCtx) Value(any) any               { return nil }
func (c *boundCtx) Done() <-chan struct{} {
	c.steps++
	if c.steps > whenSteps {
		return closedChan
	}
	return c.done
}
func (c *boundCtx) Err() error {
	if c.steps > whenSteps {
		return errWhenSteps{}
	}
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// fastCond is a condition of a common shape run without the jq interpreter:
//
//	.k | test("re")          .k | test("re"; "flags")       .k | length > N
//	(.k // "s") | test(...)  (.k // "s") | length >= N      (and <, <=, ==, !=)
//
// It gives the condition's first output when the value tested is a string; for any other
// value (whose errors and results jq alone knows) the condition runs in jq as usual.
type fastCond struct {
	key string
	alt *string // (.k // "s"): the value for null and false
	re  *regexp.Regexp
	// prefix is the literal text every match of re begins with ("" when there is none): a
	// string without it does not match, which strings.Contains says faster than re on long
	// values (re clears state in proportion to the length before it looks for the prefix)
	prefix string
	lits   *litSet // re when it is only literal words
	// rawPrefix: the prefix holds no character a short escape of JSON (\n, \") stands for,
	// so a string written without \u escapes that lacks it in its JSON lacks it decoded too
	rawPrefix bool
	op        gojq.Operator // length OP n
	n         int
	test      bool
}

// eval returns the condition's result, or ok=false when jq has to run it.
func (f *fastCond) eval(v any) (res, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap {
		return false, false
	}
	return f.evalValue(m[f.key])
}

// evalValue is eval given the value of the field (nil when the event has none).
func (f *fastCond) evalValue(x any) (res, ok bool) {
	if f.alt != nil && (x == nil || x == false) {
		x = *f.alt
	}
	s, isStr := x.(string)
	if !isStr {
		return false, false
	}
	if f.test {
		if f.lits != nil {
			if res, ok := f.lits.match(s); ok {
				return res, true
			}
		}
		if f.prefix != "" && !strings.Contains(s, f.prefix) {
			return false, true
		}
		return f.re.MatchString(s), true
	}
	// a string has between len/4 and len characters: most lengths need no count
	if res, ok := f.lengthWithin((len(s)+utf8.UTFMax-1)/utf8.UTFMax, len(s)); ok {
		return res, true
	}
	return f.length(utf8.RuneCountInString(s))
}

// lengthWithin is the result of length OP n for a string of lo to hi characters, when that is
// enough to say (ok).
func (f *fastCond) lengthWithin(lo, hi int) (res, ok bool) {
	switch {
	case f.op == gojq.OpGt && hi <= f.n, f.op == gojq.OpGe && hi < f.n, f.op == gojq.OpEq && (hi < f.n || lo > f.n):
		return false, true
	case f.op == gojq.OpGt && lo > f.n, f.op == gojq.OpGe && lo >= f.n, f.op == gojq.OpNe && (hi < f.n || lo > f.n):
		return true, true
	case f.op == gojq.OpLt && lo >= f.n, f.op == gojq.OpLe && lo > f.n:
		return false, true
	case f.op == gojq.OpLt && hi < f.n, f.op == gojq.OpLe && hi <= f.n:
		return true, true
	}
	return false, false
}

// length is the result of length OP n for a string of l characters.
func (f *fastCond) length(l int) (res, ok bool) {
	switch f.op {
	case gojq.OpGt:
		return l > f.n, true
	case gojq.OpGe:
		return l >= f.n, true
	case gojq.OpLt:
		return l < f.n, true
	case gojq.OpLe:
		return l <= f.n, true
	case gojq.OpEq:
		return l == f.n, true
	case gojq.OpNe:
		return l != f.n, true
	}
	return false, false
}

// compileFast recognises the shapes of fastCond; nil when q has another.
func compileFast(q *gojq.Query) *fastCond {
	q = unparen(q)
	if q == nil || q.Op != gojq.OpPipe || len(q.Patterns) > 0 || q.Left == nil || q.Right == nil {
		return nil
	}
	f := &fastCond{}
	if !f.source(unparen(q.Left)) {
		return nil
	}
	rt := unparen(q.Right)
	switch {
	case rt.Term != nil && rt.Term.Type == gojq.TermTypeFunc && len(rt.Term.SuffixList) == 0 && rt.Term.Func.Name == "test":
		if f.testOf(rt.Term.Func.Args) {
			return f
		}
	case rt.Term == nil && rt.Left != nil && rt.Right != nil && len(rt.Patterns) == 0:
		if f.lengthOf(rt) {
			return f
		}
	}
	return nil
}

// source reads what a fastCond looks at: .k, or .k // "s".
func (f *fastCond) source(src *gojq.Query) bool {
	switch {
	case src.Term != nil:
		k, ok := plainField(src.Term)
		f.key = k
		return ok
	case src.Op == gojq.OpAlt && len(src.Patterns) == 0:
		l, r := unparen(src.Left), unparen(src.Right)
		if l == nil || r == nil || l.Term == nil || r.Term == nil {
			return false
		}
		k, ok1 := plainField(l.Term)
		s, ok2 := plainString(r.Term)
		f.key, f.alt = k, &s
		return ok1 && ok2
	}
	return false
}

// testOf reads test("re") or test("re"; "flags") with literal strings.
func (f *fastCond) testOf(args []*gojq.Query) bool {
	if len(args) < 1 || len(args) > 2 {
		return false
	}
	var strs []string
	for _, a := range args {
		a = unparen(a)
		if a == nil || a.Term == nil {
			return false
		}
		s, ok := plainString(a.Term)
		if !ok {
			return false
		}
		strs = append(strs, s)
	}
	re := strs[0]
	if len(strs) == 2 {
		// gojq's flags: g (no effect on test), i, m (dot matches newline)
		flags := strs[1]
		if strings.ContainsFunc(flags, func(r rune) bool { return r != 'g' && r != 'i' && r != 'm' }) {
			return false
		}
		if strings.ContainsRune(flags, 'i') {
			re = "(?i)" + re
		}
		if strings.ContainsRune(flags, 'm') {
			re = "(?s)" + re
		}
	}
	r, err := regexp.Compile(re)
	if err != nil {
		return false // jq reports the error
	}
	f.re, f.test = r, true
	f.prefix, _ = r.LiteralPrefix()
	f.lits = compileLits(re)
	f.rawPrefix = f.prefix != "" && !strings.ContainsAny(f.prefix, "\"\\/'\b\f\n\r\t\ufffd")
	return true
}

// lengthOf reads length OP N, N a literal integer.
func (f *fastCond) lengthOf(rt *gojq.Query) bool {
	switch rt.Op {
	case gojq.OpGt, gojq.OpGe, gojq.OpLt, gojq.OpLe, gojq.OpEq, gojq.OpNe:
	default:
		return false
	}
	l, r := unparen(rt.Left), unparen(rt.Right)
	if l == nil || r == nil || l.Term == nil || r.Term == nil {
		return false
	}
	lt, nt := l.Term, r.Term
	if lt.Type != gojq.TermTypeFunc || lt.Func.Name != "length" || len(lt.Func.Args) > 0 || len(lt.SuffixList) > 0 ||
		nt.Type != gojq.TermTypeNumber || len(nt.SuffixList) > 0 {
		return false
	}
	for _, c := range nt.Number {
		if c < '0' || c > '9' {
			return false
		}
	}
	n, err := strconv.Atoi(nt.Number)
	if err != nil || n > 1<<40 {
		return false
	}
	f.op, f.n = rt.Op, n
	return true
}

// unparen strips the parentheses around a query: (q) is q.
func unparen(q *gojq.Query) *gojq.Query {
	for q != nil && len(q.FuncDefs) == 0 && len(q.Imports) == 0 && q.Meta == nil && q.Term != nil &&
		q.Term.Type == gojq.TermTypeQuery && len(q.Term.SuffixList) == 0 {
		q = q.Term.Query
	}
	if q != nil && (len(q.FuncDefs) > 0 || len(q.Imports) > 0 || q.Meta != nil) {
		return nil
	}
	return q
}

// plainField: .k, ."k", .["k"], without suffixes.
func plainField(t *gojq.Term) (string, bool) {
	if t.Type != gojq.TermTypeIndex || len(t.SuffixList) > 0 {
		return "", false
	}
	return literalKey(t.Index)
}

// plainString: a string literal without interpolation or format.
func plainString(t *gojq.Term) (string, bool) {
	if t.Type != gojq.TermTypeString || len(t.SuffixList) > 0 || t.Str == nil || len(t.Str.Queries) > 0 {
		return "", false
	}
	return t.Str.Str, true
}
