package render

import (
	"io"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// OutputOptions are the Options for rendering to s.Out as every command does it: at
// s.Columns() (the terminal's width, else $COLUMNS, else 80), and, when s.Out is a terminal,
// with streamed text wrapped at spaces (WrapStream). color is the caller's decision
// (cmdutil.UseColor); the rest is the caller's to add.
func OutputOptions(s cmdutil.Streams, color bool) Options {
	return Options{Color: color, Width: s.Columns(), WrapStream: s.OutTerminal}
}

// Width is the width to render for out: the terminal's width when out is a terminal, else
// $COLUMNS when it holds a positive number, else 80.
//
// Deprecated: a command's width is cmdutil.Streams.Columns (OutputOptions), the one way
// every command decides it; this is only for a terminal other than stdout's.
func Width(out io.Writer, getenv func(string) string) int {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	s := cmdutil.Streams{Out: out, Getenv: getenv}
	if f, ok := out.(interface{ Fd() uintptr }); ok {
		s.Width = cmdutil.TerminalWidth(int(f.Fd()))
	}
	return s.Columns()
}
