package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/internal/textdiff"
)

// DiffOptions configure UnifiedDiff.
type DiffOptions struct {
	Color    bool
	MaxLines int // cut the diff after this many lines with a note; 0 means no limit
	// Width cuts each line to this many columns with "…"; 0 cuts only lines longer than
	// maxDiffLineWidth, so a minified file does not flood the terminal.
	Width int
}

const (
	diffContext = 3
	// maxDiffLineWidth bounds a diff line when no width is given.
	maxDiffLineWidth = 4096
	// diffBudget bounds the work of the Myers search (about one unit a compared line). Beyond it
	// the changed middle is shown as one block removed and added: a correct, bigger diff.
	diffBudget = 20_000_000
	// binarySniff is how much of each side is searched for NUL bytes.
	binarySniff = 8000
)

// maxEditDistance bounds the Myers trace kept for the backtrack (quadratic in it). A variable
// so that tests can drive the anchored fallback with small inputs.
var maxEditDistance = 2000

const (
	sgrReset = "\x1b[0m"
	sgrBold  = "\x1b[1m"
	sgrDim   = "\x1b[2m"
	sgrRed   = "\x1b[31m"
	sgrGreen = "\x1b[32m"
	sgrYel   = "\x1b[33m"
	sgrBlue  = "\x1b[34m"
	sgrMag   = "\x1b[35m"
	sgrCyan  = "\x1b[36m"
)

// UnifiedDiff renders a unified diff of a file write from old to new content: `---`/`+++`
// headers, `@@` hunks with three lines of context, `\ No newline at end of file` where it
// applies. An empty old content is shown as a new file (--- /dev/null). Content with NUL bytes
// is noted as binary instead of shown. Identical contents give the headers and "(no changes)".
// Every line is sanitized, so file contents cannot drive the terminal. The result ends with a
// newline.
func UnifiedDiff(path, old, new string, opts DiffOptions) string {
	s, _, _, _ := unifiedDiff(path, old, new, opts)
	return s
}

// UnifiedDiffCut is UnifiedDiff that also says whether anything was cut (lines past
// MaxLines, or lines cut to the width).
func UnifiedDiffCut(path, old, new string, opts DiffOptions) (diff string, cut bool) {
	s, _, _, cut := unifiedDiff(path, old, new, opts)
	return s, cut
}

// unifiedDiff is UnifiedDiff that also counts the lines added and removed, and says whether
// anything was cut (lines past MaxLines, or lines cut to the width).
func unifiedDiff(path, old, new string, opts DiffOptions) (diff string, added, removed int, cut bool) {
	d := newDiffWriter(opts)
	aName, bName := diffNames(path)
	if old == "" {
		aName = "/dev/null"
	}
	d.line(lineHeader, "--- "+aName)
	d.line(lineHeader, "+++ "+bName)
	switch {
	case old == new:
		d.line(lineNote, "(no changes)")
	case isBinary(old) || isBinary(new):
		d.line(lineNote, fmt.Sprintf("(binary content, %s → %s; not shown)", sizeString(len(old)), sizeString(len(new))))
	default:
		d.showCR = strings.Contains(old, "\r\n") != strings.Contains(new, "\r\n")
		a, b := splitLines(old), splitLines(new)
		runs := diffLines(a, b)
		added, removed = countRuns(runs)
		writeHunks(d, a, b, runs)
	}
	diff = d.finish()
	return diff, added, removed, d.dropped > 0 || d.cutWide
}

func countRuns(runs []run) (added, removed int) {
	for _, r := range runs {
		switch r.op {
		case opDel:
			removed += r.n
		case opIns:
			added += r.n
		}
	}
	return added, removed
}

// DiffStat counts the lines a write adds and removes, as UnifiedDiff would show them. Binary
// content counts as nothing.
func DiffStat(old, new string) (added, removed int) {
	if old == new || isBinary(old) || isBinary(new) {
		return 0, 0
	}
	return countRuns(diffLines(splitLines(old), splitLines(new)))
}

func diffNames(path string) (a, b string) {
	p := termsafe.Line(path)
	if p == "" {
		p = "file"
	}
	if strings.HasPrefix(p, "/") {
		return p, p
	}
	return "a/" + p, "b/" + p
}

func isBinary(s string) bool {
	if len(s) > binarySniff {
		s = s[:binarySniff]
	}
	return strings.IndexByte(s, 0) >= 0
}

// splitLines splits s after each newline; the last line may lack one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

type opKind uint8

const (
	opEq opKind = iota
	opDel
	opIns
)

// run is n consecutive lines with the same op, starting at line a of the old and b of the new
// content.
type run struct {
	op   opKind
	a, b int
	n    int
}

// diffLines returns the edit script from a to b as runs: equal runs, and removals before
// insertions within a change.
func diffLines(a, b []string) []run {
	// Common prefix and suffix are cheap and cover most edits.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var runs []run
	add := func(op opKind, ai, bi, n int) {
		if n == 0 {
			return
		}
		if k := len(runs) - 1; k >= 0 && runs[k].op == op && runs[k].a+runsA(runs[k]) == ai && runs[k].b+runsB(runs[k]) == bi {
			runs[k].n += n
			return
		}
		runs = append(runs, run{op, ai, bi, n})
	}
	add(opEq, 0, 0, pre)
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	ops := editScript(intern(ma, mb))
	// Group each change's removals before its insertions.
	ai, bi := pre, pre
	i := 0
	for i < len(ops) {
		if ops[i] == opEq {
			add(opEq, ai, bi, 1)
			ai++
			bi++
			i++
			continue
		}
		nd, ni := 0, 0
		for ; i < len(ops) && ops[i] != opEq; i++ {
			if ops[i] == opDel {
				nd++
			} else {
				ni++
			}
		}
		add(opDel, ai, bi, nd)
		add(opIns, ai+nd, bi, ni)
		ai += nd
		bi += ni
	}
	add(opEq, len(a)-suf, len(b)-suf, suf)
	return runs
}

func runsA(r run) int {
	if r.op == opIns {
		return 0
	}
	return r.n
}

func runsB(r run) int {
	if r.op == opDel {
		return 0
	}
	return r.n
}

// intern maps lines to small integers so the search compares ints.
func intern(a, b []string) ([]int32, []int32) {
	ids := make(map[string]int32, len(a)+len(b))
	conv := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return conv(a), conv(b)
}

// editScript finds an edit script from a to b: the shortest one when the Myers search fits its
// budget; else one anchored on the lines that occur exactly once on each side (as patience
// diff does), with the gaps between anchors searched again within what is left of the budget,
// and any gap still too costly shown as removed and added.
func editScript(a, b []int32) []opKind {
	budget := diffBudget
	if ops, ok := shortest(a, b, &budget); ok {
		return ops
	}
	budget = diffBudget
	var ops []opKind
	gap := func(a, b []int32) {
		if g, ok := shortest(a, b, &budget); ok {
			ops = append(ops, g...)
			return
		}
		for range a {
			ops = append(ops, opDel)
		}
		for range b {
			ops = append(ops, opIns)
		}
	}
	i0, j0 := 0, 0
	for _, an := range uniqueAnchors(a, b) {
		gap(a[i0:an[0]], b[j0:an[1]])
		ops = append(ops, opEq)
		i0, j0 = an[0]+1, an[1]+1
	}
	gap(a[i0:], b[j0:])
	return ops
}

// uniqueAnchors pairs the lines that occur exactly once in a and once in b, keeping the
// longest run of pairs in the same order on both sides (patience sorting).
func uniqueAnchors(a, b []int32) [][2]int {
	n := int32(0)
	for _, x := range a {
		n = max(n, x+1)
	}
	for _, x := range b {
		n = max(n, x+1)
	}
	countA, countB := make([]int32, n), make([]int32, n)
	posB := make([]int32, n)
	for _, x := range a {
		countA[x]++
	}
	for j, x := range b {
		countB[x]++
		posB[x] = int32(j)
	}
	// Candidates in a's order; find the longest increasing subsequence of their b positions.
	type cand struct{ i, j, prev int }
	var cands []cand
	var tops []int // index in cands of the top card of each pile
	for i, x := range a {
		if countA[x] != 1 || countB[x] != 1 {
			continue
		}
		j := int(posB[x])
		lo, hi := 0, len(tops)
		for lo < hi {
			mid := (lo + hi) / 2
			if cands[tops[mid]].j < j {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		prev := -1
		if lo > 0 {
			prev = tops[lo-1]
		}
		cands = append(cands, cand{i, j, prev})
		if lo == len(tops) {
			tops = append(tops, len(cands)-1)
		} else {
			tops[lo] = len(cands) - 1
		}
	}
	if len(tops) == 0 {
		return nil
	}
	anchors := make([][2]int, len(tops))
	for k, c := len(tops)-1, tops[len(tops)-1]; c >= 0; k, c = k-1, cands[c].prev {
		anchors[k] = [2]int{cands[c].i, cands[c].j}
	}
	return anchors
}

// shortest finds a shortest edit script from a to b (Myers 1986, greedy forward search with the
// trace kept for the backtrack). It gives up (ok false) when the edit distance passes
// maxEditDistance or the work passes what is left of *budget, which it lowers by the work done.
func shortest(a, b []int32, budget *int) (ops []opKind, ok bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		for range n {
			ops = append(ops, opDel)
		}
		for range m {
			ops = append(ops, opIns)
		}
		return ops, true
	}
	maxD := min(n+m, maxEditDistance)
	off := maxD + 1
	var trace [][]int32
	work := 0
	found := textdiff.Search(a, b, maxD, func(d int, v []int, w int) bool {
		work = w
		if work > *budget {
			return false
		}
		row := make([]int32, 2*d+1)
		for i := range row {
			row[i] = int32(v[off-d+i])
		}
		trace = append(trace, row)
		return true
	})
	if work > *budget {
		*budget = 0
		return nil, false
	}
	*budget -= work
	if found < 0 {
		return nil, false
	}
	get := func(d, k int) int { return int(trace[d][k+d]) }
	x, y := n, m
	rev := make([]opKind, 0, n+m)
	for d := found; d > 0; d-- {
		k := x - y
		var pk int
		if k == -d || (k != d && get(d-1, k-1) < get(d-1, k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := get(d-1, pk)
		py := px - pk
		for x > px && y > py {
			rev = append(rev, opEq)
			x--
			y--
		}
		if x == px {
			rev = append(rev, opIns)
		} else {
			rev = append(rev, opDel)
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		rev = append(rev, opEq)
		x--
		y--
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev, true
}

// writeHunks groups the changes into hunks with diffContext lines of context.
func writeHunks(d *diffWriter, a, b []string, runs []run) {
	// Change blocks: indices of non-equal runs, grouped into hunks.
	type block struct{ a0, a1, b0, b1 int }
	var blocks []block
	for _, r := range runs {
		if r.op == opEq {
			continue
		}
		a1, b1 := r.a+runsA(r), r.b+runsB(r)
		if k := len(blocks) - 1; k >= 0 && blocks[k].a1 == r.a && blocks[k].b1 == r.b {
			blocks[k].a1, blocks[k].b1 = a1, b1
			continue
		}
		blocks = append(blocks, block{r.a, a1, r.b, b1})
	}
	for i := 0; i < len(blocks); {
		j := i + 1
		for j < len(blocks) && blocks[j].a0-blocks[j-1].a1 <= 2*diffContext {
			j++
		}
		first, last := blocks[i], blocks[j-1]
		pre := min(diffContext, first.a0)
		post := min(diffContext, len(a)-last.a1)
		a0, a1 := first.a0-pre, last.a1+post
		b0, b1 := first.b0-pre, last.b1+post
		d.line(lineHunk, "@@ -"+hunkRange(a0, a1-a0)+" +"+hunkRange(b0, b1-b0)+" @@")
		ai := a0
		for _, bl := range blocks[i:j] {
			for ; ai < bl.a0; ai++ {
				d.content(lineContext, a[ai])
			}
			for k := bl.a0; k < bl.a1; k++ {
				d.content(lineDel, a[k])
			}
			for k := bl.b0; k < bl.b1; k++ {
				d.content(lineAdd, b[k])
			}
			ai = bl.a1
		}
		for ; ai < a1; ai++ {
			d.content(lineContext, a[ai])
		}
		i = j
	}
}

// hunkRange is GNU diff's form: "start,count", "start" for one line, and for an empty range
// the line before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

type lineKind uint8

const (
	lineHeader lineKind = iota
	lineHunk
	lineContext
	lineDel
	lineAdd
	lineNote
)

// diffWriter collects output lines up to MaxLines and counts the rest.
type diffWriter struct {
	opts    DiffOptions
	b       strings.Builder
	n       int  // lines written
	dropped int  // lines past MaxLines
	cutWide bool // a line was cut to the width
	// showCR shows a CR before the newline (as ␍) instead of hiding it: when only one side
	// has CRLF line ends, that is the change, and it must be visible.
	showCR bool
}

func newDiffWriter(opts DiffOptions) *diffWriter { return &diffWriter{opts: opts} }

func (d *diffWriter) full() bool { return d.opts.MaxLines > 0 && d.n >= d.opts.MaxLines }

// content writes one line of file content with its prefix, and the no-newline marker after a
// last line that lacks one.
func (d *diffWriter) content(kind lineKind, l string) {
	prefix := " "
	switch kind {
	case lineDel:
		prefix = "-"
	case lineAdd:
		prefix = "+"
	}
	text, nl := strings.CutSuffix(l, "\n")
	if nl {
		if !d.showCR {
			text = strings.TrimSuffix(text, "\r")
		}
	}
	if d.full() {
		d.dropped++
		if !nl {
			d.dropped++
		}
		return
	}
	// A huge line (minified code) is cut before it is sanitized; no width needs more than
	// four bytes a column.
	limit := d.width()*4 + 4
	long := len(text) > limit
	if long {
		text = text[:limit]
	}
	d.lineCut(kind, prefix+termsafe.Text(text), long)
	if !nl {
		d.line(lineNote, `\ No newline at end of file`)
	}
}

func (d *diffWriter) width() int {
	if d.opts.Width <= 0 {
		return maxDiffLineWidth
	}
	return d.opts.Width
}

func (d *diffWriter) line(kind lineKind, s string) { d.lineCut(kind, s, false) }

// lineCut writes one line cut to the width; forceCut marks it cut even when what is left fits.
func (d *diffWriter) lineCut(kind lineKind, s string, forceCut bool) {
	if d.full() {
		d.dropped++
		return
	}
	d.n++
	width := d.width()
	if strings.IndexByte(s, '\t') >= 0 {
		s = expandTabs(s)
	}
	n := len(s)
	switch {
	case forceCut:
		s = cutMarked(s, width)
	case kind == lineContext || kind == lineDel || kind == lineAdd || kind == lineHeader && d.opts.Width > 0:
		s = cut(s, width)
	}
	if len(s) != n || forceCut {
		d.cutWide = true
	}
	if !d.opts.Color {
		d.b.WriteString(s)
		d.b.WriteByte('\n')
		return
	}
	var sgr string
	switch kind {
	case lineHeader:
		sgr = sgrBold
	case lineHunk:
		sgr = sgrCyan
	case lineDel:
		sgr = sgrRed
	case lineAdd:
		sgr = sgrGreen
	case lineNote:
		sgr = sgrDim
	}
	if sgr == "" {
		d.b.WriteString(s)
	} else {
		d.b.WriteString(sgr + s + sgrReset)
	}
	d.b.WriteByte('\n')
}

func (d *diffWriter) finish() string {
	if d.dropped > 0 {
		d.opts.MaxLines = 0
		d.line(lineNote, "… "+commas(d.dropped)+" more "+plural(d.dropped, "line", "lines"))
	}
	return d.b.String()
}

// expandTabs turns tabs into spaces at 8-column stops, so cutting to a width is exact.
func expandTabs(s string) string {
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col += runeWidth(r)
	}
	return b.String()
}

// commas formats n with thousands separators: 1234567 → "1,234,567".
// Commas writes n with a comma between each group of three digits (12,345), as every
// rendered view and report shows counts.
func Commas(n int64) string { return commas(n) }

func commas[T ~int | ~int64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// sizeString is a byte count for people: 512 B, 1.5 KiB, 3.2 MiB.
func sizeString(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	case n < 1024*1024*1024:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1024*1024*1024))
}
