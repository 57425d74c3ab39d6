// Package termsafe makes outside text safe to show on a terminal or to write to a log.
//
// Text from outside the toolkit (fuseraft's output, the daemon's messages, files, stdin, a
// policy file, a path, an error that quotes any of them) may carry bytes meant to drive the
// terminal: escape sequences that set the window title, clear the screen or rewrite a line,
// bidirectional controls that make text read differently from what it is, and invisible
// characters that hide text. Every command shows such text through this package, and only
// through it, so that all of them show the same thing the same way:
//
//   - a C0 control (U+0000-U+001F) and DEL show as their Unicode Control Picture: ESC as ␛,
//     BEL as ␇, CR as ␍, NUL as ␀, DEL as ␡, so an escape sequence is shown as text ("␛[2J")
//     and never acted on;
//   - every other character that could drive the terminal or hide text shows as U+FFFD (�):
//     C1 controls (U+0080-U+009F), bidirectional controls (U+061C, U+200E, U+200F,
//     U+202A-U+202E, U+2066-U+2069), zero-width and other format characters (Unicode category
//     Cf: U+200B-U+200D, U+2060, U+FEFF, ...), the line and paragraph separators U+2028 and
//     U+2029, and each byte that is not valid UTF-8 (a raw 0x9B is a C1 CSI to some terminals);
//   - everything else is kept as it is.
//
// Line keeps the result on one line (a newline shows as ␊, a tab becomes a space); Text keeps
// newlines and tabs, which are layout, and turns CRLF line ends into LF.
//
// Data written for programs (JSONL on stdout) is not shown through this package: it stays
// byte-exact.
package termsafe

import (
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Replacement is what a character without a Control Picture is shown as.
const Replacement = '\uFFFD'

// Line returns s safe to show on one terminal line: every control is shown as a visible
// symbol, the newline included (as ␊); a tab becomes a space.
func Line(s string) string { return sanitize(s, false) }

// Text returns s safe to show on a terminal, keeping its newlines and tabs; a CR before a
// newline is dropped (CRLF becomes LF) and shown as ␍ elsewhere.
func Text(s string) string { return sanitize(s, true) }

// Unsafe reports whether r is shown as something else than itself by Text (and so by Line).
func Unsafe(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return r != '\n' && r != '\t'
	case r < 0xa0:
		return r >= 0x80
	case r == utf8.RuneError:
		return false // a U+FFFD that was in the input; invalid bytes are caught by the decoder
	}
	return hidden(r)
}

// hidden reports whether r (U+00A0 and above) reorders or hides text.
func hidden(r rune) bool {
	switch r {
	case 0x061c, 0x200e, 0x200f, 0x2028, 0x2029:
		return true
	}
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || unicode.Is(unicode.Cf, r)
}

func sanitize(s string, keepLayout bool) string {
	if isClean(s, keepLayout) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune(Replacement)
		case r == '\n' || r == '\t':
			switch {
			case keepLayout:
				b.WriteByte(byte(r))
			case r == '\t':
				b.WriteByte(' ')
			default:
				b.WriteRune('␊')
			}
		case keepLayout && r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// CRLF line end: the \n follows.
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('␡')
		case Unsafe(r):
			b.WriteRune(Replacement)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isClean reports whether sanitize would return s unchanged.
func isClean(s string, keepLayout bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			if (c < 0x20 || c == 0x7f) && !(keepLayout && (c == '\n' || c == '\t')) {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || Unsafe(r) {
			return false
		}
		i += size
	}
	return true
}

// Writer shows everything written to it through Text before passing it on to W: a child
// process's stderr, relayed as it comes. A UTF-8 sequence or a CRLF split between two writes
// is held until the next write completes it; Flush writes out what is held.
type Writer struct {
	W    io.Writer
	held []byte
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{W: w} }

// Write sanitizes p and writes it on; it reports len(p) written when W took all of it.
func (w *Writer) Write(p []byte) (int, error) {
	buf := append(w.held, p...)
	keep := incompleteTail(buf)
	out := Text(string(buf[:len(buf)-keep]))
	w.held = append(w.held[:0:0], buf[len(buf)-keep:]...)
	if _, err := io.WriteString(w.W, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes out what an earlier Write held back.
func (w *Writer) Flush() error {
	if len(w.held) == 0 {
		return nil
	}
	out := Text(string(w.held))
	w.held = nil
	_, err := io.WriteString(w.W, out)
	return err
}

// incompleteTail is how many bytes at the end of b may be completed by the next write: a CR
// (which may begin a CRLF) or the start of a UTF-8 sequence cut short.
func incompleteTail(b []byte) int {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return 1
	}
	for k := 1; k <= utf8.UTFMax-1 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}
