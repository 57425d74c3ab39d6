package termsafe

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineAndText(t *testing.T) {
	for _, tc := range []struct {
		name, in, line, text string
	}{
		{"plain", "go test ./...", "go test ./...", "go test ./..."},
		{"kept unicode", "café … 日本 😀 \uFFFD", "café … 日本 😀 \uFFFD", "café … 日本 😀 \uFFFD"},
		{"newline", "a\nb", "a␊b", "a\nb"},
		{"tab", "a\tb", "a b", "a\tb"},
		{"CRLF", "a\r\nb", "a␍␊b", "a\nb"},
		{"lone CR", "progress\rdone", "progress␍done", "progress␍done"},
		{"NUL BEL BS", "a\x00b\x07c\x08d", "a␀b␇c␈d", "a␀b␇c␈d"},
		{"other C0", "\x01\x0b\x0c\x1f", "␁␋␌␟", "␁␋␌␟"},
		{"DEL", "a\x7fb", "a␡b", "a␡b"},
		{"CSI", "\x1b[2J\x1b[31mred\x1b[0m", "␛[2J␛[31mred␛[0m", "␛[2J␛[31mred␛[0m"},
		{"OSC with BEL", "\x1b]0;PWNED\x07hi", "␛]0;PWNED␇hi", "␛]0;PWNED␇hi"},
		{"OSC with ST", "\x1b]52;c;ZXZpbA==\x1b\\x", "␛]52;c;ZXZpbA==␛\\x", "␛]52;c;ZXZpbA==␛\\x"},
		{"OSC 8 hyperlink", "\x1b]8;;http://evil\x1b\\ok\x1b]8;;\x1b\\", "␛]8;;http://evil␛\\ok␛]8;;␛\\", "␛]8;;http://evil␛\\ok␛]8;;␛\\"},
		{"DCS", "\x1bP1$r\x1b\\", "␛P1$r␛\\", "␛P1$r␛\\"},
		{"APC PM SOS", "\x1b_a\x1b\\\x1b^b\x1b\\\x1bXc\x1b\\", "␛_a␛\\␛^b␛\\␛Xc␛\\", "␛_a␛\\␛^b␛\\␛Xc␛\\"},
		{"C1 as UTF-8", "a\u009b31mb\u0085c\u0080\u009f", "a\uFFFD31mb\uFFFDc\uFFFD\uFFFD", "a\uFFFD31mb\uFFFDc\uFFFD\uFFFD"},
		{"C1 as raw bytes", "a\x9b31m\x90q\x9c", "a\uFFFD31m\uFFFDq\uFFFD", "a\uFFFD31m\uFFFDq\uFFFD"},
		{"raw 0x80-0x9f", "\x80\x9f", "\uFFFD\uFFFD", "\uFFFD\uFFFD"},
		{"invalid UTF-8", "bad \xff\xfe utf8 \xc3", "bad \uFFFD\uFFFD utf8 \uFFFD", "bad \uFFFD\uFFFD utf8 \uFFFD"},
		{"overlong and surrogate", "\xc0\xaf\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD", "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"bidi overrides", "\u202eexe.gnp\u202c \u202a\u202b\u202d", "\uFFFDexe.gnp\uFFFD \uFFFD\uFFFD\uFFFD", "\uFFFDexe.gnp\uFFFD \uFFFD\uFFFD\uFFFD"},
		{"bidi isolates", "\u2066a\u2067b\u2068c\u2069", "\uFFFDa\uFFFDb\uFFFDc\uFFFD", "\uFFFDa\uFFFDb\uFFFDc\uFFFD"},
		{"bidi marks", "\u200ea\u200fb\u061cc", "\uFFFDa\uFFFDb\uFFFDc", "\uFFFDa\uFFFDb\uFFFDc"},
		{"zero-width", "rm\u200b -rf\u200c\u200d/\u2060x\ufeff", "rm\uFFFD -rf\uFFFD\uFFFD/\uFFFDx\uFFFD", "rm\uFFFD -rf\uFFFD\uFFFD/\uFFFDx\uFFFD"},
		{"tag characters", "ok\U000E0041\U000E0042", "ok\uFFFD\uFFFD", "ok\uFFFD\uFFFD"},
		{"line separators", "a\u2028b\u2029c", "a\uFFFDb\uFFFDc", "a\uFFFDb\uFFFDc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.line {
				t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
			}
			if got := Text(tc.in); got != tc.text {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
			}
		})
	}
}

// shown reports the first byte or character of s that a terminal could act on, or that hides
// text, and whether there is one; the properties below check that none survives.
func shown(s string, layout bool) (string, bool) {
	if !utf8.ValidString(s) {
		return "invalid UTF-8", true
	}
	for _, r := range s {
		if layout && (r == '\n' || r == '\t') {
			continue
		}
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || hidden(r) {
			return string(r), true
		}
	}
	return "", false
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;x\x07", "\u202e\x9b\xff", "a\r\n\tb\u200b", "😀\xf0\x9f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, text := Line(s), Text(s)
		if bad, ok := shown(line, false); ok {
			t.Fatalf("Line(%q) = %q still holds %q", s, line, bad)
		}
		if bad, ok := shown(text, true); ok {
			t.Fatalf("Text(%q) = %q still holds %q", s, text, bad)
		}
		if strings.Contains(line, "\n") {
			t.Fatalf("Line(%q) = %q is more than one line", s, line)
		}
		if Line(line) != line || Text(text) != text {
			t.Fatalf("sanitizing twice changes the result of %q", s)
		}
		if _, ok := shown(s, true); !ok && !strings.Contains(s, "\r\n") && Text(s) != s {
			t.Fatalf("Text changed clean text %q into %q", s, Text(s))
		}
		// Written in two pieces at any point, through the Writer, the text reads the same.
		for _, cut := range []int{0, len(s) / 3, len(s) / 2, len(s)} {
			var b bytes.Buffer
			w := NewWriter(&b)
			w.Write([]byte(s[:cut]))
			w.Write([]byte(s[cut:]))
			w.Flush()
			if b.String() != text {
				t.Fatalf("Writer cut at %d gave %q, Text gives %q", cut, b.String(), text)
			}
		}
	})
}

func TestWriterHoldsSplitSequences(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, piece := range []string{"caf", "\xc3", "\xa9 \xe2\x80", "\xae!\r", "\nnext \x1b", "[2J\r"} {
		if n, err := w.Write([]byte(piece)); n != len(piece) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", piece, n, err)
		}
	}
	if want := "café \uFFFD!\nnext ␛[2J"; b.String() != want {
		t.Fatalf("before Flush: %q, want %q", b.String(), want)
	}
	w.Flush()
	if want := "café \uFFFD!\nnext ␛[2J␍"; b.String() != want {
		t.Fatalf("after Flush: %q, want %q", b.String(), want)
	}
}
