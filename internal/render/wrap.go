package render

import "strings"

// What a prompt asks about (the command, the path, the plugin action, the route) is never cut:
// it is wrapped onto as many lines as it needs, each starting with the prompt's bar.

// cell is one rune of a line to wrap, in its style.
type cell struct {
	r rune
	s style
	w int // columns
}

// minWrap is the fewest columns a wrapped line is given for its text, however narrow the
// terminal: below it a line is wider than the terminal, which wraps it again, but nothing is
// lost.
const minWrap = 8

// wrapped prints spans after bar and first on as many lines as they need, never cutting: a line
// breaks at a space where it can, else inside a word that is longer than a line. Every later
// line starts with bar and indent. Spaces where a line breaks are not shown.
func (r *Renderer) wrapped(bar span, first []span, indent string, spans ...span) {
	r.endStream()
	ts := r.stamp()
	base := max(r.width-StringWidth(ts)-StringWidth(bar.text), 1)
	firstAvail := base - restWidth(first)
	if firstAvail < min(minWrap, base) {
		// a narrow terminal: the first line's prefix wraps with the text
		spans = append(append([]span(nil), first...), spans...)
		first, firstAvail = nil, base
	}
	var cells []cell
	for _, s := range spans {
		for _, rn := range s.text {
			cells = append(cells, cell{rn, s.s, runeWidth(rn)})
		}
	}
	laterAvail := max(base-StringWidth(indent), min(minWrap, base))
	if n := base - laterAvail; n < len(indent) {
		indent = indent[:max(n, 0)] // a narrow terminal: less indent
	}
	for line, rg := range breakCells(cells, firstAvail, laterAvail) {
		if line == 0 {
			if ts != "" {
				r.paint(dim, ts)
			}
			r.paint(bar.s, bar.text)
			for _, f := range first {
				r.paint(f.s, f.text)
			}
		} else {
			r.b.WriteString(strings.Repeat(" ", StringWidth(ts)))
			r.paint(bar.s, bar.text)
			r.b.WriteString(indent)
		}
		r.paintCells(cells[rg[0]:rg[1]])
		r.b.WriteByte('\n')
	}
}

// breakCells breaks cells into lines, the first firstAvail columns wide and the others
// laterAvail, never cutting: a line breaks at a space where it can, else inside a word longer
// than a line. It returns each line's range of cells, without the spaces where lines break;
// there is always a first line, empty when cells are.
func breakCells(cells []cell, firstAvail, laterAvail int) [][2]int {
	var lines [][2]int
	for i, line := 0, 0; line == 0 || i < len(cells); line++ {
		avail := firstAvail
		if line > 0 {
			for i < len(cells) && cells[i].r == ' ' {
				i++
			}
			if i == len(cells) {
				break
			}
			avail = laterAvail
		}
		j, w := i, 0
		for j < len(cells) && w+cells[j].w <= avail {
			w += cells[j].w
			j++
		}
		if j == i && j < len(cells) {
			j++ // a character wider than the line
		}
		if j < len(cells) && cells[j].r != ' ' {
			k := j
			for k > i && cells[k-1].r != ' ' {
				k--
			}
			// Break before the word, unless it is longer than a whole line: then it starts
			// here and breaks inside.
			if k > i && wordWidth(cells[k:]) <= laterAvail {
				j = k
			}
		}
		end := j
		for end > i && cells[end-1].r == ' ' && j < len(cells) {
			end--
		}
		lines = append(lines, [2]int{i, end})
		i = j
	}
	return lines
}

// Wrap breaks plain text (one line, no escape sequences) into lines of at most width columns,
// at spaces where it can, as prompts are wrapped: nothing is cut, a word longer than a line
// breaks inside. An empty text is one empty line.
func Wrap(text string, width int) []string {
	width = max(width, 1)
	var cells []cell
	for _, rn := range text {
		cells = append(cells, cell{rn, plain, runeWidth(rn)})
	}
	var out []string
	for _, rg := range breakCells(cells, width, width) {
		var b strings.Builder
		for _, c := range cells[rg[0]:rg[1]] {
			b.WriteRune(c.r)
		}
		out = append(out, b.String())
	}
	return out
}

// paintCells writes cells, one paint a run of the same style.
func (r *Renderer) paintCells(cells []cell) {
	var run strings.Builder
	for k, c := range cells {
		run.WriteRune(c.r)
		if k == len(cells)-1 || cells[k+1].s != c.s {
			r.paint(c.s, run.String())
			run.Reset()
		}
	}
}

// wordWidth is the width of the word cells start with.
func wordWidth(cells []cell) int {
	w := 0
	for _, c := range cells {
		if c.r == ' ' {
			break
		}
		w += c.w
	}
	return w
}

// WrapRows is Wrap kept to at most rows lines: when text needs more, the last one shown ends
// with "…". rows <= 0 keeps every line.
func WrapRows(text string, width, rows int) []string {
	lines := Wrap(text, width)
	if rows <= 0 || len(lines) <= rows {
		return lines
	}
	lines = lines[:rows]
	lines[rows-1] = cutMarked(lines[rows-1], max(width, 1))
	return lines
}
