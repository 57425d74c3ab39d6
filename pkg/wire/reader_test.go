package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/fuseraft/fr/internal/testkit"
)

// readAll returns every line of src as strings, and the error that ended the stream
// (nil for io.EOF).
func readAll(t *testing.T, src io.Reader, opts ReaderOptions) ([]string, error) {
	t.Helper()
	r := NewReader(src, opts)
	var out []string
	for {
		b, err := r.ReadLine()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, string(b))
	}
}

func TestReaderLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty input", "", nil},
		{"one line", `{"type":"token","text":"hi"}` + "\n", []string{`{"type":"token","text":"hi"}`}},
		{"last line without newline is kept", "a\nb", []string{"a", "b"}},
		{"CRLF line ends", "a\r\nb\r\n", []string{"a", "b"}},
		{"mixed line ends", "a\r\nb\nc", []string{"a", "b", "c"}},
		{"blank lines are lines", "\n\n", []string{"", ""}},
		{"a lone CR inside a line stays", "a\rb\n", []string{"a\rb"}},
		{"CR at the very end without LF is a line end", "a\r", []string{"a"}},
		{"noise between events", "{\"type\":\"ready\"}\nWelcome to fuseraft\n{\"type\":\"token\"}\n",
			[]string{`{"type":"ready"}`, "Welcome to fuseraft", `{"type":"token"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(t, strings.NewReader(tt.in), ReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReaderSplitAcrossReads(t *testing.T) {
	// One byte per Read: a line split across reads must come out whole.
	in := "{\"type\":\"token\",\"text\":\"\\u0022quoted\\u0022\"}\r\n{\"type\":\"message_end\"}\n"
	got, err := readAll(t, iotest.OneByteReader(strings.NewReader(in)), ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"type":"token","text":"\u0022quoted\u0022"}`, `{"type":"message_end"}`}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestReaderCRLFSplitBetweenReads(t *testing.T) {
	// The \r arrives in one read and the \n in the next.
	in := io.MultiReader(strings.NewReader("abc\r"), strings.NewReader("\ndef\r"), strings.NewReader("\n"))
	got, err := readAll(t, in, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "abc|def" {
		t.Errorf("got %q", got)
	}
}

func TestReaderHugeLine(t *testing.T) {
	// An 8 MB tool_result (50 MB in make chaos) between two small events, read half a
	// buffer at a time: nothing truncated, nothing lost.
	size := 8 << 20
	if testkit.Long() {
		size = 50 << 20
	}
	big := `{"type":"tool_result","id":"t1","name":"read_file","ok":true,"output":"` +
		strings.Repeat("x", size) + `"}`
	in := "{\"type\":\"tool_call\"}\n" + big + "\r\n{\"type\":\"message_end\"}\n"
	r := NewReader(iotest.HalfReader(strings.NewReader(in)), ReaderOptions{})
	var kinds []string
	for {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, l.Type)
		if l.Type == "tool_result" && string(l.Raw) != big {
			t.Fatalf("tool_result line is %d bytes, want %d", len(l.Raw), len(big))
		}
	}
	if strings.Join(kinds, ",") != "tool_call,tool_result,message_end" {
		t.Errorf("events %v", kinds)
	}
}

func TestReaderLineTooLong(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		max      int
		wantOK   []string
		wantLine int64
	}{
		{"exactly the limit passes", "12345\n", 5, []string{"12345"}, 0},
		{"exactly the limit with CRLF passes", "12345\r\n", 5, []string{"12345"}, 0},
		{"one byte over fails", "ok\n123456\nafter\n", 5, []string{"ok"}, 2},
		{"over the limit at end of input", "ok\n1234567", 5, []string{"ok"}, 2},
		{"over the limit in the growth path", "a\n" + strings.Repeat("y", 200<<10) + "\n", 100 << 10, []string{"a"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(t, iotest.HalfReader(strings.NewReader(tt.in)), ReaderOptions{MaxLine: tt.max})
			if strings.Join(got, "|") != strings.Join(tt.wantOK, "|") {
				t.Errorf("lines before the error: %q, want %q", got, tt.wantOK)
			}
			if tt.wantLine == 0 {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var e *LineTooLongError
			if !errors.As(err, &e) || !IsLineTooLong(err) {
				t.Fatalf("error %v, want *LineTooLongError", err)
			}
			if e.Line != tt.wantLine || e.Limit != tt.max {
				t.Errorf("error %+v, want line %d limit %d", e, tt.wantLine, tt.max)
			}
			if !strings.Contains(e.Error(), "longer than the limit") {
				t.Errorf("message %q", e.Error())
			}
		})
	}
}

func TestReaderTooLongIsSticky(t *testing.T) {
	r := NewReader(strings.NewReader("123456\nok\n"), ReaderOptions{MaxLine: 3})
	if _, err := r.ReadLine(); !IsLineTooLong(err) {
		t.Fatalf("first read: %v", err)
	}
	if _, err := r.ReadLine(); !IsLineTooLong(err) {
		t.Fatalf("second read: %v, want the same error again", err)
	}
}

func TestLineTooLongMessage(t *testing.T) {
	for _, tt := range []struct {
		limit int
		want  string
	}{
		{DefaultMaxLine, "line 7 is longer than the limit of 256 MiB"},
		{64 << 10, "line 7 is longer than the limit of 64 KiB"},
		{100, "line 7 is longer than the limit of 100 bytes"},
	} {
		if got := (&LineTooLongError{Line: 7, Limit: tt.limit}).Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestReaderSourceError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("a\npartial"), errReader{boom}), ReaderOptions{})
	if b, err := r.ReadLine(); err != nil || string(b) != "a" {
		t.Fatalf("got %q %v", b, err)
	}
	// The partial line is still returned before the error, so nothing is lost.
	if b, err := r.ReadLine(); err != nil || string(b) != "partial" {
		t.Fatalf("got %q %v", b, err)
	}
	if _, err := r.ReadLine(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderNoProgress(t *testing.T) {
	r := NewReader(zeroReader{}, ReaderOptions{})
	if _, err := r.ReadLine(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("got %v, want io.ErrNoProgress", err)
	}
}

// countingReader counts how often BeforeRead was called relative to reads.
func TestReaderBeforeRead(t *testing.T) {
	// Three lines arrive in two reads: BeforeRead runs before each read from the source, never
	// while buffered lines remain, so a Writer flushed there is flushed once per batch.
	src := io.MultiReader(strings.NewReader("a\nb\n"), strings.NewReader("c\n"))
	var calls []int
	var r *Reader
	r = NewReader(src, ReaderOptions{BeforeRead: func() { calls = append(calls, r.Buffered()) }})
	var lines []string
	for {
		b, err := r.ReadLine()
		if err != nil {
			break
		}
		lines = append(lines, string(b))
	}
	if strings.Join(lines, "") != "abc" {
		t.Fatalf("lines %q", lines)
	}
	for _, buffered := range calls {
		if buffered != 0 {
			t.Errorf("BeforeRead called with %d bytes still buffered", buffered)
		}
	}
	// One call per read: "a\nb\n", "c\n", and the read that returns EOF.
	if len(calls) != 3 {
		t.Errorf("BeforeRead called %d times, want 3", len(calls))
	}
	if r.LineNumber() != 3 {
		t.Errorf("LineNumber %d", r.LineNumber())
	}
}

func TestReaderManyLinesBiggerThanBuffer(t *testing.T) {
	var in bytes.Buffer
	for i := 0; i < 20000; i++ {
		in.WriteString(`{"type":"token","text":"abcdefghij"}` + "\n")
	}
	got, err := readAll(t, &in, ReaderOptions{})
	if err != nil || len(got) != 20000 {
		t.Fatalf("%d lines, %v", len(got), err)
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{"", "a\n", "a\r\nb", "\r\n\r\n", "{\"type\":\"x\"}\nnoise\r\n", "abc\r", strings.Repeat("z", 70000) + "\n"} {
		f.Add([]byte(s), uint8(3), uint16(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8, max uint16) {
		// Reference: split on \n, drop one trailing \r per line, drop the empty last piece.
		var want [][]byte
		rest := in
		for len(rest) > 0 {
			i := bytes.IndexByte(rest, '\n')
			var line []byte
			if i < 0 {
				line, rest = rest, nil
			} else {
				line, rest = rest[:i], rest[i+1:]
			}
			line = bytes.TrimSuffix(line, []byte("\r"))
			want = append(want, line)
		}
		limit := int(max)
		r := NewReader(&chunkReader{b: in, n: int(chunk%16) + 1}, ReaderOptions{MaxLine: limit})
		for i := 0; ; i++ {
			got, err := r.ReadLine()
			if err == io.EOF {
				if i != len(want) {
					t.Fatalf("stopped after %d lines, want %d", i, len(want))
				}
				return
			}
			if err != nil {
				if !IsLineTooLong(err) || limit == 0 || i >= len(want) || len(want[i]) <= limit {
					t.Fatalf("line %d: unexpected error %v", i+1, err)
				}
				return
			}
			if i >= len(want) || !bytes.Equal(got, want[i]) {
				t.Fatalf("line %d: got %q", i+1, got)
			}
			if limit > 0 && len(got) > limit {
				t.Fatalf("line %d longer than the limit", i+1)
			}
		}
	})
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := min(c.n, len(p), len(c.b))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}
