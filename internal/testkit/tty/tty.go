// Package tty gives a command in a test the terminal facts it would learn from
// cmdutil.OSStreams: a terminal of a chosen width, or none.
package tty

import "github.com/fuseraft/fr/internal/cmdutil"

// Terminal gives s the terminal facts of a command run at a terminal width columns wide:
// stdin, stdout and stderr are terminals, and s.Columns() is width. Width 0 gives it no
// terminal at all: s.Columns() is then the $COLUMNS of s's environment, else 80. The streams
// themselves (In, Out, Err) are the caller's. A nil Getenv becomes an empty environment (no
// $COLUMNS, no NO_COLOR, no TERM), so that the machine the test runs on decides nothing.
//
// Every renderer's tests run with it on and off: a command learns what it prints on from
// cmdutil.Streams alone.
func Terminal(s cmdutil.Streams, width int) cmdutil.Streams {
	if s.Getenv == nil {
		s.Getenv = func(string) string { return "" }
	}
	on := width > 0
	s.InTerminal, s.OutTerminal, s.ErrTerminal = on, on, on
	s.Width = max(width, 0)
	s.ReadWidth = nil
	return s
}
