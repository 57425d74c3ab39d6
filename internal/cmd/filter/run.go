package filter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/internal/redact"

	"github.com/itchyny/gojq"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/render"
	"github.com/fuseraft/fr/pkg/wire"
)

// runner holds one run of fr-filter over its inputs.
type runner struct {
	s    cmdutil.Streams
	o    *options
	ctx  context.Context
	code *gojq.Code
	vars []any

	w   *wire.Writer
	ren *render.Renderer
	lim *limitsView // --pretty's totals against --max-* (limits.go)
	enc encoder
	fmt *formatter // -C or -a: output is rewritten token by token
	out []byte     // output scratch

	types     map[string]bool // --type
	prefilter []string        // from select(.type == "X" ...)
	identity  bool            // the filter is '.'
	rawLines  bool            // objects passed on unchanged may be written as their bytes

	// input
	files    []string
	fileIdx  int
	rd       *lineReader
	drop     func(raw []byte, esc bool) bool // for the next line read: whether its type drops it
	dropPre  func(raw []byte, esc bool) bool // drop for the main loop (--type and the prefilter)
	dropType func(raw []byte, esc bool) bool // drop for input and inputs (--type)
	direct   bool                            // the main loop may write a long line passed on unchanged in pieces
	inLoop   bool                            // the main loop is reading
	closer   io.Closer
	name     string // "" for standard input
	fname    string // for input_filename: the current input's name, "<stdin>", or "" after the end
	lastName string
	slurped  bool  // -n -s: input has read the slurped input
	events   []any // --stream: events still to hand out
	stream   *gojq.Code
	lineNo   int64
	gen      int64 // counts lines handed to the filter (input/inputs move it)
	dec      jsonscan.Decoder
	// Input that is not one JSON value a line: values cut from such lines wait in queue;
	// lines read ahead for a value that turned out not to be JSON wait in back.
	queue   []piece
	back    []piece
	multi   bool  // the current value spans lines (so its bytes are compacted when passed on)
	stopErr error // a fatal error met while reading (for input/inputs)
	// writeErr is the first failed flush (a closed pipe); writes return theirs directly.
	writeErr error

	// outcome
	noise      int64
	noiseFirst string
	// notText: the line next returned is a prompt whose bytes are not UTF-8 (see passPrompt);
	// promptPassed and promptChanged count what the filter made of it.
	notText                     bool
	promptPassed, promptChanged int
	failed                      bool // a runtime error was reported
	ioFailed                    bool // an input file could not be read
	outputs                     int64
	lastFalsy                   bool
	warnedVer                   bool
	halted                      *gojq.HaltError
}

func run(ctx context.Context, s cmdutil.Streams, o *options) error {
	r := &runner{s: s, o: o, ctx: ctx, files: o.files}
	if err := r.compileQuery(); err != nil {
		return err
	}
	if o.nullInput || o.slurp || o.rawInput || o.stream || o.noSkip {
		r.prefilter, r.identity = nil, false
	}
	r.layout()
	redactor, err := r.openOutput()
	if err != nil {
		return err
	}
	if len(r.files) == 0 {
		r.files = []string{"-"}
	}
	if !o.strict && !o.rawInput && !o.seq {
		r.dropType = r.dropper(nil)
		r.dropPre = r.dropper(r.prefilter)
	}
	r.direct = r.identity && r.rawLines && r.ren == nil && r.fmt == nil && r.enc.indent < 0 &&
		!o.compact && o.indent != 0 && !o.seq

	err = r.loop()
	if err == errHalt {
		err = nil
	}
	err = r.close(err, redactor)
	if wire.IsBrokenPipe(err) || wire.IsBrokenPipe(r.w.Err()) {
		return nil
	}
	if err != nil {
		return err
	}
	r.warnNoise()
	return r.status()
}

// compileQuery reads the filter (from -f FILE, the arguments, or '.') and compiles it with the
// variables and --type.
func (r *runner) compileQuery() error {
	o := r.o
	query, fname := o.query, ""
	if o.queryFile != "" {
		b, err := os.ReadFile(o.queryFile)
		if err != nil {
			return cmdutil.Errorf(exitUsage, "%v", err)
		}
		query, fname = string(b), o.queryFile
	} else if !o.haveQuery {
		query = "."
	}
	code, err := compile(o, query, fname, r)
	if err != nil {
		return err
	}
	r.code = code
	r.vars = append(append([]any{}, o.varValues...), map[string]any{"named": o.named, "positional": o.positional})
	if len(o.types) > 0 {
		r.types = map[string]bool{}
		for _, t := range o.types {
			r.types[t] = true
		}
	}
	return nil
}

// layout decides how values are written: indentation, and whether output is rewritten token
// by token for colour (-C, --color, JQ_COLORS) or -a.
func (r *runner) layout() {
	o, s := r.o, r.s
	switch {
	case o.tab && !o.compact:
		r.enc = encoder{indent: 1, tab: true}
	case o.indent > 0 && !o.compact:
		r.enc = encoder{indent: o.indent}
	default:
		r.enc = encoder{indent: -1}
	}
	r.rawLines = !o.sortKeys
	if o.pretty {
		return
	}
	color := false
	switch o.colorFlag {
	case "always":
		color = true
	case "":
		color = o.color == "always" || o.color == "auto" && cmdutil.UseColor("auto", s.Env, s.OutTerminal)
	}
	if color || o.ascii {
		cols, ok := parseColors(s.Env("JQ_COLORS"))
		if !ok && color {
			cmdutil.Warnf(s.Err, prog, "Failed to set $JQ_COLORS (%q): using the default colours", s.Env("JQ_COLORS"))
		}
		r.fmt = newFormatter(r.enc.indent, r.enc.tab, o.ascii, color, cols)
	}
}

// openOutput sets up the writer over stdout: through the redactor under --redact (returned,
// to be closed), through the renderer under --pretty.
func (r *runner) openOutput() (*redact.LineWriter, error) {
	o, s := r.o, r.s
	out := s.Out
	var redactor *redact.LineWriter
	if o.redact {
		red, err := redact.Configure(o.redactEnv, o.redactPatterns, s.Env,
			func(format string, args ...any) { cmdutil.Warnf(s.Err, prog, format, args...) })
		if err != nil {
			return nil, cmdutil.Errorf(exitUsage, "%v", err)
		}
		// Redaction works on whole lines: the line writer holds a line until its end.
		redactor = redact.NewLineWriter(out, red)
		out = redactor
	}
	r.w = wire.NewWriter(out)
	if o.pretty {
		r.ren = render.New(r.w, render.Options{
			Color:      cmdutil.UseColor(o.color, s.Env, s.OutTerminal),
			Width:      s.Columns(),
			Timestamps: o.timestamps,
			DiffMore:   "the whole new file: fr-filter -r '.newContent // empty'",
		})
		r.lim = newLimitsView(o.limits)
	}
	return redactor, nil
}

// close ends the output (the limits' note, the renderer, the writer, the redactor) and the
// input, and returns err, else the first error met on the way.
func (r *runner) close(err error, redactor *redact.LineWriter) error {
	if e := r.limitNote(true); err == nil {
		err = e
	}
	if r.ren != nil {
		if e := r.ren.Close(); err == nil {
			err = e
		}
	}
	if e := r.w.Flush(); err == nil {
		err = e
	}
	if redactor != nil {
		if e := redactor.Close(); err == nil {
			err = e
		}
	}
	if r.closer != nil {
		r.closer.Close()
	}
	return err
}

// warnNoise says on stderr how many lines were skipped for not being JSON.
func (r *runner) warnNoise() {
	if r.noise == 0 {
		return
	}
	lines := "lines that are"
	if r.noise == 1 {
		lines = "line that is"
	}
	cmdutil.Warnf(r.s.Err, prog, "skipped %d %s %s; the first at %s", r.noise, lines, wire.NotJSON, r.noiseFirst)
}

// status is the exit status of a run that went to its end.
func (r *runner) status() error {
	o := r.o
	switch {
	case r.halted != nil:
		return cmdutil.Exit(r.halted.ExitCode())
	case r.failed:
		return cmdutil.Exit(exitRuntime)
	case r.ioFailed:
		return cmdutil.Exit(exitUsage)
	case o.exitStatus && r.outputs == 0:
		return cmdutil.Exit(exitNoOutput)
	case o.exitStatus && r.lastFalsy:
		return cmdutil.Exit(exitFalsy)
	}
	return nil
}

// where names the current line for messages: "line 12", or "events.jsonl:12".
func (r *runner) where() string {
	if r.name == "" {
		return "line " + strconv.FormatInt(r.lineNo, 10)
	}
	return r.name + ":" + strconv.FormatInt(r.lineNo, 10)
}

// errFatal wraps an error that ends the run.
type errFatal struct{ err error }

func (e *errFatal) Error() string { return e.err.Error() }
func (e *errFatal) Unwrap() error { return e.err }

// readLine returns the next line of the inputs, opening files in turn. io.EOF at the end.
func (r *runner) readLine() ([]byte, error) {
	if len(r.back) > 0 {
		p := r.back[0]
		r.back = r.back[1:]
		r.lineNo = p.line
		return p.b, nil
	}
	for {
		if r.rd == nil {
			if r.fileIdx >= len(r.files) {
				r.fname = ""
				return nil, io.EOF
			}
			name := r.files[r.fileIdx]
			r.fileIdx++
			var src io.Reader = r.s.In
			r.name = ""
			if name != "-" {
				f, err := os.Open(name)
				if err != nil {
					cmdutil.Report(prog, r.s.Err, err)
					r.ioFailed = true
					continue
				}
				src, r.closer, r.name = f, f, name
			} else if len(r.files) > 1 {
				r.name = "<stdin>"
			}
			r.lineNo = 0
			r.fname = r.name
			if name == "-" {
				r.fname = "<stdin>"
			}
			r.lastName = r.fname
			r.rd = newLineReader(src, r.flush, r.o.rawInput)
			if r.o.piece > 0 {
				r.rd.maxBuf = r.o.piece
			}
		}
		line, long, err := r.rd.ReadLine(r.drop)
		if err == nil {
			r.lineNo = r.rd.LineNumber()
			if long != nil {
				if line, err = r.longLine(long); err != nil || line == nil {
					if err != nil {
						return nil, err
					}
					continue
				}
			}
			return line, nil
		}
		if r.closer != nil {
			r.closer.Close()
			r.closer = nil
		}
		r.rd = nil
		if err == io.EOF {
			continue
		}
		where := "standard input"
		if r.name != "" && r.name != "<stdin>" {
			where = r.name
		}
		if wire.IsLineTooLong(err) {
			cmdutil.Report(prog, r.s.Err, fmt.Errorf("%s: %w", where, err))
		} else {
			cmdutil.Report(prog, r.s.Err, fmt.Errorf("reading %s: %w", where, err))
		}
		r.ioFailed = true
	}
}

func (r *runner) flush() {
	if err := r.w.Flush(); err != nil {
		r.writeErr = err
	}
}

// next returns the next input line that is JSON and passes --type, with its jsonscan.Shape. It counts
// and skips the rest, checks protocolVersion, and returns io.EOF at the end or an *errFatal.
//
// pre is a prefilter's type set: lines of other types are dropped too. Lines dropped for their
// type are only looked at as far as finding the type takes (see jsonscan.QuickType), except under
// --strict, which checks every line.
func (r *runner) next(pre []string) ([]byte, jsonscan.Shape, error) {
	for {
		line, err := r.nextLine(pre)
		if err != nil {
			return nil, jsonscan.Shape{}, err
		}
		if r.o.rawInput {
			return line, jsonscan.Shape{}, nil
		}
		if r.lim != nil {
			r.lim.read(line)
		}
		if r.o.seq {
			for len(line) > 0 && line[0] == 0x1e {
				line = line[1:]
			}
		}
		if r.quickDrop(line, pre) {
			continue
		}
		sh := jsonscan.Scan(line)
		keep, err := r.keep(line, &sh, pre)
		if err != nil {
			return nil, sh, err
		}
		if keep {
			return line, sh, nil
		}
	}
}

// nextLine returns the next line to look at: a value cut from the input earlier, else the
// next line read; an *errFatal once a write failed or the run was interrupted.
func (r *runner) nextLine(pre []string) ([]byte, error) {
	if r.writeErr != nil {
		return nil, &errFatal{r.writeErr}
	}
	if err := r.ctx.Err(); err != nil {
		return nil, &errFatal{cmdutil.Errorf(cmdutil.ExitInterrupted, "interrupted")}
	}
	r.multi = false
	r.drop = r.dropType
	if pre != nil {
		r.drop = r.dropPre
	}
	if len(r.queue) > 0 {
		p := r.queue[0]
		r.queue = r.queue[1:]
		r.lineNo, r.multi = p.line, p.multi
		return p.b, nil
	}
	return r.readLine()
}

// quickDrop reports whether line is dropped for its type (--type, the prefilter pre) as far
// as finding the type tells; never under --strict, which checks every line.
func (r *runner) quickDrop(line []byte, pre []string) bool {
	if r.types == nil && pre == nil || r.o.strict {
		return false
	}
	q, sure := jsonscan.QuickType(line)
	return sure && q.Typed && !handshake(&q) &&
		(r.types != nil && !r.typeIn(&q) || pre != nil && !inSet(pre, &q))
}

// keep decides whether the scanned line goes to the filter: lines that are not JSON are
// counted as noise (or cut into values), a prompt that is not UTF-8 is marked, an object's
// protocolVersion is checked, and --type and the prefilter pre are applied.
func (r *runner) keep(line []byte, sh *jsonscan.Shape, pre []string) (bool, error) {
	r.notText = false
	if !sh.Valid {
		if len(trimSpace(line)) == 0 || r.split(line) {
			return false, nil // an empty line is nothing, not noise
		}
		return false, r.skipNoise(line)
	}
	// Bytes that are not UTF-8 are not JSON (RFC 8259 §8.1), but in a prompt, which the
	// main loop passes on unchanged if the filter does (passPrompt), for the command that
	// answers prompts to refuse: a prompt never vanishes here. Only lines kept so far are
	// looked at: those dropped for their type above never are.
	if jsonscan.TextFlags(line)&jsonscan.HighBytes != 0 && !jsonscan.UTF8(line) {
		if !isPrompt(sh) || !r.inLoop {
			if isPrompt(sh) && (r.types == nil || r.typeIn(sh)) {
				cmdutil.Warnf(r.s.Err, prog, "%s: %s; skipped: only a filter run on each line can pass it on unchanged", r.where(), wire.NotTextPrompt(sh.Type()))
			}
			return false, r.skipNoise(line)
		}
		r.notText = true
	}
	if sh.Object {
		if err := r.checkVersion(line, sh); err != nil {
			return false, &errFatal{err}
		}
	}
	if r.types != nil && !(sh.Typed && r.typeIn(sh)) {
		return false, nil
	}
	return pre == nil || !sh.Object || sh.Typed && inSet(pre, sh), nil
}

// skipNoise counts a line that is not JSON (or not UTF-8) and skips it; under --strict it is
// the error that ends the run.
func (r *runner) skipNoise(line []byte) error {
	if r.o.strict {
		return &errFatal{cmdutil.Errorf(exitRuntime, "%s is %s: %s", r.where(), wire.NotJSON, preview(line))}
	}
	if r.noise == 0 {
		r.noiseFirst = r.where()
	}
	r.noise++
	return nil
}

// isPrompt reports whether a line is a prompt: an approval_request or a question.
func isPrompt(sh *jsonscan.Shape) bool {
	return sh.Typed && (sh.TypeIs(wire.TypeApproval) || sh.TypeIs(wire.TypeQuestion))
}

// dropper returns the drop decision for a long line's type (see lineReader), as next makes
// it: --type, then the prefilter pre; ready and hello are never dropped unread.
func (r *runner) dropper(pre []string) func(raw []byte, esc bool) bool {
	if r.types == nil && pre == nil {
		return nil
	}
	return func(raw []byte, esc bool) bool {
		sh := jsonscan.Shape{Valid: true, Object: true, Typed: true, RawType: raw, TypeEsc: esc}
		if handshake(&sh) {
			return false
		}
		return r.types != nil && !r.typeIn(&sh) || pre != nil && !inSet(pre, &sh)
	}
}

// longLine handles a line too long for the read buffer. One dropped for its type is let go
// (and reported when a later "type" key, which counts, makes it a type that is kept: its bytes
// are gone by then). In the main loop of an identity filter, one passed on unchanged is
// written in its pieces. Any other is returned in one piece, for next to read as any line.
// It returns nil for a line it has dealt with.
func (r *runner) longLine(l *longLine) ([]byte, error) {
	if l.dropped {
		if l.flipped {
			cmdutil.Report(prog, r.s.Err, fmt.Errorf("%s: dropped for its type, but a later \"type\" key makes it one that is kept; the line is too long (%d bytes) to hold for that", r.where(), l.n))
			r.failed = true
		}
		return nil, nil
	}
	sh := &l.sh
	if r.inLoop && r.direct && sh.Valid && piecesUTF8(l.chunks) && (sh.Object && sh.Typed && !handshake(sh) || !sh.Object && r.types == nil) &&
		(r.types == nil || r.typeIn(sh)) && (r.prefilter == nil || !sh.Object || inSet(r.prefilter, sh)) {
		if r.o.nullInput || r.o.slurp || r.o.stream {
			return l.bytes(), nil
		}
		r.gen++
		if err := r.emitPieces(l.chunks); err != nil {
			return nil, &errFatal{err}
		}
		r.outputs++
		r.lastFalsy = false
		return nil, nil
	}
	return l.bytes(), nil
}

// emitPieces writes a line given in pieces as emitRaw writes it in one, without the white
// space around it.
func (r *runner) emitPieces(chunks [][]byte) error {
	for len(chunks) > 0 && len(trimSpace(chunks[0])) == 0 {
		chunks = chunks[1:]
	}
	for len(chunks) > 0 && len(trimSpace(chunks[len(chunks)-1])) == 0 {
		chunks = chunks[:len(chunks)-1]
	}
	for i, c := range chunks {
		if i == 0 {
			c = c[len(c)-len(trimLeft(c)):]
		}
		if i == len(chunks)-1 {
			c = c[:len(trimRight(c))]
		}
		if _, err := r.w.Write(c); err != nil {
			return err
		}
	}
	return r.endValue()
}

func trimLeft(b []byte) []byte {
	for len(b) > 0 && jsonscan.IsSpace(b[0]) {
		b = b[1:]
	}
	return b
}

func trimRight(b []byte) []byte {
	for len(b) > 0 && jsonscan.IsSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// piece is a value cut from the input, or a line read ahead, with the number of its (last) line.
type piece struct {
	b     []byte
	line  int64
	multi bool
}

// split reads a line that is not one JSON value as jq reads its input: a sequence of values,
// the last of which may go on over the following lines (pretty-printed JSON). When that works,
// the values are queued and split returns true. When it does not (the line is not JSON, or the
// value it starts is not), split returns false, and the lines read after the first are given
// back to be read again: only the first line is noise, and a JSON line after it is not lost.
func (r *runner) split(first []byte) bool {
	buf := append(make([]byte, 0, len(first)+64), first...)
	lines := []piece{{b: buf, line: r.lineNo}}
	firstNo := r.lineNo
	var vals []piece
	start := 0 // where the value being read started
	for i := r.skipSep(buf, 0); i < len(buf); i = r.skipSep(buf, i) {
		end, ok := jsonscan.ValueEnd(buf, i)
		if ok {
			v := buf[i:end]
			vals = append(vals, piece{b: v, line: lines[len(lines)-1].line, multi: bytes.IndexByte(v, '\n') >= 0})
			i, start = end, end
			continue
		}
		if end < len(buf) {
			// Not JSON: give back the lines after the first.
			r.lineNo = firstNo
			if len(lines) > 1 {
				r.back = append(lines[1:len(lines):len(lines)], r.back...)
			}
			return false
		}
		line, no, more := r.more()
		if !more {
			r.lineNo = firstNo
			if len(lines) > 1 {
				r.back = append(lines[1:len(lines):len(lines)], r.back...)
			}
			return false
		}
		buf = append(buf, '\n')
		off := len(buf)
		buf = append(buf, line...)
		lines = append(lines, piece{b: buf[off:], line: no})
		i = start
	}
	r.queue = append(r.queue, vals...)
	return true
}

// more reads one more line for split, from the lines given back or the current input (not
// the next file: a value does not go on into another file). The bytes are copied by the caller.
func (r *runner) more() ([]byte, int64, bool) {
	if len(r.back) > 0 {
		p := r.back[0]
		r.back = r.back[1:]
		return p.b, p.line, true
	}
	if r.rd == nil {
		return nil, 0, false
	}
	line, long, err := r.rd.ReadLine(nil)
	if err != nil {
		return nil, 0, false
	}
	if long != nil {
		line = long.bytes()
	}
	return line, r.rd.LineNumber(), true
}

// skipSep skips JSON whitespace between values, and the RS that starts each under --seq.
func (r *runner) skipSep(b []byte, i int) int {
	for i < len(b) && (jsonscan.IsSpace(b[i]) || b[i] == 0x1e && r.o.seq) {
		i++
	}
	return i
}

func (r *runner) typeIn(sh *jsonscan.Shape) bool {
	if !sh.TypeEsc {
		return r.types[string(sh.RawType[1:len(sh.RawType)-1])]
	}
	return r.types[sh.Type()]
}

func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && jsonscan.IsSpace(b[i]) {
		i++
	}
	for j > i && jsonscan.IsSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

func preview(b []byte) string {
	const max = 80
	s := string(b)
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strconv.Quote(s)
}

// checkVersion checks protocolVersion where fuseraft sends it: the ready and hello events, and
// a --json envelope (an object with protocolVersion and items, item or error).
func (r *runner) checkVersion(line []byte, sh *jsonscan.Shape) error {
	if sh.Typed && !handshake(sh) || !sh.Typed && !bytes.Contains(line, []byte(`"protocolVersion"`)) {
		return nil // an envelope spells the key plainly; so does every fuseraft line
	}
	m, ok := r.dec.Decode(line).(map[string]any)
	if !ok {
		return nil
	}
	where := "the envelope"
	if sh.Typed {
		where = "the " + sh.Type() + " event"
	} else if _, typ := m["type"]; typ || !(has(m, "items") || has(m, "item") || has(m, "error")) {
		return nil
	}
	n, ok := m["protocolVersion"].(json.Number)
	if !ok {
		return nil
	}
	v, err := strconv.Atoi(string(n))
	if err != nil {
		return nil
	}
	if err := wire.CheckVersion(v, where); err != nil {
		if !r.o.anyVersion {
			return cmdutil.WithHint(cmdutil.Errorf(exitCompile, "%v", err), "pass --any-version to read it anyway")
		}
		if !r.warnedVer {
			r.warnedVer = true
			cmdutil.Warnf(r.s.Err, prog, "%v; going on (--any-version)", err)
		}
	}
	return nil
}

func has(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// Next implements gojq's input iterator: input and inputs read the following values.
func (r *runner) Next() (any, bool) {
	if r.o.nullInput && r.o.slurp {
		// -n -s: input reads the whole input, slurped, once.
		if r.slurped {
			return nil, false
		}
		r.slurped = true
		if r.o.rawInput {
			s, err := r.readRaw()
			if err != nil {
				r.stopErr = err
				return nil, false
			}
			return s, true
		}
		return r.slurpValues(), true
	}
	return r.nextOne()
}

// slurpValues reads every input value that is left, into one array.
func (r *runner) slurpValues() []any {
	all := []any{}
	for {
		v, ok := r.nextOne()
		if !ok {
			return all
		}
		all = append(all, v)
	}
}

// nextOne returns the next input value.
func (r *runner) nextOne() (any, bool) {
	if len(r.events) > 0 {
		v := r.events[0]
		r.events = r.events[1:]
		return v, true
	}
	line, _, err := r.next(nil)
	if err != nil {
		if err != io.EOF {
			r.stopErr = err
		}
		return nil, false
	}
	r.gen++
	if r.o.stream {
		r.events = r.streamEvents(line)
		return r.nextOne()
	}
	return r.value(line), true
}

// value is the input value a line (or a value cut from one) stands for.
func (r *runner) value(line []byte) any {
	if r.o.rawInput {
		return string(line)
	}
	return r.dec.Decode(line)
}

// streamEvents turns a JSON value into the events --stream reads it as ([path, leaf] and
// [path] after a container's last element), in the order of the input, as jq streams it.
func (r *runner) streamEvents(b []byte) []any {
	evs, _ := r.streamValue(b, 0, nil, nil)
	return evs
}

func (r *runner) streamValue(b []byte, i int, path, evs []any) ([]any, int) {
	i = jsonscan.SkipSpace(b, i)
	if i >= len(b) {
		return evs, i
	}
	at := func(more ...any) []any { return append(append(make([]any, 0, len(path)+1), path...), more...) }
	open := b[i]
	if open != '[' && open != '{' {
		end := jsonscan.SkipValue(b, i)
		return append(evs, []any{at(), r.dec.Decode(b[i:end])}), end
	}
	close := byte(']')
	if open == '{' {
		close = '}'
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == close {
		var empty any = []any{}
		if open == '{' {
			empty = map[string]any{}
		}
		return append(evs, []any{at(), empty}), i + 1
	}
	var last any
	for n := 0; i < len(b); n++ {
		last = n
		if open == '{' {
			end := jsonscan.SkipString(b, i)
			k, _ := jsonscan.Unquote(b[i:end])
			last = k
			i = jsonscan.SkipSpace(b, end) + 1 // ':'
		}
		evs, i = r.streamValue(b, i, at(last), evs)
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) || b[i] == close {
			i++
			break
		}
		i = jsonscan.SkipSpace(b, i+1) // ','
	}
	return append(evs, []any{at(last)}), i
}

func (r *runner) loop() error {
	if r.o.nullInput {
		if err := r.eval(nil, nil, nil); err != nil {
			return err
		}
		return r.stopErr
	}
	if r.o.slurp && r.o.rawInput {
		return r.slurpRaw()
	}
	if r.o.slurp {
		all := r.slurpValues()
		if r.stopErr != nil {
			return r.stopErr
		}
		r.fname = r.lastName // as jq and gojq: the last input's name
		return r.eval(all, nil, nil)
	}
	for {
		if r.o.stream {
			v, ok := r.Next()
			if !ok {
				return r.stopErr
			}
			if err := r.eval(v, nil, nil); err != nil {
				return err
			}
			if r.stopErr != nil {
				return r.stopErr
			}
			continue
		}
		if err := r.limitNote(false); err != nil {
			return err
		}
		r.inLoop = true
		line, sh, err := r.next(r.prefilter)
		r.inLoop = false
		if err == io.EOF {
			return r.stopErr
		}
		if err != nil {
			return err
		}
		r.gen++
		if r.notText {
			if err := r.passPrompt(line, &sh); err != nil {
				return err
			}
			continue
		}
		if r.identity && r.rawLines && isContainer(line) {
			if err := r.emitRaw(line, &sh); err != nil {
				return err
			}
			r.outputs++
			r.lastFalsy = false
			continue
		}
		v := r.value(line)
		if r.o.rawInput {
			line = nil
		}
		if err := r.eval(v, line, &sh); err != nil {
			return err
		}
		if r.stopErr != nil {
			return r.stopErr
		}
	}
}

// passPrompt runs the filter on a prompt whose bytes are not UTF-8. Each time the filter
// passes it on as it is (., select(...), --type), it is written unchanged, so that the command
// answering prompts downstream (fr-approve) sees it and refuses it: it still gets exactly one
// answer. Anything else the filter makes of it would be made of text that is not UTF-8, and is
// dropped. Either way a warning says so; under --strict the line then ends the run, as any
// line that is not JSON does.
func (r *runner) passPrompt(line []byte, sh *jsonscan.Shape) error {
	r.promptPassed, r.promptChanged = 0, 0
	err := r.eval(r.value(line), line, sh)
	r.notText = false
	what := ""
	switch {
	case r.promptPassed > 0 && r.promptChanged > 0:
		what = "passed on unchanged, for the command that answers prompts to refuse; what the filter made of it is dropped"
	case r.promptPassed > 0:
		what = "passed on unchanged, for the command that answers prompts to refuse"
	case r.promptChanged > 0:
		what = "what the filter made of it is dropped, not passed on"
	}
	if what != "" {
		cmdutil.Warnf(r.s.Err, prog, "%s: %s; %s", r.where(), wire.NotTextPrompt(sh.Type()), what)
	}
	if err != nil || r.stopErr != nil {
		if err == nil {
			err = r.stopErr
		}
		return err
	}
	if r.o.strict {
		return &errFatal{cmdutil.Errorf(exitRuntime, "%s is %s: %s", r.where(), wire.NotJSON, preview(line))}
	}
	return nil
}

// limitNote shows the totals against the limits under the events rendered, after a turn and
// at the end.
func (r *runner) limitNote(end bool) error {
	if r.lim == nil {
		return nil
	}
	if text, ok := r.lim.note(end); ok {
		return r.ren.Note(text)
	}
	return nil
}

// slurpRaw runs the filter once on the whole input as one string (-R -s).
func (r *runner) slurpRaw() error {
	s, err := r.readRaw()
	if err != nil {
		return err
	}
	return r.eval(s, nil, nil)
}

// readRaw reads the whole input as one string.
func (r *runner) readRaw() (string, error) {
	var all []byte
	for _, name := range r.files {
		var data []byte
		var err error
		if name == "-" {
			data, err = io.ReadAll(r.s.In)
			r.fname = "<stdin>"
		} else {
			data, err = os.ReadFile(name)
			r.fname = name
		}
		if err != nil {
			cmdutil.Report(prog, r.s.Err, err)
			r.ioFailed = true
			continue
		}
		all = append(all, data...)
	}
	return string(all), nil
}

func firstByte(b []byte) byte {
	b = trimSpace(b)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

func isContainer(b []byte) bool {
	c := firstByte(b)
	return c == '{' || c == '['
}

func inSet(set []string, sh *jsonscan.Shape) bool {
	for _, t := range set {
		if sh.TypeIs(t) {
			return true
		}
	}
	return false
}

// eval runs the filter on v; line and sh are v's bytes and jsonscan.Shape when v is a line as read.
func (r *runner) eval(v any, line []byte, sh *jsonscan.Shape) error {
	ctx := r.ctx
	if r.o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.o.timeout)
		defer cancel()
	}
	gen := r.gen
	iter := r.code.RunWithContext(ctx, v, r.vars...)
	for {
		out, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := out.(error); ok {
			return r.evalError(err, ctx)
		}
		if line != nil && (r.rawLines || r.notText) && gen == r.gen && sameValue(out, v) {
			err := r.emitRaw(line, sh)
			if err != nil {
				return err
			}
			if r.notText {
				r.promptPassed++
			}
		} else if r.notText {
			r.promptChanged++
			continue
		} else if err := r.emitValue(out); err != nil {
			var nul *nulError
			if errors.As(err, &nul) {
				return r.evalError(err, ctx)
			}
			return err
		}
		r.outputs++
		r.lastFalsy = out == nil || out == false
	}
}

func (r *runner) evalError(err error, ctx context.Context) error {
	var halt *gojq.HaltError
	if errors.As(err, &halt) {
		if v := halt.Value(); v != nil {
			if s, ok := v.(string); ok {
				io.WriteString(r.s.Err, s)
			} else {
				r.s.Err.Write(append(r.enc.encodeCompact(nil, v), '\n'))
			}
		}
		r.halted = halt
		return errHalt
	}
	if r.ctx.Err() != nil {
		return cmdutil.Errorf(cmdutil.ExitInterrupted, "interrupted")
	}
	if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("evaluation took longer than %s (--timeout)", r.o.timeout)
	}
	msg := err.Error()
	var ve interface{ Value() any }
	if !errors.As(err, &ve) && msg == "break" {
		msg = "no more inputs" // what gojq's input says at the end of the stream
	} else if ve != nil {
		if s, ok := ve.Value().(string); ok {
			msg = s
		} else {
			msg = string(r.enc.encodeCompact(nil, ve.Value())) + " (not a string)"
		}
	}
	if r.lineNo > 0 {
		msg = r.where() + ": " + msg
	}
	cmdutil.Report(prog, r.s.Err, errors.New(msg))
	r.failed = true
	return nil
}

var errHalt = cmdutil.Exit(0)

func (e *encoder) encodeCompact(b []byte, v any) []byte {
	c := encoder{indent: -1}
	return c.encode(b, v)
}

// sameValue reports whether out is in (the same map, or the same array), so that the line in
// was read from can be written instead of an encoding. gojq never changes a value it did not
// make itself, so the same map still holds what was decoded.
func sameValue(out, in any) bool {
	switch iv := in.(type) {
	case map[string]any:
		om, ok := out.(map[string]any)
		return ok && *(*unsafe.Pointer)(unsafe.Pointer(&om)) == *(*unsafe.Pointer)(unsafe.Pointer(&iv))
	case []any:
		oa, ok := out.([]any)
		return ok && len(oa) == len(iv) && len(iv) > 0 && &oa[0] == &iv[0]
	}
	return false
}

// emitRaw writes a line as it was read.
func (r *runner) emitRaw(line []byte, sh *jsonscan.Shape) error {
	line = trimSpace(line)
	if r.ren != nil {
		if sh.Typed {
			return r.ren.Event(wire.Event{Type: sh.Type(), Raw: line})
		}
		return r.w.WriteLine(line)
	}
	if r.o.seq {
		r.w.Write([]byte{0x1e})
	}
	if r.fmt != nil {
		return r.emitFormatted(r.out[:0], line)
	}
	if r.enc.indent >= 0 {
		return r.emitIndented(line)
	}
	if r.multi || r.o.compact || r.o.indent == 0 {
		r.out = appendCompact(r.out[:0], line)
		r.out = r.appendEnd(r.out)
		_, err := r.w.Write(r.out)
		if cap(r.out) > 1<<20 {
			r.out = nil
		}
		return err
	}
	if len(line) > 4096 {
		r.w.Write(line)
		return r.endValue()
	}
	r.out = append(r.out[:0], line...)
	r.out = r.appendEnd(r.out)
	_, err := r.w.Write(r.out)
	return err
}

func (r *runner) appendEnd(b []byte) []byte {
	switch {
	case r.o.raw0:
		return append(b, 0)
	case r.o.join:
		return b
	}
	return append(b, '\n')
}

func (r *runner) endValue() error {
	b := r.appendEnd(r.out[:0])
	if len(b) == 0 {
		return r.w.Err()
	}
	_, err := r.w.Write(b)
	return err
}

// emitFormatted writes the JSON value js after b (an RS or nothing) through the formatter.
func (r *runner) emitFormatted(b, js []byte) error {
	return r.writeEnded(r.fmt.format(b, js))
}

// writeEnded writes b, an output value, with its line end; its buffer is kept for the next
// value unless it grew past 1 MiB.
func (r *runner) writeEnded(b []byte) error {
	b = r.appendEnd(b)
	r.out = b
	_, err := r.w.Write(b)
	if cap(r.out) > 1<<20 {
		r.out = nil
	}
	return err
}

// appendCompact appends the valid JSON b without the whitespace between its tokens; keys keep
// their order and strings their escapes.
func appendCompact(dst, b []byte) []byte {
	start := 0
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			i = jsonscan.SkipString(b, i)
		case jsonscan.IsSpace(c):
			dst = append(dst, b[start:i]...)
			for i < len(b) && jsonscan.IsSpace(b[i]) {
				i++
			}
			start = i
		default:
			i++
		}
	}
	return append(dst, b[start:]...)
}

// emitIndented writes a line as it was read, indented for --tab or --indent as jq indents
// (keys in their order, escapes and numbers as written; {} and [] stay on one line).
func (r *runner) emitIndented(line []byte) error {
	indent := "\t"
	if !r.enc.tab {
		indent = strings.Repeat(" ", r.enc.indent)
	}
	buf := bytes.NewBuffer(r.out[:0])
	if err := json.Indent(buf, line, "", indent); err != nil {
		buf.Reset()
		buf.Write(line) // not reached: the line was scanned as JSON; it is still JSON as it is
	}
	return r.writeEnded(buf.Bytes())
}

// emitValue encodes and writes one output value.
func (r *runner) emitValue(v any) error {
	if r.ren != nil {
		if m, ok := v.(map[string]any); ok {
			if t, ok := m["type"].(string); ok {
				return r.ren.Event(wire.Event{Type: t, Raw: r.enc.encodeCompact(nil, v)})
			}
		}
		return r.w.WriteLine(r.enc.encodeCompact(r.out[:0], v))
	}
	b := r.out[:0]
	if r.o.seq {
		b = append(b, 0x1e)
	}
	if s, ok := v.(string); ok && (r.o.raw || r.o.join || r.o.raw0) {
		if r.o.raw0 && strings.IndexByte(s, 0) >= 0 {
			return &nulError{s}
		}
		if len(s) > 4096 {
			if len(b) > 0 {
				r.w.Write(b)
			}
			r.w.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
			return r.endValue()
		}
		if r.fmt != nil && r.fmt.ascii {
			b = appendASCII(b, appendString(nil, s)) // as jq: -a writes strings quoted, even with -r
		} else {
			b = append(b, s...)
		}
	} else if r.fmt != nil {
		return r.emitFormatted(b, r.enc.encodeCompact(nil, v))
	} else {
		b = r.enc.encode(b, v)
	}
	b = r.appendEnd(b)
	r.out = b
	_, err := r.w.Write(b)
	if cap(r.out) > 1<<20 {
		r.out = nil // don't keep a huge buffer after one huge value
	}
	return err
}

// nulError is a string with a NUL in it, which --raw-output0 cannot write.
type nulError struct{ s string }

func (e *nulError) Error() string {
	return "cannot output a string containing NUL character: " + strconv.Quote(e.s)
}

// gojq functions that need the command's streams.

func (r *runner) environ() []string {
	return os.Environ()
}

func (r *runner) funcDebug(v any, _ []any) any {
	b := append([]byte(`["DEBUG:",`), r.enc.encodeCompact(nil, v)...)
	r.s.Err.Write(append(b, "]\n"...))
	return v
}

func (r *runner) funcStderr(v any, _ []any) any {
	if s, ok := v.(string); ok {
		io.WriteString(r.s.Err, s)
	} else {
		r.s.Err.Write(r.enc.encodeCompact(nil, v))
	}
	return v
}

// funcInputFilename is input_filename as gojq gives it: the file the current input came from,
// "<stdin>" for standard input (null with -n and no files), and null after the last input.
func (r *runner) funcInputFilename(any, []any) any {
	if r.fname == "" || r.o.nullInput && len(r.o.files) == 0 {
		return nil
	}
	return r.fname
}

func (r *runner) funcInputLineNumber(any, []any) any {
	return int(r.lineNo)
}

// handshake reports whether a typed line is a ready or hello event, whose protocolVersion is
// checked.
func handshake(sh *jsonscan.Shape) bool {
	return len(sh.RawType) <= 40 && (sh.TypeIs(wire.TypeReady) || sh.TypeIs(wire.TypeHello))
}
