package policy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/internal/textdiff"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/itchyny/gojq"

	"github.com/fuseraft/fr/pkg/wire"
)

// Deciders: who made a decision.
const (
	ByRule      = "rule"
	ByDefault   = "default"
	ByMalformed = "malformed"
)

// Decision is the outcome for one approval_request.
type Decision struct {
	Verdict Verdict
	Decider string // ByRule, ByDefault or ByMalformed
	Rule    string // the deciding rule, when Decider is ByRule
	Part    string // for shell commands: the simple command that decided
	Reason  string // why, in a few words, for people
	Kind    string
	Summary string
	// Charge lists the limited rules that allowed this prompt; they are charged with it when
	// the allow is given (Decider.Record).
	Charge []string
	// Request is the prompt decoded. A file_write's OldContent and NewContent are there when
	// the verdict is ask (for the person asked) or a rule needed them; otherwise they may be
	// left empty.
	Request *wire.ApprovalRequest
}

// Decider applies a policy. It keeps the counts behind `limit:`; it is not safe for concurrent
// use.
type Decider struct {
	P        *Policy
	root     string
	rootReal string
	// Warn reports a `when` that failed at run time: the rule then matches if it denies or
	// asks, and does not if it allows.
	Warn func(format string, args ...any)
	// Now is the clock for limits; nil means time.Now.
	Now func() time.Time
	// Session is the fuseraft session the prompts belong to, for per-session limits.
	Session string
	// Timeout bounds the wall-clock time of one decision (0: no bound): a decision that runs
	// past it is denied by ByError, and so is one that panics.
	Timeout time.Duration
	// Probe, when set, is called with each prompt once its decision has begun: tests make a
	// decision panic or run long with it.
	Probe  func(raw []byte)
	counts map[string]*ruleCount

	started int64 // when the decision under way began (boundNow, with a Timeout)
	steps   int   // steps of work since the clock was last read (step)
	work    int   // steps of work of the decision under way (for tests)

	// the conditions run for the prompt being decided: whenSeen[id] == gen when condition id
	// has run, with result whenVal[id] (and error whenErr[id])
	gen      uint64
	whenSeen []uint64
	whenVal  []bool
	whenErr  []error
	clock    whenClock
	fl       fields // the fields of the prompt being decided
	pathBuf  []byte // linkFree's buffer
	// linkFree's answers for the prompt being decided (memoGen == gen)
	linkMemo []linkMemo
	nameMemo []nameMemo // what lstat said of each name below the root looked at (memoGen == gen)
	memoGen  uint64
	ev       *event // the prompt being decided
	evBuf    event  // what ev points to, made anew for each prompt without an allocation
}

type ruleCount struct {
	session map[string]int
	times   []time.Time
}

// NewDecider returns a Decider for p with file paths normalised against root (made absolute).
func NewDecider(p *Policy, root string) (*Decider, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	d := &Decider{P: p, root: abs, rootReal: resolve(abs), counts: map[string]*ruleCount{}}
	return d, nil
}

// Root is the directory file paths are normalised against.
func (d *Decider) Root() string { return d.root }

func (d *Decider) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Decider) warn(format string, args ...any) {
	if d.Warn != nil {
		d.Warn(format, args...)
	}
}

// Record charges the limited rules of an allow given at t in session.
func (d *Decider) Record(session string, rules []string, t time.Time) {
	for _, name := range rules {
		c := d.counts[name]
		if c == nil {
			c = &ruleCount{session: map[string]int{}}
			d.counts[name] = c
		}
		c.session[session]++
		c.times = append(c.times, t)
	}
}

// Reset forgets every count.
func (d *Decider) Reset() { d.counts = map[string]*ruleCount{} }

func (d *Decider) limitOK(r *Rule) bool {
	if r.Limit == nil {
		return true
	}
	c := d.counts[r.Name]
	if c == nil {
		return r.Limit.Max > 0
	}
	if r.Limit.Per == 0 {
		return c.session[d.Session] < r.Limit.Max
	}
	cut := d.now().Add(-r.Limit.Per)
	i := 0
	for i < len(c.times) && !c.times[i].After(cut) {
		i++
	}
	c.times = c.times[i:]
	return len(c.times) < r.Limit.Max
}

// event is one prompt under evaluation: its decoded forms for `when`, computed once.
type event struct {
	raw   []byte
	valid bool                  // raw is known to be valid JSON
	kind  string                // the prompt's kind, for the fields its conditions read
	req   *wire.ApprovalRequest // the prompt decoded, whose strings the conditions reuse
	fl    *fields               // the raw values of its fields, when decodeRequest has them
	pend  pending               // the contents of req not decoded yet (Decider.oldContent, newContent)
	// newBytes and newChars are the length of the new content when sized (Decider.newSize)
	newBytes, newChars int
	sized              bool
	decoded            any
	err                error
	done               bool
	fields             map[string]any // the fields conditions that read only fields need (see condition)
	warned             []*Rule        // rules warned about a failed when (once each per prompt)
}

func (e *event) value() (any, error) {
	if !e.done {
		e.done = true
		// The values gojq's own command line would see (numbers as json.Number), decoded
		// in one pass over a line known to be valid.
		if !e.valid && !jsonscan.Scan(e.raw).Valid {
			e.err = json.Unmarshal(e.raw, &e.decoded)
		} else {
			var d jsonscan.Decoder
			e.decoded = d.Decode(e.raw)
		}
	}
	return e.decoded, e.err
}

// input is what condition c runs on: the fields it reads when it reads only fields (the
// prompt is then known to be valid JSON: it was decoded), else the whole decoded event.
func (e *event) input(p *Policy, c *condition) (any, error) {
	if c.whole {
		return e.value()
	}
	if e.fields == nil {
		if e.done {
			if m, ok := e.decoded.(map[string]any); ok && e.err == nil {
				return m, nil // decoded whole already: a superset of the fields
			}
		}
		keys := p.whenKeys[e.kind]
		if e.fl != nil {
			e.fields = e.fl.values(keys, e.req, e.pend)
		}
		if e.fields == nil {
			known := func(name string) (string, bool) { return requestField(e.req, name, e.pend) }
			e.fields = topFields(e.raw, keys, known)
		}
	}
	return e.fields, nil
}

// whenTimeout and whenSteps bound the when conditions of one prompt together, in time and in
// steps of the jq interpreter: a condition still running when either is reached fails (which
// counts as a match for deny and ask rules, as none for allow rules, with a warning). The
// steps make the bound the same on a fast machine and a loaded one; the time is a backstop
// for a step that takes long (a regular expression over a large file).
var (
	whenTimeout = 2 * time.Second
	whenSteps   = 10_000_000
)

// whenTrue evaluates a rule's condition over the event. A condition that fails (a run-time
// error, or past its time) fails closed: a deny or ask rule matches, an allow rule does not,
// with a warning (and whenFailed says why, for the decision's reason). Each distinct
// condition runs once per prompt (Decider.whenSeen).
func (d *Decider) whenTrue(ev *event, r *Rule) bool {
	if r.When == nil {
		return true
	}
	c := r.cond
	if d.whenSeen[c.id] != d.gen {
		res, err := d.runCond(ev, c)
		d.whenSeen[c.id], d.whenVal[c.id], d.whenErr[c.id] = d.gen, res, err
	}
	if err := d.whenErr[c.id]; err != nil {
		d.warnWhen(ev, r, err)
		return r.Decision != Allow
	}
	return d.whenVal[c.id]
}

// whenFailed is the error of rule r's condition on the prompt being decided (nil when it
// has none, or it did not fail).
func (d *Decider) whenFailed(r *Rule) error {
	if r.cond == nil || d.whenSeen[r.cond.id] != d.gen {
		return nil
	}
	return d.whenErr[r.cond.id]
}

// whenReason is the reason of a decision by rule r, or of its default when r is an allow rule
// held back: what its failed condition did ("" when it did not fail).
func (d *Decider) whenReason(r *Rule) string {
	err := d.whenFailed(r)
	if err == nil {
		return ""
	}
	if r.Decision == Allow {
		return fmt.Sprintf("rule %q would allow it, but its when condition failed (%v), which an allow rule takes as no match", r.Name, err)
	}
	what := "a deny rule"
	if r.Decision == Ask {
		what = "an ask rule"
	}
	return fmt.Sprintf("its when condition failed (%v), which %s takes as a match", err, what)
}

func (d *Decider) warnWhen(ev *event, r *Rule, err error) {
	for _, w := range ev.warned {
		if w == r {
			return
		}
	}
	ev.warned = append(ev.warned, r)
	what := "matches (a failed condition counts as a match for deny and ask rules)"
	if r.Decision == Allow {
		what = "does not allow (a failed condition counts as no match for allow rules)"
	}
	d.warn("rule %q: when %q: %v; the rule %s", r.Name, r.WhenSrc, err, what)
}

// runCond runs a condition; err is the error it gave (whenTrue then fails closed).
func (d *Decider) runCond(ev *event, c *condition) (bool, error) {
	if c.fast != nil && ev.fields == nil && ev.fl != nil {
		// the one field it reads, without building the map jq needs
		if res, ok := d.fastPending(ev, c.fast); ok {
			return res, nil
		}
		if c.fast.key == "newContent" {
			d.newContent(ev.req) // decoded once for every condition that reads it
		}
		if x, ok := ev.fl.value(c.fast.key, ev.req, ev.pend); ok {
			if res, ok := c.fast.evalValue(x); ok {
				return res, nil
			}
		}
	}
	v, err := ev.input(d.P, c)
	if err != nil {
		return false, err
	}
	if c.fast != nil {
		if res, ok := c.fast.eval(v); ok {
			return res, nil
		}
	}
	return d.runCode(v, c.code)
}

func (d *Decider) runCode(v any, code *gojq.Code) (bool, error) {
	it := code.RunWithContext(d.clock.start(), v)
	out, ok := it.Next()
	if !ok {
		return false, nil
	}
	if e, isErr := out.(error); isErr {
		return false, e
	}
	return out != nil && out != false, nil
}

func (d *Decider) runJQ(ev *event, name, src string, code *gojq.Code) bool {
	v, err := ev.value()
	if err != nil {
		return false
	}
	res, err := d.runCode(v, code)
	if err != nil {
		d.warn("rule %q: when %q: %v; the rule does not match", name, src, err)
	}
	return res
}

// begin starts deciding one prompt: the results of conditions of the last one are forgotten.
func (d *Decider) begin(raw []byte) *event {
	d.gen++
	if n := len(d.P.conds); len(d.whenSeen) != n {
		d.whenSeen, d.whenVal, d.whenErr = make([]uint64, n), make([]bool, n), make([]error, n)
	}
	clear(d.whenErr)
	d.evBuf = event{raw: raw}
	d.ev = nil
	d.startBound()
	return &d.evBuf
}

// end finishes a prompt begun with begin. Deferred by decide, it turns a panic while deciding,
// or a decision that ran past the Timeout, into a denial of that prompt alone.
func (d *Decider) end(dec *Decision) {
	d.clock.stop()
	r := recover()
	if r == nil && !d.overdue() {
		return
	}
	var req *wire.ApprovalRequest
	if d.ev != nil {
		req = d.ev.req
	}
	*dec = Decision{Verdict: Deny, Decider: ByError, Reason: d.failure(r) + "; denied", Kind: dec.Kind, Summary: dec.Summary, Request: req}
	if req != nil {
		dec.Kind, dec.Summary = req.Kind, req.Summary()
	}
	if dec.Summary == "" {
		dec.Summary = "approval_request"
	}
}

// Decide decides an approval_request (raw is the whole event).
func (d *Decider) Decide(raw []byte) Decision { return d.decide(raw, scanned{}) }

// DecideLine decides the approval_request l, a line a wire.Reader read: what the reader's scan
// learned of its bytes (that they are valid JSON, ASCII or UTF-8, with a \u escape or none)
// is handed down with the prompt, and not looked for again.
func (d *Decider) DecideLine(l wire.Line) Decision { return d.decide(l.Raw, lineScanned(l)) }

func (d *Decider) decide(raw []byte, sc scanned) (dec Decision) {
	ev := d.begin(raw)
	defer d.end(&dec)
	req, haveFields, pend, err := decodeRequestFields(raw, sc, &d.fl, lazyContents)
	if err != nil {
		kind, _ := wire.TopLevelString(raw, "kind")
		return Decision{Verdict: Deny, Decider: ByMalformed, Reason: err.Error(), Kind: kind,
			Summary: "malformed approval_request"}
	}
	// decoded: the event is valid JSON, which its conditions need not check again
	ev.valid = true
	ev.kind, ev.req, ev.pend = req.Kind, req, pend
	if haveFields {
		ev.fl = &d.fl
	}
	d.ev = ev
	if d.Probe != nil {
		d.Probe(raw)
	}
	if _, ok := d.P.byKind[req.Kind]; !ok {
		ev.kind = ""
	}
	if req.Kind == wire.KindFileWrite && req.Path == "" {
		return Decision{Verdict: Deny, Decider: ByMalformed, Reason: "file_write with an empty path", Kind: req.Kind,
			Summary: req.Summary(), Request: req}
	}
	if req.Kind == wire.KindShellCommand {
		dec = d.decideShell(req, ev)
	} else {
		dec = d.decideOne(req, ev)
	}
	if dec.Verdict == Ask {
		d.oldContent(req) // for the person asked, who sees the change
		d.newContent(req)
	}
	dec.Kind, dec.Summary, dec.Request = req.Kind, req.Summary(), req
	return dec
}

// lazyContents is false in tests that compare deciding with the contents decoded first.
var lazyContents = true

// oldContent returns the file_write's old content, decoding it the first time it is needed:
// most decisions never look at it.
func (d *Decider) oldContent(req *wire.ApprovalRequest) string {
	if ev := d.ev; ev != nil && ev.req == req && ev.pend&oldPending != 0 {
		req.OldContent, _ = jsonscan.Unquote(d.fl.v[fOldContent])
		ev.pend &^= oldPending
	}
	return req.OldContent
}

// better reports whether rule a (verdict va) beats the current best b: stricter, or as strict
// and earlier in the file.
func better(a *Rule, b *Rule) bool {
	if b == nil {
		return true
	}
	if a.Decision != b.Decision {
		return a.Decision > b.Decision
	}
	return a.index < b.index
}

func (d *Decider) decideOne(req *wire.ApprovalRequest, ev *event) Decision {
	known := wire.KnownKind(req.Kind)
	var fw *fileFacts
	if req.Kind == wire.KindFileWrite {
		fw = d.fileFacts(req)
	}
	var best *Rule
	blocked := ""
	rules := d.P.rulesFor(req.Kind)
	if fw != nil {
		rules = d.P.files.candidates(rules, fw)
	}
	for _, r := range rules {
		if best != nil && !better(r, best) {
			continue
		}
		if r.Decision == Allow && r.Kind == "" && !known {
			continue // a wildcard never allows a kind this build does not know
		}
		ok, why := d.matchOne(r, req, fw)
		if !ok {
			if why != "" && blocked == "" {
				blocked = fmt.Sprintf("rule %q would allow it, but %s", r.Name, why)
			}
			continue
		}
		if !d.whenTrue(ev, r) {
			if blocked == "" {
				blocked = d.whenReason(r)
			}
			continue
		}
		if r.Decision == Allow && !d.limitOK(r) {
			if blocked == "" {
				blocked = fmt.Sprintf("rule %q reached its limit (%s)", r.Name, r.Limit)
			}
			continue
		}
		best = r
	}
	if best == nil {
		reason := "no rule matches"
		if !known {
			reason = "unknown approval kind " + fmt.Sprintf("%q", req.Kind) + " and no rule names it"
		}
		if blocked != "" {
			reason = blocked
		}
		return Decision{Verdict: d.P.Default, Decider: ByDefault, Reason: reason}
	}
	dec := Decision{Verdict: best.Decision, Decider: ByRule, Rule: best.Name, Reason: d.whenReason(best)}
	if best.Decision == Allow && best.Limit != nil {
		dec.Charge = []string{best.Name}
	}
	return dec
}

// matchOne matches the typed matcher of a rule against a prompt of a kind other than
// shell_command. why is set when an allow rule matched but was held back by a bound.
func (d *Decider) matchOne(r *Rule, req *wire.ApprovalRequest, fw *fileFacts) (bool, string) {
	switch req.Kind {
	case wire.KindFileWrite:
		return d.matchFile(r, req, fw)
	case wire.KindToolAction:
		if r.Tool == nil {
			return true, ""
		}
		if !r.Tool.Plugin.Match(req.Plugin) || !r.Tool.Action.Match(req.Action) || !r.Tool.Detail.Match(req.Detail) {
			return false, ""
		}
		if r.Decision == Allow {
			if why := detailBar(r.Tool.Detail, req.Detail); why != "" {
				return false, why
			}
		}
		return true, ""
	case wire.KindRouteApproval:
		if r.Route == nil {
			return true, ""
		}
		return r.Route.Source.Match(req.SourceAgent) && r.Route.Target.Match(req.TargetAgent) && r.Route.Keyword.Match(req.Keyword), ""
	}
	return true, "" // an unknown kind: the rule names it (or is a deny/ask wildcard)
}

// matchFile is matchOne for a file_write.
func (d *Decider) matchFile(r *Rule, req *wire.ApprovalRequest, fw *fileFacts) (bool, string) {
	if r.Decision == Allow && !fw.inside {
		if r.File == nil || matchPaths(r.File.Paths, fw, false) {
			return false, "the path " + fw.why
		}
		return false, ""
	}
	if r.Decision == Allow && fw.never != "" {
		if r.File == nil || matchPaths(r.File.Paths, fw, true) {
			return false, "the path " + fw.never
		}
		return false, ""
	}
	if r.File == nil {
		return true, ""
	}
	if !matchPaths(r.File.Paths, fw, r.Decision == Allow) && (r.Decision == Allow || !matchFolded(r.File.pathsFold, fw)) {
		return false, ""
	}
	if r.Decision != Allow {
		// deny and ask rules with bounds match writes beyond them
		return d.fileOver(r.File, req, fw), ""
	}
	if r.File.MaxSize >= 0 && d.newOver(req, r.File.MaxSize) {
		size, _ := d.newSize(req)
		return false, fmt.Sprintf("the new content is %d bytes (max_size %d)", size, r.File.MaxSize)
	}
	if r.File.MaxChangedLines >= 0 {
		if n := fw.changed(d, req, r.File.MaxChangedLines); n > r.File.MaxChangedLines {
			return false, fmt.Sprintf("more than %d lines change (max_changed_lines)", r.File.MaxChangedLines)
		}
	}
	return true, ""
}

// fileOver reports whether a write goes beyond the bounds of a deny or ask rule's file
// matcher (any write, when it sets none).
func (d *Decider) fileOver(m *FileMatcher, req *wire.ApprovalRequest, fw *fileFacts) bool {
	over := m.MaxSize < 0 && m.MaxChangedLines < 0
	if m.MaxSize >= 0 && d.newOver(req, m.MaxSize) {
		over = true
	}
	if m.MaxChangedLines >= 0 && fw.changed(d, req, m.MaxChangedLines) > m.MaxChangedLines {
		over = true
	}
	return over
}

// fileFacts is a file_write path seen every way a glob may look at it.
type fileFacts struct {
	inside bool     // within the root, after resolving symlinks
	why    string   // why not inside
	rel    []string // root-relative forms (lexical and resolved), when inside
	abs    []string // absolute forms (lexical and resolved)
	any    []string // every relative form, even escaping ones (for deny and ask)
	never  string   // why no allow rule may allow the write whatever its globs ("": none)

	nChanged, nLimit int // changedLines result, computed with nLimit (-1: not yet)
}

// changed counts changed lines up to limit, reusing an earlier count when it answers.
func (f *fileFacts) changed(d *Decider, req *wire.ApprovalRequest, limit int) int {
	if f.nLimit >= 0 && (f.nLimit >= limit || f.nChanged <= f.nLimit) {
		return f.nChanged
	}
	f.nChanged, f.nLimit = changedLines(d.oldContent(req), d.newContent(req), limit), limit
	return f.nChanged
}

func (d *Decider) fileFacts(req *wire.ApprovalRequest) *fileFacts {
	f := &fileFacts{nLimit: -1}
	p := req.Path
	if p == "" || strings.ContainsRune(p, 0) {
		f.why = "is empty or invalid"
		return f
	}
	raw := p
	if !filepath.IsAbs(raw) {
		raw = d.root + "/" + raw
	}
	abs := filepath.Clean(raw)
	real := d.resolve(raw)
	f.abs = appendUnique(f.abs, abs, real)
	lexRel, lexIn := within(d.root, abs)
	realRel, realIn := within(d.rootReal, real)
	f.any = appendUnique(f.any, lexRel, realRel)
	f.inside = realIn && (lexIn || filepath.IsAbs(p))
	switch {
	case !lexIn && !filepath.IsAbs(p):
		f.why = fmt.Sprintf("%s escapes the root %s", p, d.root)
		f.inside = false
	case !realIn:
		f.why = fmt.Sprintf("%s resolves to %s, outside the root %s", p, real, d.rootReal)
	}
	if f.inside {
		if lexIn {
			f.rel = append(f.rel, lexRel)
		}
		f.rel = appendUnique(f.rel, realRel)
	}
	f.never = writeNever(p, f.any)
	return f
}

func appendUnique(s []string, vs ...string) []string {
outer:
	for _, v := range vs {
		for _, x := range s {
			if x == v {
				continue outer
			}
		}
		s = append(s, v)
	}
	return s
}

func within(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return p, false
	}
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel), false
	}
	return filepath.ToSlash(rel), rel != "."
}

// resolve returns the path the kernel would reach for the absolute path p: symlinks are
// followed where they are met, so "link/.." is the parent of the link's target, not the
// directory holding the link. Components that do not exist are taken as written.
func resolve(p string) string { return resolveDepth(p, 0) }

func resolveDepth(p string, depth int) string {
	if depth > 40 { // a symlink loop: the kernel gives up too
		return filepath.Clean(p)
	}
	return resolveFrom("/", p, depth)
}

// resolveFrom resolves the path p relative to cur, an absolute path with no symlink in it.
func resolveFrom(cur, p string, depth int) string {
	parts := strings.Split(p, "/")
	for i := 0; i < len(parts); i++ {
		c := parts[i]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if next == "/proc" || next == "/dev/fd" {
			// what /proc/self and /dev/fd name is fr-approve's, not the command's: taken as written
			return filepath.Join(append([]string{next}, parts[i+1:]...)...)
		}
		exists, link, _, ok := lstatName(next) // os.Lstat without its FileInfo
		if !ok || !exists {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...)
		}
		if link {
			target, err := os.Readlink(next)
			if err != nil {
				return filepath.Join(append([]string{next}, parts[i+1:]...)...)
			}
			if !strings.HasPrefix(target, "/") {
				target = cur + "/" + target
			}
			return resolveDepth(target+"/"+strings.Join(parts[i+1:], "/"), depth+1)
		}
		cur = next
	}
	return cur
}

// resolve is resolve(p) for the paths of prompts. The root and the directories above it are
// taken as they were when the Decider was made (rootReal, as the checks against the root
// already do), so a path under the root is resolved from rootReal, and only the components
// below the root are looked at (with Lstat, for every prompt: a symlink made inside the root
// during a run is seen at the next prompt).
func (d *Decider) resolve(p string) string {
	if d.root != "/" && len(p) > len(d.root) && p[len(d.root)] == '/' && p[:len(d.root)] == d.root {
		return resolveFrom(d.rootReal, p[len(d.root)+1:], 0)
	}
	return resolve(p)
}

// matchPaths: for allow (all=true) every relative form must match; otherwise any form.
func matchPaths(globs []string, f *fileFacts, all bool) bool {
	if len(globs) == 0 {
		return true
	}
	one := func(name string, abs bool) bool {
		for _, g := range globs {
			if strings.HasPrefix(g, "/") != abs {
				continue
			}
			if doublestar.MatchUnvalidated(g, name) { // globs are validated when the policy loads
				return true
			}
		}
		return false
	}
	if all {
		if !f.inside || len(f.rel) == 0 {
			return false
		}
		relOK := true
		for _, r := range f.rel {
			if !one(r, false) {
				relOK = false
				break
			}
		}
		if relOK {
			return true
		}
		for _, a := range f.abs {
			if !one(a, true) {
				return false
			}
		}
		return true
	}
	for _, r := range f.any {
		if one(r, false) {
			return true
		}
	}
	for _, a := range f.abs {
		if one(a, true) {
			return true
		}
	}
	return false
}

// changedLines counts added plus removed lines between old and new (a line diff), stopping
// once the count passes limit.
func changedLines(old, new string, limit int) int {
	a, b := splitLines(old), splitLines(new)
	// trim the common prefix and suffix, then Myers' search bounded by limit+1
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return n + m
	}
	max := min(limit+1, n+m)
	if d := textdiff.Search(a, b, max, nil); d >= 0 {
		return d
	}
	return max
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// decideShell decides a shell_command: each simple command is decided on its own, and the
// strictest decides the whole.
func (d *Decider) decideShell(req *wire.ApprovalRequest, ev *event) Decision {
	parts := Analyze(req.Command)
	var out *Decision
	var charge []string
	seen := false
	for i := range parts {
		p := &parts[i]
		d.step(1)
		denied := fastParts && out != nil && out.Verdict == Deny
		if denied && out.Decider == ByRule {
			continue // nothing a later part decides replaces a deny by rule
		}
		// once the command is denied, only a deny rule of a later part can change what it
		// says (a rule before the default): its allow and ask rules, and the paths they
		// would judge, are not tried
		pd := d.decidePart(p, ev, denied)
		if pd == nil {
			continue
		}
		seen = true
		if pd.Verdict == Allow {
			for _, c := range pd.Charge {
				charge = appendUnique(charge, c)
			}
		}
		// the strictest part decides; between equals, the first, and a rule before the default
		if out == nil || pd.Verdict > out.Verdict || (pd.Verdict == out.Verdict && out.Decider == ByDefault && pd.Decider == ByRule) {
			out = pd
		}
	}
	if !seen {
		return Decision{Verdict: d.P.Default, Decider: ByDefault, Reason: "the command runs nothing a rule can judge", Part: strings.TrimSpace(req.Command)}
	}
	if out.Verdict == Allow {
		out.Charge = charge
	}
	return *out
}

// fastParts is false in the test that compares deciding a command with and without skipping
// the rules of later parts that cannot change a denied command's decision.
var fastParts = true

// decidePart returns the decision for one part, or nil for a deny-only part no deny or ask
// rule matches. With denyOnly, only its deny rules are tried.
func (d *Decider) decidePart(p *Part, ev *event, denyOnly bool) *Decision {
	var best *Rule
	blocked := ""
	try := func(r *Rule) {
		d.step(1)
		if denyOnly && r.Decision != Deny {
			return
		}
		if best != nil && !better(r, best) {
			return
		}
		if r.Decision == Allow && p.DenyOnly {
			return
		}
		ok, why := d.matchPart(r, p)
		if !ok {
			if why != "" && blocked == "" {
				blocked = fmt.Sprintf("rule %q would allow it, but it %s", r.Name, why)
			}
			return
		}
		if !d.whenTrue(ev, r) {
			if blocked == "" {
				blocked = d.whenReason(r)
			}
			return
		}
		if r.Decision == Allow && !d.limitOK(r) {
			if blocked == "" {
				blocked = fmt.Sprintf("rule %q reached its limit (%s)", r.Name, r.Limit)
			}
			return
		}
		best = r
	}
	d.P.shell.candidates(p, try)
	if best == nil {
		if p.DenyOnly {
			return nil
		}
		reason := "no rule matches"
		switch {
		case blocked != "":
			reason = blocked
		case p.Flags&(FlagUnparsable|FlagOpaque) != 0:
			reason = "it " + p.Why
		case p.Constructs != 0:
			name, what := p.Constructs.first()
			if never := p.Constructs & neverConstructs; never != 0 {
				name, what = never.first()
			}
			reason = "no rule matches; it uses " + what + " [" + name + "], which only a rule naming it in allow_constructs allows"
		case p.Flags != 0:
			reason = "no rule matches; it " + p.Why
		}
		return &Decision{Verdict: d.P.Default, Decider: ByDefault, Part: p.Text, Reason: reason}
	}
	dec := &Decision{Verdict: best.Decision, Decider: ByRule, Rule: best.Name, Part: p.Text, Reason: d.whenReason(best)}
	if best.Decision == Allow && best.Limit != nil {
		dec.Charge = []string{best.Name}
	}
	return dec
}

// matchPart matches a shell rule against one simple command. Allow rules see only argv[0] as
// written (Name), never a computed word, no flag the rule does not permit and no construct
// it does not name; deny and ask rules also see the base name, and take a computed word as
// matching anything. A rule with paths: inside_root matches, when it allows, only commands
// whose paths are all inside the root, and otherwise only the commands with one outside.
func (d *Decider) matchPart(r *Rule, p *Part) (bool, string) {
	allow := r.Decision == Allow
	sm := r.Shell
	if sm == nil {
		sm = &ShellMatcher{}
	}
	var named uint64 // the words the matching allow pattern spells out (judged as no path)
	if len(sm.Commands) > 0 {
		if len(p.Words) == 0 {
			return false, ""
		}
		var matched *CmdPattern
		for _, c := range sm.Commands {
			ok, steps := c.matchSteps(p, allow)
			d.step(steps)
			if ok {
				matched = c
				break
			}
		}
		if matched == nil {
			return false, ""
		}
		if allow {
			named = matched.literalPrefix()
		}
	}
	if allow {
		if why := riskyUnnamed(sm, p); why != "" {
			return false, why
		}
		if c := p.Constructs &^ sm.Constructs; c != 0 {
			name, what := c.first()
			if never := c & neverConstructs; never != 0 {
				name, what = never.first()
				return false, "uses " + what + " [" + name + "], which no rule can allow"
			}
			return false, "uses " + what + " [" + name + "], which the rule does not name in allow_constructs"
		}
		permit := sm.Permit
		if sm.Constructs&expansionConstructs != 0 {
			permit |= FlagExpansion // the constructs named are the only expansions left
		}
		if p.Flags&^permit != 0 || (p.Flags&FlagUnparsable != 0 && len(sm.Commands) == 0) {
			return false, p.Why
		}
	}
	if sm.InsideRoot || allow && !sm.Anywhere {
		ok, why := d.pathsInside(p, sm, allow, named)
		if allow && !ok {
			return false, why
		}
		if !allow && ok {
			return false, ""
		}
	}
	return true, ""
}

func withinOrSelf(root, p string) (string, bool) {
	if p == root {
		return ".", true
	}
	return within(root, p)
}

func (c *CmdPattern) match(p *Part, allow bool) bool {
	ok, _ := c.matchSteps(p, allow)
	return ok
}

// matchSteps is match, and the steps it took (argvMatch.steps).
func (c *CmdPattern) matchSteps(p *Part, allow bool) (bool, int) {
	if len(p.Words) == 0 {
		return false, 0
	}
	m := argvMatch{c: c, p: p, allow: allow}
	ok, _ := m.from(0, 0, 0)
	return ok, m.steps
}

// riskyUnnamed says which option of programOptions p uses that no pattern of sm matching p
// names and allow_options does not list ("" when there is none).
func riskyUnnamed(sm *ShellMatcher, p *Part) string {
	uses := p.riskyUses()
	if len(uses) == 0 {
		return ""
	}
	spec, _ := specFor(p)
	first := ""
	for _, c := range sm.Commands {
		ok, named := c.matchNamed(p, 0, 0, 0)
		if !ok {
			continue
		}
		if u := unnamedUse(spec, uses, named, sm.Options); u == nil {
			return ""
		} else if first == "" {
			first = riskyWhy(p, u)
		}
	}
	if len(sm.Commands) == 0 {
		if spec == nil {
			return "" // a rule that names no program: the options of one the table does not know are its own
		}
		if u := unnamedUse(spec, uses, 0, sm.Options); u != nil {
			return riskyWhy(p, u)
		}
		return ""
	}
	return first
}

func unnamedUse(spec *progSpec, uses []riskyUse, named uint64, options []string) *riskyUse {
	for i := range uses {
		u := &uses[i]
		if u.at < 64 && named&(1<<u.at) != 0 {
			continue
		}
		if spec.optionAllowed(*u, options) {
			continue
		}
		return u
	}
	return nil
}

func riskyWhy(p *Part, u *riskyUse) string {
	what := "uses " + u.spell
	switch {
	case u.opt == nil && strings.HasSuffix(u.spell, "="):
		what = "sets the variable " + strings.TrimSuffix(u.spell, "=")
	case u.opt == nil && u.spell == "@":
		what = "reads more arguments from " + p.Words[u.at]
	case u.opt == nil && u.kind == riskWrites:
		what = "has the operand " + u.spell
	}
	return fmt.Sprintf("%s (%q), which %s; only a pattern naming that word or allow_options allows it", what, p.Words[u.at], u.kind)
}

// matchNamed matches an allow pattern like match, and also returns the words (bits, the
// first 64) it matched with a word that names them: a literal, or a glob beginning with two
// literal characters (-o*, --output=*).
func (c *CmdPattern) matchNamed(p *Part, pi, wi int, named uint64) (bool, uint64) {
	m := argvMatch{c: c, p: p, allow: true, named: true}
	return m.from(pi, wi, named)
}

func wordMatch(pw *Pattern, p *Part, i int, allow bool) bool {
	if p.dyn(i) {
		return !allow || pw.MatchAll()
	}
	if i == 0 {
		if pw.Match(p.Name) {
			return true
		}
		return !allow && p.Base != p.Name && pw.Match(p.Base)
	}
	return pw.Match(p.Words[i])
}

// shellIndex finds the shell rules worth trying for a command name.
type shellIndex struct {
	byName map[string][]*Rule // rules with a pattern whose first word is that literal
	wild   []*Rule            // rules with no patterns, or a pattern whose first word is not a literal
	all    []*Rule
}

func (p *Policy) index() {
	p.byKind = map[string][]*Rule{}
	named := map[string]bool{}
	for _, r := range p.Rules {
		if r.Kind != "" {
			named[r.Kind] = true
		}
	}
	for _, k := range knownKinds {
		named[k] = true
	}
	for k := range named {
		for _, r := range p.Rules {
			if r.Kind == "" || r.Kind == k {
				p.byKind[k] = append(p.byKind[k], r)
			}
		}
	}
	for _, r := range p.Rules {
		if r.Kind == "" {
			p.byKind[""] = append(p.byKind[""], r)
		}
	}
	p.conditions()
	p.files = newFileIndex(p.byKind[wire.KindFileWrite])
	p.shell = shellIndex{byName: map[string][]*Rule{}}
	for _, r := range p.byKind[wire.KindShellCommand] {
		p.shell.all = append(p.shell.all, r)
		if r.Shell == nil || len(r.Shell.Commands) == 0 {
			p.shell.wild = append(p.shell.wild, r)
			continue
		}
		wild := false
		names := map[string]bool{}
		for _, c := range r.Shell.Commands {
			w := c.Words[0]
			if w == nil || !w.literal {
				wild = true
				break
			}
			names[w.Src] = true
		}
		if wild {
			p.shell.wild = append(p.shell.wild, r)
			continue
		}
		for n := range names {
			p.shell.byName[n] = append(p.shell.byName[n], r)
		}
	}
}

// fileIndex finds the rules worth trying for a file_write. A rule whose path globs all begin
// with a literal directory (or file) name can only match a path that begins with one of
// those names (doublestar matches a literal component as it is written), so it is tried only
// for such paths; the other rules (no globs, or a glob beginning with a wildcard) always.
type fileIndex struct {
	byFirst map[string][]*Rule // "r:NAME" for relative globs, "a:NAME" for absolute ones
	always  []*Rule
	n       int // the rules of file_write
}

func newFileIndex(rules []*Rule) fileIndex {
	x := fileIndex{byFirst: map[string][]*Rule{}, n: len(rules)}
	for _, r := range rules {
		var keys []string
		for _, g := range fileGlobs(r) {
			k, ok := globKey(g)
			if !ok {
				keys = nil
				break
			}
			keys = appendUnique(keys, k)
		}
		if len(keys) == 0 {
			x.always = append(x.always, r)
			continue
		}
		for _, k := range keys {
			x.byFirst[k] = append(x.byFirst[k], r)
		}
	}
	return x
}

func fileGlobs(r *Rule) []string {
	if r.File == nil {
		return nil
	}
	return r.File.Paths
}

// globKey is the index key of a glob, ok=false when its first component is not literal.
func globKey(g string) (string, bool) {
	kind, rest := "r:", g
	if strings.HasPrefix(g, "/") {
		kind, rest = "a:", g[1:]
	}
	first, _, _ := strings.Cut(rest, "/")
	if strings.ContainsAny(first, `*?[{\`) {
		return "", false
	}
	return kind + foldPath(first), true // folded: deny and ask rules also match folded names
}

// pathKey is the index key of one form of a path (relative or absolute).
func pathKey(p string, abs bool) string {
	kind := "r:"
	if abs {
		kind, p = "a:", strings.TrimPrefix(p, "/")
	}
	first, _, _ := strings.Cut(p, "/")
	return kind + foldPath(first)
}

// candidates returns the rules of rules (those of file_write, in file order) that may match
// the write f, in file order: the others match none of its forms.
func (x *fileIndex) candidates(rules []*Rule, f *fileFacts) []*Rule {
	if len(rules) != x.n || len(x.byFirst) == 0 {
		return rules
	}
	out := append([]*Rule(nil), x.always...)
	var seen []string
	add := func(k string) {
		for _, s := range seen {
			if s == k {
				return
			}
		}
		seen = append(seen, k)
		out = append(out, x.byFirst[k]...)
	}
	for _, p := range f.any {
		add(pathKey(p, false))
	}
	for _, p := range f.abs {
		add(pathKey(p, true))
	}
	if len(out) == len(x.always) {
		return out
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	// a rule listed under two keys of the path appears twice
	w := 0
	for _, r := range out {
		if w == 0 || r != out[w-1] {
			out[w] = r
			w++
		}
	}
	return out[:w]
}

// rulesFor lists the rules that apply to a kind, in file order.
func (p *Policy) rulesFor(kind string) []*Rule {
	if rs, ok := p.byKind[kind]; ok {
		return rs
	}
	return p.byKind[""]
}

func (s *shellIndex) candidates(p *Part, try func(*Rule)) {
	if len(p.Words) == 0 || p.dyn(0) {
		for _, r := range s.all {
			try(r)
		}
		return
	}
	for _, r := range s.byName[p.Name] {
		try(r)
	}
	if p.Base != p.Name {
		for _, r := range s.byName[p.Base] {
			try(r)
		}
	}
	for _, r := range s.wild {
		try(r)
	}
}

// QuestionDecision is the outcome for one question.
type QuestionDecision struct {
	Action  string  // "answer", "skip" or "ask"
	Answer  *string // for "answer"
	Decider string  // ByRule, ByDefault or ByMalformed
	Rule    string
	Reason  string
	Q       *wire.Question
}

// AnswerQuestion decides a question event: the first question rule that applies answers it.
func (d *Decider) AnswerQuestion(raw []byte) (qd QuestionDecision) {
	d.startBound()
	defer d.endQuestion(&qd)
	if d.Probe != nil {
		d.Probe(raw)
	}
	var q wire.Question
	if err := json.Unmarshal(raw, &q); err != nil {
		return QuestionDecision{Action: "skip", Decider: ByMalformed, Reason: "malformed question: " + err.Error()}
	}
	if _, ok := wire.TopLevelString(raw, "question"); !ok {
		return QuestionDecision{Action: "skip", Decider: ByMalformed, Reason: "malformed question: no question text", Q: &q}
	}
	ev := &event{raw: raw}
	for _, r := range d.P.Questions {
		if !r.Question.Match(q.Question) {
			continue
		}
		if r.When != nil && !d.runJQ(ev, r.Name, r.WhenSrc, r.When) {
			continue
		}
		switch r.Answer {
		case "skip":
			return QuestionDecision{Action: "skip", Decider: ByRule, Rule: r.Name, Q: &q}
		case "ask":
			return QuestionDecision{Action: "ask", Decider: ByRule, Rule: r.Name, Q: &q}
		case "text":
			if len(q.Options) > 0 && !q.AllowOther && !contains(q.Options, r.Text) {
				continue
			}
			t := r.Text
			return QuestionDecision{Action: "answer", Answer: &t, Decider: ByRule, Rule: r.Name, Q: &q}
		case "option":
			for _, o := range q.Options {
				if r.Option.Match(o) {
					o := o
					return QuestionDecision{Action: "answer", Answer: &o, Decider: ByRule, Rule: r.Name, Q: &q}
				}
			}
		}
	}
	return QuestionDecision{Action: d.P.QuestionDefault, Decider: ByDefault, Reason: "no question rule answers it", Q: &q}
}

// endQuestion is end for AnswerQuestion: a question whose decision panicked or ran past the
// Timeout is skipped (answered null).
func (d *Decider) endQuestion(qd *QuestionDecision) {
	d.clock.stop()
	r := recover()
	if r == nil && !d.overdue() {
		return
	}
	*qd = QuestionDecision{Action: "skip", Decider: ByError, Reason: d.failure(r) + "; skipped", Q: qd.Q}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// NowTime is the Decider's clock.
func (d *Decider) NowTime() time.Time { return d.now() }
