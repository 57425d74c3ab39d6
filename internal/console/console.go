// Package console is the terminal of a person chatting with fuseraft, the same in fr-attach and
// fr-stream: output scrolls above one input line, where tasks and messages are typed and
// approvals and questions are answered. Console draws and edits the line, Asker keeps the
// prompts waiting for an answer, Terminal puts a real terminal in the mode they need, reads the
// keys, shows a file write's whole diff in a pager, and gives the terminal back as it was.
package console

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/render"
)

// console is the terminal of an interactive fr-attach: output scrolls above one input line,
// which is redrawn (prompt, the text typed so far, the cursor) after every write, so events
// arriving while a person types never mix with what they type.
//
// Output is written a whole line at a time: a line still open (a reply streamed without its
// newline yet) is held until its end, since the input line sits below it.
type Console struct {
	mu  sync.Mutex
	out io.Writer // the terminal

	edit   bool // we echo and edit the input line (else the terminal's cooked mode does)
	width  int
	prompt string // styled
	pw     int    // prompt width in columns
	// promptID is the prompt the input line answers (0: it takes tasks)
	promptID int

	line   []rune
	pos    int // cursor, an index into line
	scroll int // first rune of line shown
	aside  []rune
	drawn  bool // the input line is on the screen
	dirty  bool // the prompt changed since it was drawn
	closed bool

	hist    []string
	histIdx int // len(hist) when not browsing
	histCur []rune

	held []byte // output after its last newline
	dec  keyDecoder

	status      string   // a line above the input line that updates in place ("" none)
	statusRows  []string // status, wrapped to the width
	statusShown int      // rows above the input line on the screen: the open line's, the status's, the subject's

	subject     string   // what the prompt on the input line asks about, right above it ("" none)
	subjectBar  string   // styled, before each of its rows
	subjectRows []string // subject, wrapped to the width (styled)

	paused  bool      // a pager has the terminal: output waits
	pending []pending // output that came while paused

	pageID int           // the prompt whose whole diff page shows
	page   func() string // the whole diff, made when asked for

	holdLines bool   // lines finished with Enter stay off the screen until ReleaseLines
	heldLines []byte // those lines, as they would have been shown
}

// pending is output held while a pager has the terminal.
type pending struct {
	w    io.Writer
	held *[]byte
	p    []byte
}

// maxHeld bounds the open line held back for its newline.
const maxHeld = 64 << 10

// maxOpenRows is how many rows an open line may take to be shown above the input line while
// it grows (a reply being streamed); a longer one shows once it ends.
const maxOpenRows = 4

// openRows is how many rows the open line b takes on a terminal width columns wide: 0 when
// it is empty.
func openRows(b []byte, width int) int {
	if len(b) == 0 {
		return 0
	}
	w := 0
	for s := string(b); s != ""; {
		if s[0] == 0x1b {
			// an escape sequence (the renderer's colours) takes no room
			j := 1
			if len(s) > 1 && s[1] == '[' {
				j = 2
				for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
					j++
				}
				j++
			}
			s = s[min(j, len(s)):]
			continue
		}
		r, n := utf8.DecodeRuneInString(s)
		w += runeCols(r)
		s = s[n:]
	}
	if w == 0 {
		return 1
	}
	return (w + width - 1) / width
}

// Line is a line the person finished with Enter.
type Line struct {
	Text     string
	PromptID int // the prompt shown when it was typed (0: none)
}

func New(out io.Writer, width int, edit bool) *Console {
	return &Console{out: out, width: max(width, 10), edit: edit}
}

// Write prints output above the input line.
func (c *Console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(p), c.writeLocked(c.out, p, &c.held)
}

// stderr returns a writer for diagnostics that keeps the input line below them too.
func (c *Console) Stderr(w io.Writer) io.Writer { return &consoleErr{c: c, w: w} }

type consoleErr struct {
	c    *Console
	w    io.Writer
	held []byte
}

func (e *consoleErr) Write(p []byte) (int, error) {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	return len(p), e.c.writeLocked(e.w, p, &e.held)
}

func (c *Console) writeLocked(w io.Writer, p []byte, held *[]byte) error {
	if c.closed {
		_, err := w.Write(p)
		return err
	}
	if c.paused {
		c.pending = append(c.pending, pending{w, held, append([]byte(nil), p...)})
		return nil
	}
	*held = append(*held, p...)
	i := bytes.LastIndexByte(*held, '\n')
	if i < 0 {
		if len(*held) < maxHeld {
			if w == c.out && c.drawn {
				// The open line is shown above the input line as it grows.
				c.redrawLocked()
			}
			return nil
		}
		// A very long open line goes out as it is, the input line after it.
		*held = append(*held, '\n')
		i = len(*held) - 1
	}
	var b bytes.Buffer
	c.clearTo(&b)
	if w == c.out {
		b.Write((*held)[:i+1])
		*held = append((*held)[:0], (*held)[i+1:]...)
		c.drawTo(&b)
		_, err := c.out.Write(b.Bytes())
		return err
	}
	// another file: clear, write there, redraw
	if _, err := c.out.Write(b.Bytes()); err != nil {
		return err
	}
	_, err := w.Write((*held)[:i+1])
	*held = append((*held)[:0], (*held)[i+1:]...)
	b.Reset()
	c.drawTo(&b)
	c.out.Write(b.Bytes())
	return err
}

// setPrompt puts a new prompt on the input line, drawn with the next output or by settle. A
// prompt with an id (an approval or a question) takes the next line as its answer: what was
// typed so far is set aside, to come back once no prompt is waiting. aside reports whether
// there was such a line.
func (c *Console) SetPrompt(styled string, plainWidth int, id int) (aside bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.prompt == styled && c.promptID == id {
		return false
	}
	switch {
	case id != 0 && c.promptID == 0:
		if len(c.line) > 0 {
			c.aside, aside = c.line, true
		}
		c.line, c.pos, c.scroll = nil, 0, 0
	case id != 0 && id != c.promptID:
		c.line, c.pos, c.scroll = nil, 0, 0
	case id == 0 && c.promptID != 0:
		if len(c.line) == 0 && len(c.aside) > 0 {
			c.line, c.pos = c.aside, len(c.aside)
		}
		c.aside = nil
	}
	c.prompt, c.pw, c.promptID = styled, plainWidth, id
	c.histIdx = len(c.hist)
	c.dirty = true
	return aside
}

// settle draws the input line if it changed and no output has drawn it since.
func (c *Console) Settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirty {
		c.redrawLocked()
	}
}

// setWidth follows a resized terminal.
func (c *Console) SetWidth(w int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.width = max(w, 10)
	c.wrapStatus()
	c.redrawLocked()
}

// cols is the terminal's width.
func (c *Console) Cols() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.width
}

func (c *Console) Redraw() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.redrawLocked()
}

func (c *Console) redrawLocked() {
	if c.closed || c.paused {
		return
	}
	var b bytes.Buffer
	c.clearTo(&b)
	c.drawTo(&b)
	c.out.Write(b.Bytes())
}

// SetStatus shows text on the line above the input line, in place of the status shown
// before; "" takes the status away. Text longer than the terminal is wide wraps at spaces.
// The status is not part of the scrolled output: it stays under it until it changes.
func (c *Console) SetStatus(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if text == c.status {
		return
	}
	var b bytes.Buffer
	c.clearTo(&b)
	c.status = text
	c.wrapStatus()
	if c.closed {
		return
	}
	if c.paused {
		return
	}
	c.drawTo(&b)
	c.out.Write(b.Bytes())
}

// Status is the status shown ("" none).
func (c *Console) Status() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

func (c *Console) wrapStatus() {
	c.statusRows = nil
	if c.status != "" {
		c.statusRows = render.Wrap(c.status, c.width-1)
	}
	c.subjectRows = nil
	if c.subject != "" {
		bw := render.StringWidth(stripSGR(c.subjectBar))
		for _, row := range render.WrapRows(c.subject, c.width-1-bw, maxSubjectRows) {
			c.subjectRows = append(c.subjectRows, c.subjectBar+row)
		}
	}
}

// maxSubjectRows is how many rows the subject of a prompt takes at most, right above it; a
// longer one is cut with "…" (it is shown whole where the prompt was printed).
const maxSubjectRows = 3

// SetSubject restates, right above the input line, what the prompt there asks about (plain
// text, wrapped at spaces to the width, after bar on each row), so that it is in view however
// far what was printed with the prompt scrolled; "" takes it away. It is drawn with the next
// output or by Settle.
func (c *Console) SetSubject(bar, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if text == c.subject && bar == c.subjectBar {
		return
	}
	c.subject, c.subjectBar = text, bar
	c.wrapStatus()
	c.dirty = true
}

// stripSGR drops colour sequences, to measure styled text.
func stripSGR(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// SetPage gives the prompt id a page: what d typed at it shows in a pager (a file write's
// whole diff). page is called when the page is asked for.
func (c *Console) SetPage(id int, page func() string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pageID, c.page = id, page
}

// pageFor is the page of prompt id, or nil.
func (c *Console) pageFor(id int) func() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id == 0 || id != c.pageID {
		return nil
	}
	return c.page
}

// pause takes the input line and the status off the screen and holds output back, while
// another program has the terminal.
func (c *Console) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.paused {
		return
	}
	var b bytes.Buffer
	c.clearTo(&b)
	c.out.Write(b.Bytes())
	c.paused = true
}

// resume writes the output held back and draws the input line again.
func (c *Console) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.paused {
		return
	}
	c.paused = false
	held := c.pending
	c.pending = nil
	for _, p := range held {
		c.writeLocked(p.w, p.p, p.held)
	}
	c.redrawLocked()
}

// HoldLines keeps the lines the person finishes off the screen (the input line is still
// edited there) until ReleaseLines: a chat shows nothing above its header.
func (c *Console) HoldLines() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holdLines = true
}

// ReleaseLines shows the lines held since HoldLines, after the output so far, and lets the
// next ones show as they are finished.
func (c *Console) ReleaseLines() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holdLines = false
	held := c.heldLines
	c.heldLines = nil
	if len(held) > 0 {
		c.writeLocked(c.out, held, &c.held)
	}
}

// close takes the input line off the screen and lets output through as it comes.
func (c *Console) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.paused = false
	for _, p := range c.pending {
		c.writeLocked(p.w, p.p, p.held)
	}
	c.pending = nil
	var b bytes.Buffer
	c.statusRows = nil
	c.clearTo(&b)
	if len(c.held) > 0 {
		b.Write(c.held)
		b.WriteByte('\n')
		c.held = nil
	}
	c.out.Write(b.Bytes())
	c.closed = true
}

func (c *Console) clearTo(b *bytes.Buffer) {
	if c.drawn {
		b.WriteString("\r\x1b[K")
		c.drawn = false
	}
	for ; c.statusShown > 0; c.statusShown-- {
		b.WriteString("\x1b[A\r\x1b[K")
	}
}

// drawTo draws the status, the prompt and the visible part of the line, the cursor in place.
func (c *Console) drawTo(b *bytes.Buffer) {
	c.statusShown = 0
	if rows := openRows(c.held, c.width); rows > 0 && rows <= maxOpenRows {
		b.Write(c.held)
		b.WriteString("\x1b[0m\r\n")
		c.statusShown = rows
	}
	for _, row := range c.statusRows {
		b.WriteString(row)
		b.WriteString("\r\n")
	}
	c.statusShown += len(c.statusRows)
	for _, row := range c.subjectRows {
		b.WriteString(row)
		b.WriteString("\x1b[0m\r\n")
	}
	c.statusShown += len(c.subjectRows)
	b.WriteString(c.prompt)
	c.drawn, c.dirty = true, false
	if !c.edit {
		return
	}
	avail := c.width - c.pw - 1
	if avail < 1 {
		avail = 1
	}
	if c.pos < c.scroll {
		c.scroll = c.pos
	}
	for c.scroll < c.pos && runesWidth(c.line[c.scroll:c.pos]) > avail {
		c.scroll++
	}
	if c.scroll > 0 && runesWidth(c.line) <= avail {
		c.scroll = 0
	}
	w, col := 0, 0
	for i := c.scroll; i < len(c.line); i++ {
		rw := runeCols(c.line[i])
		if w+rw > avail {
			break
		}
		if i == c.pos {
			col = w
		}
		b.WriteRune(c.line[i])
		w += rw
	}
	if c.pos == len(c.line) {
		col = w
	}
	b.WriteString("\x1b[K")
	b.WriteByte('\r')
	if n := c.pw + col; n > 0 {
		fmt.Fprintf(b, "\x1b[%dC", n)
	}
}

func runeCols(r rune) int { return render.StringWidth(string(r)) }

func runesWidth(rs []rune) int {
	w := 0
	for _, r := range rs {
		w += runeCols(r)
	}
	return w
}

// ---- keys ------------------------------------------------------------------------------

type key int

const (
	keyRune key = iota
	keyEnter
	keyBackspace
	keyDelete
	keyLeft
	keyRight
	keyHome
	keyEnd
	keyUp
	keyDown
	keyKillLine  // ^U
	keyKillEnd   // ^K
	keyKillWord  // ^W
	keyEOF       // ^D
	keyRedraw    // ^L
	keyWordLeft  // alt-b
	keyWordRight // alt-f
	keyNone
)

type keyPress struct {
	k key
	r rune
}

// keyDecoder turns the bytes a terminal sends into key presses, keeping an incomplete
// sequence for the next read.
type keyDecoder struct {
	buf     []byte
	afterCR bool
}

func (d *keyDecoder) decode(p []byte) []keyPress {
	d.buf = append(d.buf, p...)
	var keys []keyPress
	for len(d.buf) > 0 {
		kp, n := decodeKey(d.buf)
		if n == 0 {
			break // incomplete
		}
		d.buf = d.buf[n:]
		keys = append(keys, kp)
	}
	// "\r\n" is one Enter
	out := keys[:0]
	for _, kp := range keys {
		if kp.k == keyEnter && kp.r == '\n' && d.afterCR {
			d.afterCR = false
			continue
		}
		d.afterCR = kp.k == keyEnter && kp.r == '\r'
		out = append(out, kp)
	}
	return out
}

// decodeKey decodes the first key of b; n is 0 when b holds only part of one.
func decodeKey(b []byte) (keyPress, int) {
	c := b[0]
	switch c {
	case '\r', '\n':
		return keyPress{k: keyEnter, r: rune(c)}, 1
	case 0x7f, 0x08:
		return keyPress{k: keyBackspace}, 1
	case 0x01:
		return keyPress{k: keyHome}, 1
	case 0x05:
		return keyPress{k: keyEnd}, 1
	case 0x02:
		return keyPress{k: keyLeft}, 1
	case 0x06:
		return keyPress{k: keyRight}, 1
	case 0x10:
		return keyPress{k: keyUp}, 1
	case 0x0e:
		return keyPress{k: keyDown}, 1
	case 0x15:
		return keyPress{k: keyKillLine}, 1
	case 0x0b:
		return keyPress{k: keyKillEnd}, 1
	case 0x17:
		return keyPress{k: keyKillWord}, 1
	case 0x04:
		return keyPress{k: keyEOF}, 1
	case 0x0c:
		return keyPress{k: keyRedraw}, 1
	case '\t':
		return keyPress{k: keyRune, r: ' '}, 1
	case 0x1b:
		return decodeEscape(b)
	}
	if c < 0x20 {
		return keyPress{k: keyNone}, 1
	}
	if !utf8.FullRune(b) {
		return keyPress{}, 0
	}
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError || !unicode.IsPrint(r) {
		return keyPress{k: keyNone}, n
	}
	return keyPress{k: keyRune, r: r}, n
}

func decodeEscape(b []byte) (keyPress, int) {
	if len(b) < 2 {
		return keyPress{}, 0
	}
	switch b[1] {
	case '[':
		// CSI: parameters, then a final byte
		for i := 2; i < len(b); i++ {
			if b[i] >= 0x40 && b[i] <= 0x7e {
				return csiKey(string(b[2:i]), b[i]), i + 1
			}
			if i > 16 {
				return keyPress{k: keyNone}, i + 1
			}
		}
		return keyPress{}, 0
	case 'O':
		if len(b) < 3 {
			return keyPress{}, 0
		}
		return csiKey("", b[2]), 3
	case 'b':
		return keyPress{k: keyWordLeft}, 2
	case 'f':
		return keyPress{k: keyWordRight}, 2
	case 0x7f:
		return keyPress{k: keyKillWord}, 2
	}
	return keyPress{k: keyNone}, 2
}

func csiKey(params string, final byte) keyPress {
	switch final {
	case 'A':
		return keyPress{k: keyUp}
	case 'B':
		return keyPress{k: keyDown}
	case 'C':
		if strings.HasSuffix(params, ";5") || strings.HasSuffix(params, ";3") {
			return keyPress{k: keyWordRight}
		}
		return keyPress{k: keyRight}
	case 'D':
		if strings.HasSuffix(params, ";5") || strings.HasSuffix(params, ";3") {
			return keyPress{k: keyWordLeft}
		}
		return keyPress{k: keyLeft}
	case 'H':
		return keyPress{k: keyHome}
	case 'F':
		return keyPress{k: keyEnd}
	case '~':
		switch params {
		case "1", "7":
			return keyPress{k: keyHome}
		case "4", "8":
			return keyPress{k: keyEnd}
		case "3":
			return keyPress{k: keyDelete}
		}
	}
	return keyPress{k: keyNone}
}

// feed edits the input line with what the person typed and returns the lines they finished;
// eof is true when they pressed Ctrl-D on an empty line.
func (c *Console) Feed(p []byte) (lines []Line, eof bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, kp := range c.dec.decode(p) {
		if c.closed {
			break
		}
		switch kp.k {
		case keyRune:
			c.line = append(c.line[:c.pos], append([]rune{kp.r}, c.line[c.pos:]...)...)
			c.pos++
			if c.drawn && c.pos == len(c.line) && c.scroll == 0 && c.pw+runesWidth(c.line) < c.width-1 {
				// typed at the end of a line that fits: just echo it
				c.out.Write([]byte(string(kp.r)))
				continue
			}
		case keyEnter:
			text := string(c.line)
			lines = append(lines, Line{Text: text, PromptID: c.promptID})
			if c.promptID == 0 && strings.TrimSpace(text) != "" &&
				(len(c.hist) == 0 || c.hist[len(c.hist)-1] != text) {
				c.hist = append(c.hist, text)
			}
			c.histIdx = len(c.hist)
			// Leave what was typed on the screen, as a terminal does.
			var b bytes.Buffer
			c.clearTo(&b)
			if c.holdLines {
				c.heldLines = append(c.heldLines, c.prompt+string(c.line)+"\r\n"...)
			} else {
				b.WriteString(c.prompt)
				b.WriteString(string(c.line))
				b.WriteString("\r\n")
			}
			c.line, c.pos, c.scroll = nil, 0, 0
			if c.promptID == 0 {
				c.drawTo(&b)
			} else {
				// An answer: the prompt that follows is drawn once it is handled.
				c.dirty = true
			}
			c.out.Write(b.Bytes())
			continue
		case keyEOF:
			if len(c.line) == 0 {
				return lines, true
			}
			if c.pos < len(c.line) {
				c.line = append(c.line[:c.pos], c.line[c.pos+1:]...)
			}
		case keyRedraw:
			c.out.Write([]byte("\x1b[H\x1b[2J"))
			c.drawn, c.statusShown = false, 0
		default:
			if !c.editKey(kp.k) {
				continue
			}
		}
		c.redrawLocked()
	}
	return lines, false
}

// editKey moves in or changes the input line for an editing key, and reports whether the line
// is to be drawn again.
func (c *Console) editKey(k key) bool {
	switch k {
	case keyBackspace:
		if c.pos > 0 {
			c.line = append(c.line[:c.pos-1], c.line[c.pos:]...)
			c.pos--
		}
	case keyDelete:
		if c.pos < len(c.line) {
			c.line = append(c.line[:c.pos], c.line[c.pos+1:]...)
		}
	case keyLeft:
		c.pos = max(c.pos-1, 0)
	case keyRight:
		c.pos = min(c.pos+1, len(c.line))
	case keyHome:
		c.pos = 0
	case keyEnd:
		c.pos = len(c.line)
	case keyWordLeft:
		c.pos = wordLeft(c.line, c.pos)
	case keyWordRight:
		c.pos = wordRight(c.line, c.pos)
	case keyKillLine:
		c.line = append([]rune(nil), c.line[c.pos:]...)
		c.pos = 0
	case keyKillEnd:
		c.line = c.line[:c.pos]
	case keyKillWord:
		i := wordLeft(c.line, c.pos)
		c.line = append(c.line[:i], c.line[c.pos:]...)
		c.pos = i
	case keyUp:
		if c.promptID != 0 || c.histIdx == 0 {
			return false
		}
		if c.histIdx == len(c.hist) {
			c.histCur = append([]rune(nil), c.line...)
		}
		c.histIdx--
		c.line = []rune(c.hist[c.histIdx])
		c.pos = len(c.line)
	case keyDown:
		if c.promptID != 0 || c.histIdx >= len(c.hist) {
			return false
		}
		c.histIdx++
		if c.histIdx == len(c.hist) {
			c.line = c.histCur
		} else {
			c.line = []rune(c.hist[c.histIdx])
		}
		c.pos = len(c.line)
	default:
		return false
	}
	return true
}

func wordLeft(line []rune, pos int) int {
	for pos > 0 && unicode.IsSpace(line[pos-1]) {
		pos--
	}
	for pos > 0 && !unicode.IsSpace(line[pos-1]) {
		pos--
	}
	return pos
}

func wordRight(line []rune, pos int) int {
	for pos < len(line) && unicode.IsSpace(line[pos]) {
		pos++
	}
	for pos < len(line) && !unicode.IsSpace(line[pos]) {
		pos++
	}
	return pos
}

// text returns the input line (for tests).
func (c *Console) Text() (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.line), c.pos
}

// Prompt is the input line's prompt (styled) and the prompt id it answers (0: none).
func (c *Console) Prompt() (styled string, id int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.prompt, c.promptID
}
