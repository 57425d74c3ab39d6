// Package screentest runs a command on a real pseudo-terminal and reads what a person would
// see there: a small VT100 screen (the sequences fr's terminals write, and what any pager or
// shell commonly writes), golden screens with -update, for the tests of fr-attach and
// fr-stream on a terminal.
package screentest

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/render"
)

// Screen is a terminal's screen: it takes the bytes written to the terminal and keeps the
// rows they leave, with their colours, and the rows scrolled off the top.
type Screen struct {
	// OutputCR makes a line feed return the carriage too, as a terminal's output processing
	// does (onlcr); a pseudo-terminal's master already reads it so.
	OutputCR bool

	cols, rows int
	lines      [][]cell // the screen
	history    [][]cell // scrolled off the top
	x, y       int
	wrapNext   bool   // the cursor is past the last column: the next rune wraps
	sgr        string // the current graphic rendition ("" plain)
	state      int
	params     []byte
	pending    []byte // an incomplete UTF-8 sequence
}

type cell struct {
	r   rune // 0: empty; -1: the second column of a wide rune
	sgr string
}

const (
	stGround = iota
	stEsc
	stCSI
	stOSC
	stOSCEsc
)

// NewScreen is an empty screen cols wide and rows high.
func NewScreen(cols, rows int) *Screen {
	s := &Screen{cols: cols, rows: rows}
	for range rows {
		s.lines = append(s.lines, make([]cell, cols))
	}
	return s
}

// Write takes bytes written to the terminal.
func (s *Screen) Write(p []byte) (int, error) {
	b := append(s.pending, p...)
	s.pending = nil
	for i := 0; i < len(b); {
		c := b[i]
		switch s.state {
		case stEsc:
			i++
			switch c {
			case '[':
				s.state, s.params = stCSI, s.params[:0]
			case ']':
				s.state = stOSC
			case 'c':
				*s = *NewScreen(s.cols, s.rows)
			default:
				s.state = stGround
			}
			continue
		case stCSI:
			i++
			if c >= 0x40 && c <= 0x7e {
				s.csi(string(s.params), c)
				s.state = stGround
			} else {
				s.params = append(s.params, c)
			}
			continue
		case stOSC, stOSCEsc:
			i++
			switch {
			case c == 0x07 || (s.state == stOSCEsc && c == '\\'):
				s.state = stGround
			case c == 0x1b:
				s.state = stOSCEsc
			default:
				s.state = stOSC
			}
			continue
		}
		if c < 0x20 || c == 0x7f {
			i++
			s.control(c)
			continue
		}
		r, n := decodeRune(b[i:])
		if n == 0 {
			s.pending = append([]byte(nil), b[i:]...)
			break
		}
		i += n
		s.put(r)
	}
	return len(p), nil
}

func decodeRune(b []byte) (rune, int) {
	if !utf8.FullRune(b) {
		return 0, 0
	}
	return utf8.DecodeRune(b)
}

func (s *Screen) control(c byte) {
	switch c {
	case 0x1b:
		s.state = stEsc
	case '\r':
		s.x, s.wrapNext = 0, false
	case '\n', 0x0b, 0x0c:
		if s.OutputCR {
			s.x = 0
		}
		s.lineFeed()
	case '\b':
		if s.x > 0 {
			s.x--
		}
		s.wrapNext = false
	case '\t':
		s.x = min((s.x/8+1)*8, s.cols-1)
	}
}

func (s *Screen) lineFeed() {
	s.wrapNext = false
	if s.y < s.rows-1 {
		s.y++
		return
	}
	s.history = append(s.history, s.lines[0])
	s.lines = append(s.lines[1:], make([]cell, s.cols))
}

func (s *Screen) put(r rune) {
	w := render.StringWidth(string(r))
	if w == 0 {
		return
	}
	if s.wrapNext || s.x+w > s.cols {
		s.x = 0
		s.lineFeed()
	}
	s.lines[s.y][s.x] = cell{r, s.sgr}
	if w == 2 && s.x+1 < s.cols {
		s.lines[s.y][s.x+1] = cell{-1, s.sgr}
	}
	s.x += w
	if s.x >= s.cols {
		s.x, s.wrapNext = s.cols-1, true
	}
}

func (s *Screen) csi(params string, final byte) {
	if strings.HasPrefix(params, "?") {
		return // modes
	}
	args := strings.Split(params, ";")
	n := func(i, def int) int {
		if i >= len(args) || args[i] == "" {
			return def
		}
		v, err := strconv.Atoi(args[i])
		if err != nil {
			return def
		}
		return v
	}
	s.wrapNext = final == 'm' && s.wrapNext
	switch final {
	case 'A':
		s.y = max(s.y-max(n(0, 1), 1), 0)
	case 'B':
		s.y = min(s.y+max(n(0, 1), 1), s.rows-1)
	case 'C':
		s.x = min(s.x+max(n(0, 1), 1), s.cols-1)
	case 'D':
		s.x = max(s.x-max(n(0, 1), 1), 0)
	case 'G':
		s.x = min(max(n(0, 1), 1), s.cols) - 1
	case 'H', 'f':
		s.y = min(max(n(0, 1), 1), s.rows) - 1
		s.x = min(max(n(1, 1), 1), s.cols) - 1
	case 'K':
		row := s.lines[s.y]
		from, to := s.x, s.cols
		switch n(0, 0) {
		case 1:
			from, to = 0, s.x+1
		case 2:
			from = 0
		}
		for i := from; i < to && i < s.cols; i++ {
			row[i] = cell{}
		}
	case 'J':
		switch n(0, 0) {
		case 0:
			s.csi("0", 'K')
			for y := s.y + 1; y < s.rows; y++ {
				s.lines[y] = make([]cell, s.cols)
			}
		case 2, 3:
			for y := range s.lines {
				s.lines[y] = make([]cell, s.cols)
			}
		}
	case 'm':
		s.setSGR(args)
	}
}

// setSGR keeps the rendition as the parameters in effect since the last reset.
func (s *Screen) setSGR(args []string) {
	for _, a := range args {
		if a == "" || a == "0" {
			s.sgr = ""
			continue
		}
		if s.sgr == "" {
			s.sgr = a
		} else {
			s.sgr += ";" + a
		}
	}
}

// Text is the screen as a person reads it: the rows scrolled off, then the screen's, without
// the blank rows at the end or the spaces at the end of a row. With color, a change of
// rendition is shown where it happens as ⟦PARAMS⟧ (⟦⟧ for plain).
func (s *Screen) Text(color bool) string {
	var out []string
	for _, row := range append(append([][]cell(nil), s.history...), s.lines...) {
		out = append(out, rowText(row, color))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n") + "\n"
}

// View is the screen's window alone, as Text shows it: what a person sees without scrolling
// back.
func (s *Screen) View(color bool) string {
	var out []string
	for _, row := range s.lines {
		out = append(out, rowText(row, color))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n") + "\n"
}

func rowText(row []cell, color bool) string {
	var b strings.Builder
	sgr := ""
	end := len(row)
	for end > 0 && (row[end-1].r == 0 || row[end-1].r == ' ') && row[end-1].sgr == "" {
		end--
	}
	for _, c := range row[:end] {
		if color && c.sgr != sgr {
			b.WriteString("⟦" + c.sgr + "⟧")
			sgr = c.sgr
		}
		switch c.r {
		case -1:
		case 0:
			b.WriteByte(' ')
		default:
			b.WriteRune(c.r)
		}
	}
	if color && sgr != "" {
		b.WriteString("⟦⟧")
	}
	return strings.TrimRight(b.String(), " ")
}

// Cursor is the cursor's column and row on the screen.
func (s *Screen) Cursor() (x, y int) { return s.x, s.y }
