package tty

import (
	"testing"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

func TestTerminal(t *testing.T) {
	for _, tc := range []struct {
		width   int
		env     func(string) string
		term    bool
		columns int
	}{
		{60, nil, true, 60},
		{120, testkit.Env("COLUMNS", "40"), true, 120},
		{0, nil, false, 80},
		{0, testkit.Env("COLUMNS", "132"), false, 132},
		{0, testkit.Env("COLUMNS", "x"), false, 80},
	} {
		s := Terminal(cmdutil.Streams{Getenv: tc.env}, tc.width)
		if s.InTerminal != tc.term || s.OutTerminal != tc.term || s.ErrTerminal != tc.term {
			t.Errorf("Terminal(%d): terminals %v %v %v, want %v", tc.width, s.InTerminal, s.OutTerminal, s.ErrTerminal, tc.term)
		}
		if got := s.Columns(); got != tc.columns {
			t.Errorf("Terminal(%d) with COLUMNS=%q: Columns() = %d, want %d", tc.width, s.Env("COLUMNS"), got, tc.columns)
		}
	}
}
