package render

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// TerminalWidth is the width of the terminal f is, else $COLUMNS, else 80.
func TerminalWidth(f *os.File) int { return Width(f, os.Getenv) }

// Width is the width to render for out: the terminal's width when out is a terminal, else
// $COLUMNS when it holds a positive number, else 80.
func Width(out io.Writer, getenv func(string) string) int {
	if f, ok := out.(interface{ Fd() uintptr }); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if getenv != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && n > 0 {
			return n
		}
	}
	return defaultWidth
}
