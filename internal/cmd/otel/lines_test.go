package otel

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll runs a lineReader over in, read in pieces of the given sizes, and returns the output
// and the lines seen (nil entries for lines too long to be seen).
func readAll(t *testing.T, in []byte, pieces []int, max int) (out []byte, seen [][]byte) {
	t.Helper()
	var r io.Reader = bytes.NewReader(in)
	if len(pieces) > 0 {
		r = &chunked{data: in, sizes: pieces}
	}
	var buf bytes.Buffer
	w := bufio.NewWriterSize(&buf, 16)
	lr := newLineReader(iotest.OneByteReader(r), w, max)
	if len(pieces) > 0 {
		lr = newLineReader(r, w, max)
	}
	for {
		line, tooLong, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if tooLong {
			seen = append(seen, nil)
			continue
		}
		seen = append(seen, append([]byte{}, line...))
	}
	lr.flush()
	return buf.Bytes(), seen
}

// chunked returns data in reads of the sizes given, in turn.
type chunked struct {
	data  []byte
	sizes []int
	i     int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := c.sizes[c.i%len(c.sizes)]%len(p) + 1
	c.i++
	n = min(n, len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// wantLines is what the reader should see of in: its lines without \n or \r\n, those longer
// than max as nil.
func wantLines(in []byte, max int) [][]byte {
	var out [][]byte
	s := string(in)
	for s != "" {
		line, rest, found := strings.Cut(s, "\n")
		s = rest
		if !found {
			rest = ""
		}
		line = strings.TrimSuffix(line, "\r")
		if len(line) > max {
			out = append(out, nil)
		} else {
			out = append(out, []byte(line))
		}
	}
	return out
}

func TestLineReader(t *testing.T) {
	cases := []string{
		"", "\n", "a", "a\n", "a\r\nb\n", "a\nb", "\r\n\r\n", "x\r", strings.Repeat("y", 200000) + "\nz\n",
		strings.Repeat("long", 50) + "\nshort\n",
	}
	for _, in := range cases {
		for _, max := range []int{10, 1 << 20} {
			out, seen := readAll(t, []byte(in), []int{1, 7, 70000}, max)
			if string(out) != in {
				t.Errorf("%.20q: output differs from input", in)
			}
			want := wantLines([]byte(in), max)
			if len(seen) != len(want) {
				t.Errorf("%.20q max %d: %d lines seen, want %d", in, max, len(seen), len(want))
				continue
			}
			for i := range want {
				if (want[i] == nil) != (seen[i] == nil) || !bytes.Equal(want[i], seen[i]) {
					t.Errorf("%.20q max %d: line %d is %.20q, want %.20q", in, max, i, seen[i], want[i])
				}
			}
		}
	}
}

// FuzzLineReader: whatever the input and however it is read, the output is the input byte for
// byte, and the lines seen are its lines.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("{\"type\":\"token\"}\r\nnoise\n\n{}"), uint8(3), uint8(1), uint8(20))
	f.Add([]byte(strings.Repeat("x", 300)+"\n"), uint8(200), uint8(7), uint8(5))
	f.Fuzz(func(t *testing.T, in []byte, a, b, max uint8) {
		out, seen := readAll(t, in, []int{int(a), int(b)}, int(max))
		if !bytes.Equal(out, in) {
			t.Fatalf("output %q, input %q", out, in)
		}
		want := wantLines(in, int(max))
		if len(seen) != len(want) {
			t.Fatalf("%d lines seen, want %d", len(seen), len(want))
		}
		for i := range want {
			if (want[i] == nil) != (seen[i] == nil) || !bytes.Equal(want[i], seen[i]) {
				t.Fatalf("line %d is %q, want %q", i, seen[i], want[i])
			}
		}
	})
}
