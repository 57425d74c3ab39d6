package wire

import (
	"bytes"
	"io"
	"math/rand"
	"strings"
	"testing"
)

// randomReads returns the stream in reads of random sizes.
type randomReads struct {
	b   []byte
	rnd *rand.Rand
}

func (r *randomReads) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.b), 1+r.rnd.Intn(3*initialBuf/2))
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

// A Reader that keeps its lines returns the same lines as one that does not, whatever the
// reads, the line lengths (past the 4 MiB a buffer grows to, too) and the calls to hasLine
// between them; and a line it says it kept is still intact once the whole stream is read.
func TestReaderKeepsLines(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	var want []string
	var stream bytes.Buffer
	for i := 0; i < 4000; i++ {
		var n int
		switch k := rnd.Intn(100); {
		case k == 0:
			n = initialBuf + rnd.Intn(3*initialBuf)
		case k < 10:
			n = rnd.Intn(8 << 10)
		default:
			n = rnd.Intn(100)
		}
		if i == 2000 {
			n = 5 << 20 // gathered in Reader.long
		}
		line := strings.Repeat(string(rune('a'+i%26)), n)
		want = append(want, line)
		stream.WriteString(line)
		if rnd.Intn(4) == 0 {
			stream.WriteString("\r\n")
		} else {
			stream.WriteString("\n")
		}
	}
	for _, keep := range []bool{false, true} {
		r := NewReader(&randomReads{b: stream.Bytes(), rnd: rand.New(rand.NewSource(2))}, ReaderOptions{})
		r.keep = keep
		var got [][]byte
		kept := 0
		for {
			if rnd.Intn(2) == 0 {
				r.hasLine()
			}
			b, err := r.ReadLine()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.kept() {
				kept++
			} else {
				b = bytes.Clone(b)
			}
			got = append(got, b)
		}
		if len(got) != len(want) {
			t.Fatalf("keep %v: %d lines, want %d", keep, len(got), len(want))
		}
		for i := range want {
			if string(got[i]) != want[i] {
				t.Fatalf("keep %v: line %d is %.40q (%d bytes), want %.40q (%d bytes)", keep, i, got[i], len(got[i]), want[i], len(want[i]))
			}
		}
		if keep && kept < len(want)-1 || !keep && kept > 0 {
			t.Errorf("keep %v: %d lines kept of %d", keep, kept, len(want))
		}
	}
}
