package ls

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"

	"github.com/fuseraft/fr/internal/jsonscan"

	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/itchyny/gojq"

	"github.com/fuseraft/fr/internal/cmdutil"
	jqlang "github.com/fuseraft/fr/internal/jq"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/internal/termsafe"
)

// kv is one top-level field of an item, its value kept as fuseraft wrote it.
type kv struct {
	key string
	raw []byte
}

// record is one thing to print: an item as fuseraft wrote it, or a value --jq made.
type record struct {
	raw    []byte
	fields []kv
	parsed bool
	object bool
}

// splitObject reads the top-level fields of a JSON object in order; ok is false for anything
// that is not an object. raw is valid JSON (ReadEnvelope and gojq made sure), so this only
// finds where things end.
func splitObject(raw []byte) ([]kv, bool) {
	var out []kv
	ok := jsonscan.Members(raw, func(k, v []byte) bool {
		key, ok := jsonString(k)
		out = append(out, kv{key: key, raw: v})
		return ok
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// jsonString decodes a quoted JSON string, quickly when it has no escapes.
func jsonString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

func (r *record) parse() {
	if !r.parsed {
		r.fields, r.object = splitObject(r.raw)
		r.parsed = true
	}
}

func (r *record) keys() []string {
	r.parse()
	k := make([]string, len(r.fields))
	for i, f := range r.fields {
		k[i] = f.key
	}
	return k
}

func (r *record) get(key string) ([]byte, bool) {
	r.parse()
	for _, f := range r.fields {
		if f.key == key {
			return f.raw, true
		}
	}
	return nil, false
}

// value is a field's value, decoded when a column needs it.
type value struct {
	key     string
	raw     []byte
	present bool
	any     any
}

func decodeValue(key string, raw []byte, present bool) value {
	// White space around a value is not part of it (a cell of "0\n" is 0, not two lines).
	raw = bytes.Trim(raw, " \t\r\n")
	v := value{key: key, raw: raw, present: present}
	if !present || len(raw) == 0 {
		return v
	}
	switch raw[0] {
	case '"':
		if str, ok := jsonString(raw); ok {
			v.any = str
			return v
		}
	case 't', 'f', 'n':
		switch string(raw) {
		case "true":
			v.any = true
		case "false":
			v.any = false
		}
		return v
	case '{', '[':
	default:
		v.any = json.Number(raw)
		return v
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	_ = d.Decode(&v.any)
	return v
}

// timeFields are the protocol's timestamps; any other field ending in "At" counts too.
var timeFields = map[string]bool{"timestamp": true, "lastRun": true, "nextRun": true}

func isTimeField(key string) bool {
	return timeFields[key] || (strings.HasSuffix(key, "At") && len(key) > 2)
}

// parseTime reads an ISO 8601 timestamp as .NET writes it (fractions of any length; a missing
// zone is UTC).
func parseTime(s string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// tsvCell is a value as TSV shows it: strings with \t \n \r \\ escaped, RFC 3339 times in UTC,
// null as nothing, arrays and objects as compact JSON. Nothing is cut.
func tsvCell(v value) string {
	switch x := v.any.(type) {
	case nil:
		return ""
	case string:
		if isTimeField(v.key) {
			if t, ok := parseTime(x); ok {
				return t.UTC().Format(time.RFC3339)
			}
		}
		return tsvEscape(x)
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	var b bytes.Buffer
	if json.Compact(&b, v.raw) != nil {
		return tsvEscape(string(v.raw))
	}
	return b.String()
}

var tsvReplacer = strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

func tsvEscape(s string) string { return tsvReplacer.Replace(s) }

// style of a table cell.
type style int

const (
	plain style = iota
	dim
	green
	red
)

// tableCell is a value as a person reads it in a table.
func tableCell(v value, now time.Time) (string, style) {
	switch x := v.any.(type) {
	case nil:
		return "-", dim
	case string:
		if isTimeField(v.key) {
			if t, ok := parseTime(x); ok {
				return relative(t, now), plain
			}
		}
		return termsafe.Line(x), plain
	case json.Number:
		if v.key == "sizeBytes" {
			if n, err := x.Int64(); err == nil {
				return humanSize(n), plain
			}
		}
		return x.String(), plain
	case bool:
		if x {
			return "true", green
		}
		return "false", plain
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			switch e.(type) {
			case map[string]any, []any:
				return fmt.Sprintf("%d items", len(x)), plain
			}
			parts = append(parts, fmt.Sprint(e))
		}
		return termsafe.Line(strings.Join(parts, ", ")), plain
	}
	var b bytes.Buffer
	_ = json.Compact(&b, v.raw)
	return termsafe.Line(b.String()), plain
}

func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// relative says how long ago (or how far ahead) t is, as "3 hours ago" or "in 2 days".
func relative(t, now time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var n int
	var unit string
	switch {
	case d < time.Minute:
		if future {
			return "in under a minute"
		}
		return "just now"
	case d < time.Hour:
		n, unit = int(d/time.Minute), "minute"
	case d < 24*time.Hour:
		n, unit = int(d/time.Hour), "hour"
	case d < 30*24*time.Hour:
		n, unit = int(d/(24*time.Hour)), "day"
	case d < 365*24*time.Hour:
		n, unit = int(d/(30*24*time.Hour)), "month"
	default:
		n, unit = int(d/(365*24*time.Hour)), "year"
	}
	if n != 1 {
		unit += "s"
	}
	if future {
		return fmt.Sprintf("in %d %s", n, unit)
	}
	return fmt.Sprintf("%d %s ago", n, unit)
}

// shortRelative is relative in fewer columns: "2h ago", "in 3d".
func shortRelative(t, now time.Time) string {
	long := relative(t, now)
	switch long {
	case "just now":
		return "now"
	case "in under a minute":
		return "in <1m"
	}
	f := strings.Fields(long) // "3 hours ago" or "in 3 hours"
	if len(f) != 3 {
		return long
	}
	num, unit := f[0], f[1]
	if f[0] == "in" {
		num, unit = f[1], f[2]
	}
	u := map[string]string{"minute": "m", "hour": "h", "day": "d", "month": "mo", "year": "y"}[strings.TrimSuffix(unit, "s")]
	if f[0] == "in" {
		return "in " + num + u
	}
	return num + u + " ago"
}

// printer writes records in one format.
type printer struct {
	format  string
	fields  []string // --fields, nil for the defaults
	res     *resource
	jq      bool
	w       io.Writer
	color   bool
	width   int
	errw    io.Writer // notes for a person (an empty table, ids shortened); nil: none
	now     time.Time
	columns []column // decided at the first record (table, tsv)
	started bool
	count   int
	rows    [][]cellOut // table rows, laid out at the end
	buf     []byte
}

type cellOut struct {
	text  string
	short string // used when text does not fit (relative times: "2h ago")
	style style
}

// fieldsError is an unknown --fields name: a usage error listing the fields there are.
func fieldsError(unknown string, available []string) error {
	return cmdutil.WithHint(cmdutil.Usagef("unknown field %q in --fields", unknown),
		"available fields: "+strings.Join(available, ", "))
}

// begin decides the columns at the first record and checks --fields against it.
func (p *printer) begin(r *record) error {
	p.started = true
	var schema []string
	if p.res != nil && !p.jq {
		schema = p.res.fields
	}
	if p.fields != nil {
		r.parse()
		available := append([]string{}, schema...)
		seen := map[string]bool{}
		for _, f := range schema {
			seen[f] = true
		}
		for _, k := range r.keys() {
			if !seen[k] {
				available = append(available, k)
				seen[k] = true
			}
		}
		for _, f := range p.fields {
			if !seen[f] {
				if !r.object {
					return cmdutil.Usagef("--fields %s: the --jq output is not an object", f)
				}
				return fieldsError(f, available)
			}
		}
		p.columns = cols(p.fields...)
		for i := range p.columns {
			p.columns[i].label = strings.ToUpper(p.fields[i])
		}
	} else if p.format == "table" || p.format == "tsv" {
		p.columns = p.defaultColumns(r)
	}
	switch p.format {
	case "json":
		_, err := io.WriteString(p.w, "[\n")
		return err
	case "tsv":
		h := make([]string, len(p.columns))
		for i, c := range p.columns {
			h[i] = tsvEscape(c.field)
			if c.field == "" { // a --jq output that is not an object: the table's VALUE
				h[i] = "value"
			}
		}
		_, err := io.WriteString(p.w, strings.Join(h, "\t")+"\n")
		return err
	}
	return nil
}

func (p *printer) defaultColumns(r *record) []column {
	res := p.res
	if res == nil && !p.jq {
		res = guess(r.keys())
	}
	if res != nil && !p.jq {
		return res.columns
	}
	r.parse()
	if !r.object || len(r.fields) == 0 {
		return []column{{field: "", label: "VALUE"}}
	}
	var c []column
	for _, k := range r.keys() {
		c = append(c, column{field: k, label: strings.ToUpper(k)})
	}
	return c
}

// value is the value of column c in r (for a --jq output that is not an object, the output).
func (p *printer) value(r *record, c column) value {
	if c.field == "" {
		return decodeValue("", r.raw, true)
	}
	raw, ok := r.get(c.field)
	return decodeValue(c.field, raw, ok)
}

// add prints (or, for a table, keeps) one record.
func (p *printer) add(r *record) error {
	if !p.started {
		if err := p.begin(r); err != nil {
			return err
		}
	}
	p.count++
	switch p.format {
	case "jsonl", "json":
		b := r.raw
		if p.fields != nil {
			b = p.pick(r)
		}
		p.buf = p.buf[:0]
		if p.format == "json" && p.count > 1 {
			p.buf = append(p.buf, ",\n"...)
		}
		if p.format == "jsonl" && p.jq && len(b) > 0 && b[0] == '"' {
			// A string --jq made is printed raw, as gh --jq prints it, so that
			// "while read id" gets the id itself.
			var s string
			if json.Unmarshal(b, &s) == nil {
				b = []byte(s)
			}
		}
		p.buf = append(p.buf, b...)
		if p.format == "jsonl" {
			p.buf = append(p.buf, '\n')
		}
		_, err := p.w.Write(p.buf)
		return err
	case "tsv":
		p.buf = p.buf[:0]
		for i, c := range p.columns {
			if i > 0 {
				p.buf = append(p.buf, '\t')
			}
			p.buf = append(p.buf, tsvCell(p.value(r, c))...)
		}
		p.buf = append(p.buf, '\n')
		_, err := p.w.Write(p.buf)
		return err
	}
	row := make([]cellOut, len(p.columns))
	for i, c := range p.columns {
		v := p.value(r, c)
		if c.fallback != "" && v.any == nil {
			raw, ok := r.get(c.fallback)
			v = decodeValue(c.fallback, raw, ok)
		}
		if c.show != nil && p.fields == nil {
			if s, ok := c.show(v); ok {
				row[i] = cellOut{text: termsafe.Line(s)}
				continue
			}
		}
		t, st := tableCell(v, p.now)
		row[i] = cellOut{text: t, style: st}
		if s, ok := v.any.(string); ok && isTimeField(v.key) {
			if tm, ok := parseTime(s); ok {
				row[i].short = shortRelative(tm, p.now)
			}
		}
	}
	p.rows = append(p.rows, row)
	return nil
}

// pick builds {"a":...,"b":...} from the chosen fields, each value kept as written.
func (p *printer) pick(r *record) []byte {
	b := []byte{'{'}
	for i, f := range p.fields {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(f)
		b = append(b, k...)
		b = append(b, ':')
		if raw, ok := r.get(f); ok {
			b = append(b, raw...)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

// finish ends the output: the closing bracket of json, the laid-out table.
func (p *printer) finish() error {
	switch p.format {
	case "json":
		if !p.started {
			_, err := io.WriteString(p.w, "[]\n")
			return err
		}
		_, err := io.WriteString(p.w, "\n]\n")
		return err
	case "table":
		if !p.started {
			// As gh says "no pull requests match": a person sees that the list is empty,
			// on stderr, so that stdout stays empty for a script.
			if p.errw != nil {
				what := "items"
				if p.res != nil && !p.jq {
					what = strings.ReplaceAll(p.res.name, "-", " ")
				}
				cmdutil.Sayf(p.errw, "fr-ls", "no %s", what)
			}
			return nil
		}
		return p.table()
	}
	return nil
}

const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiDim   = "\x1b[2m"
	ansiGreen = "\x1b[32m"
	ansiRed   = "\x1b[31m"
)

// minShortID is the fewest characters a shortened id keeps (git's default abbreviation).
const minShortID = 8

// isIDColumn reports whether column c holds ids (a session's, a memory's guid).
func isIDColumn(c column) bool {
	return c.label == "ID" || c.field == "guid" || strings.HasSuffix(c.field, "Id") && c.field != "modelId"
}

// shortenIDs shows the ids of column i by the shortest prefix, at least minShortID characters
// and the same length for every row, that tells each apart from every other id listed, as git
// abbreviates commit ids. It reports whether any id was shortened.
func (p *printer) shortenIDs(i int) bool {
	ids := make([]string, 0, len(p.rows))
	longest := 0
	for _, row := range p.rows {
		ids = append(ids, row[i].text)
		longest = max(longest, len(row[i].text))
	}
	k := minShortID
	sorted := append([]string(nil), ids...)
	slices.Sort(sorted)
	for j := 1; j < len(sorted); j++ {
		if sorted[j] == sorted[j-1] {
			continue // the same id twice: no prefix tells them apart
		}
		n := 0
		for n < len(sorted[j]) && n < len(sorted[j-1]) && sorted[j][n] == sorted[j-1][n] {
			n++
		}
		k = max(k, n+1)
	}
	if k >= longest || longest <= 12 {
		return false // nothing to gain from a short id (r-9f304152)
	}
	short := false
	for _, row := range p.rows {
		if t := row[i].text; len(t) > k && utf8.ValidString(t[:k]) {
			row[i].text, short = t[:k], true
		}
	}
	return short
}

// naturalWidths is how wide each column would be uncut, and how narrow it may get before it
// is worth dropping rather than cutting: 10 columns, or its header, or its short form (a time).
func (p *printer) naturalWidths() (natural, floor []int) {
	natural = make([]int, len(p.columns))
	floor = make([]int, len(p.columns))
	for i, c := range p.columns {
		natural[i] = render.StringWidth(c.label)
		floor[i] = natural[i]
	}
	for _, row := range p.rows {
		for i, c := range row {
			w := render.StringWidth(c.text)
			natural[i] = max(natural[i], w)
			if c.short != "" {
				w = render.StringWidth(c.short)
			}
			floor[i] = max(floor[i], min(w, 10))
		}
	}
	for i := range floor {
		floor[i] = min(floor[i], natural[i])
	}
	return natural, floor
}

// fit makes a table of the default columns fit a narrow width before any cell is cut: ids are
// shortened first, then columns are dropped from the last (the least useful: the defaults are
// in order of use) while the rest would be squeezed below their floors. The first two columns
// (an id or a name, and what it is) always stay. Columns chosen with --fields are never
// dropped. It returns what it did, for a note.
func (p *printer) fit() (shortened bool, dropped []string) {
	const gap = 2
	fits := func(ws []int) bool {
		t := gap * (len(ws) - 1)
		for _, w := range ws {
			t += w
		}
		return t <= p.width
	}
	natural, _ := p.naturalWidths()
	if fits(natural) {
		return false, nil
	}
	if len(p.columns) > 0 && isIDColumn(p.columns[0]) {
		shortened = p.shortenIDs(0)
	}
	for p.fields == nil && len(p.columns) > 2 {
		if _, floor := p.naturalWidths(); fits(floor) {
			break
		}
		last := len(p.columns) - 1
		dropped = append([]string{p.columns[last].label}, dropped...)
		p.columns = p.columns[:last]
		for i := range p.rows {
			p.rows[i] = p.rows[i][:last]
		}
	}
	return shortened, dropped
}

// table lays the rows out to fit the width (see fit): columns get their natural width, and
// while the line is too long the widest column gives up a column, down to a floor; cut cells
// end in "…".
func (p *printer) table() error {
	if _, dropped := p.fit(); len(dropped) > 0 && p.errw != nil {
		cmdutil.Sayf(p.errw, "fr-ls", "%s not shown in %d columns; --format tsv shows every column and whole ids",
			strings.Join(dropped, ", "), p.width)
	}
	widths := p.columnWidths()
	var b strings.Builder
	head := make([]cellOut, len(p.columns))
	for i, c := range p.columns {
		head[i] = cellOut{text: c.label}
	}
	p.tableLine(&b, widths, head, true)
	for _, row := range p.rows {
		p.tableLine(&b, widths, row, false)
		if b.Len() > 64<<10 {
			if _, err := io.WriteString(p.w, b.String()); err != nil {
				return err
			}
			b.Reset()
		}
	}
	_, err := io.WriteString(p.w, b.String())
	return err
}

// tableGap is the room between two columns of a table.
const tableGap = 2

// columnWidths decides the width of each column of the table: the natural width of each,
// cut to fit p.width, then the room freed by times shown in their short form given back.
func (p *printer) columnWidths() []int {
	n := len(p.columns)
	widths := make([]int, n)
	for i, c := range p.columns {
		widths[i] = render.StringWidth(c.label)
	}
	for _, row := range p.rows {
		for i, c := range row {
			widths[i] = max(widths[i], render.StringWidth(c.text))
		}
	}
	// Long columns (a task, a path) are cut first, widest first, down to 10 columns; then any
	// but the first down to 4; the first (an id or a name, copied from here) only when that
	// is not enough.
	floors := make([]int, n)
	for i, w := range widths {
		floors[i] = w
		if w > 14 && i > 0 {
			floors[i] = max(10, render.StringWidth(p.columns[i].label))
		}
	}
	shrink(widths, floors, p.width)
	for i := 1; i < n; i++ {
		floors[i] = min(widths[i], 4)
	}
	shrink(widths, floors, p.width)
	floors[0] = min(widths[0], 4)
	shrink(widths, floors, p.width)
	p.giveBackSlack(widths)
	return widths
}

// shrink takes a column from the widest of widths, one at a time, until the line fits
// width or every column is at its floor.
func shrink(widths, floors []int, width int) {
	total := tableGap * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	for over := total - width; over > 0; over-- {
		wide := -1
		for i := range widths {
			if widths[i] > floors[i] && (wide < 0 || widths[i] > widths[wide]) {
				wide = i
			}
		}
		if wide < 0 {
			return
		}
		widths[wide]--
	}
}

// giveBackSlack narrows the columns of times that now show their short form to what they
// use, and gives the room to the columns that were cut the most.
func (p *printer) giveBackSlack(widths []int) {
	n := len(p.columns)
	natural := make([]int, n)
	used := make([]int, n)
	for i, c := range p.columns {
		natural[i] = render.StringWidth(c.label)
		used[i] = min(natural[i], widths[i])
	}
	for _, row := range p.rows {
		for i, c := range row {
			w := render.StringWidth(c.text)
			natural[i] = max(natural[i], w)
			if c.short != "" && w > widths[i] {
				w = render.StringWidth(c.short)
			}
			used[i] = max(used[i], min(w, widths[i]))
		}
	}
	slack := 0
	for i := range widths {
		slack += widths[i] - used[i]
		widths[i] = used[i]
	}
	for ; slack > 0; slack-- {
		best := -1
		for i := range widths {
			if natural[i] > widths[i] && (best < 0 || natural[i]-widths[i] > natural[best]-widths[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		widths[best]++
	}
}

// tableLine writes one line of the table to b: each cell cut to its column (a time in its
// short form when that fits better), padded, coloured by its style.
func (p *printer) tableLine(b *strings.Builder, widths []int, cells []cellOut, header bool) {
	n := len(p.columns)
	for i, c := range cells {
		text := c.text
		if c.short != "" && render.StringWidth(text) > widths[i] {
			text = c.short
		}
		text = cut(text, widths[i])
		pad := ""
		if i < n-1 {
			pad = strings.Repeat(" ", widths[i]-render.StringWidth(text)+tableGap)
		}
		if code := p.cellColor(c.style, header); code != "" {
			b.WriteString(code + text + ansiReset)
		} else {
			b.WriteString(text)
		}
		b.WriteString(pad)
	}
	b.WriteByte('\n')
}

// cellColor is the escape that starts a cell of style, or "" without colour.
func (p *printer) cellColor(st style, header bool) string {
	switch {
	case !p.color:
	case header:
		return ansiBold
	case st == dim:
		return ansiDim
	case st == green:
		return ansiGreen
	case st == red:
		return ansiRed
	}
	return ""
}

// cut shortens s to width columns, ending it with "…" when anything was cut.
func cut(s string, width int) string {
	if render.StringWidth(s) <= width {
		return s
	}
	if width <= 1 {
		return "…"[:min(len("…"), 3*width)]
	}
	w := 0
	for i, r := range s {
		rw := render.StringWidth(string(r))
		if w+rw > width-1 {
			return s[:i] + "…"
		}
		w += rw
	}
	return s
}

// jq runs the --jq program on items.
type jq struct {
	code *gojq.Code
}

// compileJQ compiles expr, reporting a parse error with a caret under the bad token.
func compileJQ(expr string) (*jq, error) {
	_, code, err := jqlang.ParseAndCompile(expr, "")
	if err != nil {
		return nil, cmdutil.Usagef("--jq: %v", err)
	}
	return &jq{code: code}, nil
}

// normalize turns json.Number into the numbers gojq works with.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil && i >= math.MinInt && i <= math.MaxInt {
			return int(i)
		}
		if b, ok := new(big.Int).SetString(x.String(), 10); ok {
			return b
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalize(x[k])
		}
	}
	return v
}

// run calls emit with each output of the program on raw; runtime errors are returned after
// the outputs before them were emitted.
func (j *jq) run(raw []byte, emit func([]byte) error) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return err
	}
	iter := j.code.Run(normalize(v))
	for {
		out, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := out.(error); ok {
			if he, ok := err.(*gojq.HaltError); ok && he.Value() == nil {
				return nil
			}
			return err
		}
		b, err := gojq.Marshal(out)
		if err != nil {
			return err
		}
		if err := emit(b); err != nil {
			return err
		}
	}
}
