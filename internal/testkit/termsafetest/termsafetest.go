// Package termsafetest holds testscript commands that check what the commands show a person.
package termsafetest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"
)

// Inject is text written to drive a terminal: a title change, a screen clear, a C1 CSI (as a
// character and as a raw byte), a bidi override and a zero-width space. Scripts see it as
// $INJECT (see Setup).
const Inject = "\x1b]0;PWNED\x07\x1b[2J\x1bP1$r\x1b\\\u009b31m\x9b31m\u202eexe.gnp\u200b\u200e\u061chi"

// Setup sets $INJECT for scripts.
func Setup(e *testscript.Env) error {
	e.Setenv("INJECT", Inject)
	return nil
}

// Cmds are the commands: "termsafe" and "unescape".
func Cmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"termsafe": cmdTermsafe,
		"unescape": cmdUnescape,
	}
}

// termsafe stdout|stderr|FILE...: fail if the text holds anything a terminal would act on or
// that hides text: ESC or another control but newline and tab, DEL, a C1 control (as a
// character or a raw byte), a bidirectional control, a zero-width or other format character,
// or invalid UTF-8.
func cmdTermsafe(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! termsafe")
	}
	if len(args) == 0 {
		ts.Fatalf("usage: termsafe stdout|stderr|FILE...")
	}
	for _, name := range args {
		var text string
		switch name {
		case "stdout":
			text = ts.ReadFile("stdout")
		case "stderr":
			text = ts.ReadFile("stderr")
		default:
			text = ts.ReadFile(name)
		}
		if bad, at := Find(text); at >= 0 {
			ts.Fatalf("%s holds %s at byte %d: %q", name, bad, at, text)
		}
	}
}

// Find returns what in s a terminal would act on, or that hides text, and where; at is -1
// when there is none.
func Find(s string) (what string, at int) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return fmt.Sprintf("the invalid UTF-8 byte %#x", s[i]), i
		case r == 0x1b:
			return "ESC", i
		case (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f:
			return fmt.Sprintf("the control %U", r), i
		case r >= 0x80 && r < 0xa0:
			return fmt.Sprintf("the C1 control %U", r), i
		case r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			return fmt.Sprintf("the bidi control %U", r), i
		case unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029:
			return fmt.Sprintf("the invisible %U", r), i
		}
		i += size
	}
	return "", -1
}

// unescape SRC DST: write DST with the Go escapes of SRC (\x1b, \u202e, \x9b, ...) decoded,
// line by line, so that scripts can hold bytes a text file should not.
func cmdUnescape(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: unescape SRC DST")
	}
	lines := strings.SplitAfter(ts.ReadFile(args[0]), "\n")
	var b strings.Builder
	for _, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		s, err := strconv.Unquote(`"` + strings.ReplaceAll(body, `"`, `\"`) + `"`)
		if err != nil {
			ts.Fatalf("unescape %s: %q: %v", args[0], body, err)
		}
		b.WriteString(s)
		if strings.HasSuffix(l, "\n") {
			b.WriteByte('\n')
		}
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o666))
}
