//go:build linux

package passthrough

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// decide is what the tests' caller does with a line: lines starting with 'k' are kept as they
// are, lines starting with 'w' are written as "W" plus the rest, the others are left out.
func decide(l *Lines, line []byte) error {
	switch {
	case len(line) > 0 && line[0] == 'k':
		return l.Pass()
	case len(line) > 0 && line[0] == 'w':
		return l.Write(append([]byte("W"), line[1:]...))
	}
	return nil
}

// want is what decide makes of the whole input.
func want(in []byte) []byte {
	var out []byte
	for len(in) > 0 {
		n := bytes.IndexByte(in, '\n') + 1
		if n == 0 {
			n = len(in)
		}
		line := in[:n]
		switch line[0] {
		case 'k':
			out = append(out, line...)
		case 'w':
			out = append(append(out, 'W'), line[1:]...)
		}
		in = in[n:]
	}
	return out
}

// feed writes the chunks into a new pipe, pausing after each for pause, and returns its read end.
func feed(t testing.TB, chunks [][]byte, pause time.Duration) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer w.Close()
		for _, c := range chunks {
			if _, err := w.Write(c); err != nil {
				return
			}
			if pause > 0 {
				time.Sleep(pause)
			}
		}
	}()
	return r
}

// drain reads r to its end in the background; the result comes on the channel.
func drain(r *os.File) <-chan []byte {
	done := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(r)
		r.Close()
		done <- b
	}()
	return done
}

// pass runs decide over every line of l and returns Next's final error.
func pass(t testing.TB, l *Lines) error {
	t.Helper()
	for {
		line, err := l.Next()
		if err != nil {
			return err
		}
		if err := decide(l, line); err != nil {
			return err
		}
	}
}

// through passes the chunks through a Lines into a pipe and returns what came out.
func through(t testing.TB, chunks [][]byte, pause time.Duration, max int) ([]byte, error) {
	t.Helper()
	in := feed(t, chunks, pause)
	defer in.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	got := drain(outR)
	l := New(in, outW, max)
	if l == nil {
		t.Fatal("New gave no Lines for two pipes")
	}
	err = pass(t, l)
	l.Close()
	outW.Close()
	return <-got, err
}

func TestLines(t *testing.T) {
	long := "k" + strings.Repeat("x", 3<<20) + "\n" // longer than any pipe: read off
	cases := []struct {
		name   string
		chunks []string
		pause  time.Duration
	}{
		{"whole lines at once", []string{"k1\nd2\nk3\nw4\nk5\n"}, 0},
		{"a line at a time", []string{"k1\n", "d2\n", "k3\n", "w4\n"}, time.Millisecond},
		{"lines cut anywhere", []string{"k1", "\nd", "2\nk3\nw", "4", "\n", "k5\nk6"}, time.Millisecond},
		{"last line without a line end", []string{"k1\nk2"}, 0},
		{"crlf kept as it is", []string{"k1\r\nd2\r\n"}, 0},
		{"empty lines", []string{"\n\nk1\n\n"}, 0},
		{"a line longer than the pipe", []string{"k1\n", long, "k2\n"}, 0},
		{"a long line written slowly", []string{"k1\nk", strings.Repeat("y", 100000), strings.Repeat("z", 100000), "\nd\nk2\n"}, 2 * time.Millisecond},
		{"only left-out lines", []string{"d1\nd2\n"}, 0},
		{"nothing", nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var chunks [][]byte
			for _, s := range c.chunks {
				chunks = append(chunks, []byte(s))
			}
			got, err := through(t, chunks, c.pause, 8<<20)
			if err != io.EOF {
				t.Fatalf("Next ended with %v, want io.EOF", err)
			}
			w := want([]byte(strings.Join(c.chunks, "")))
			if !bytes.Equal(got, w) {
				t.Errorf("out: %d bytes %.80q, want %d bytes %.80q", len(got), got, len(w), w)
			}
		})
	}
}

func TestLinesTooLong(t *testing.T) {
	for _, c := range []struct {
		name, in string
		pause    time.Duration
		ok       string // lines passed before the error
	}{
		{"in the pipe", "k1\nk12345678901\nk2\n", 0, "k1\n"},
		{"read off", "k1\nk1234567890123456789", 0, "k1\n"},
		{"crlf at the limit is fine", "k123456789\r\nk1\n", 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := through(t, [][]byte{[]byte(c.in)}, c.pause, 10)
			if c.ok == "" {
				if err != io.EOF || string(got) != c.in {
					t.Fatalf("got %q, %v; want %q, EOF", got, err, c.in)
				}
				return
			}
			if !errors.Is(err, ErrLineTooLong) {
				t.Fatalf("Next ended with %v, want ErrLineTooLong", err)
			}
			if string(got) != c.ok {
				t.Errorf("out %q, want %q", got, c.ok)
			}
		})
	}
}

func TestLinesToAFile(t *testing.T) {
	dir := t.TempDir()
	in := "k1\nd2\nw3\nk4\n"
	f, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	src := feed(t, [][]byte{[]byte(in)}, 0)
	l := New(src, f, 1<<20)
	if l == nil {
		t.Fatal("New gave no Lines for a pipe into a file")
	}
	if err := pass(t, l); err != io.EOF {
		t.Fatal(err)
	}
	f.Close()
	got, _ := os.ReadFile(f.Name())
	if w := want([]byte(in)); !bytes.Equal(got, w) {
		t.Errorf("file holds %q, want %q", got, w)
	}

	// Appending, a character device and a source that is not a pipe get no Lines.
	app, _ := os.OpenFile(filepath.Join(dir, "app"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	defer app.Close()
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	for name, got := range map[string]*Lines{"appending": New(r, app, 10), "/dev/null": New(r, null, 10), "a file as source": New(f, w, 10)} {
		if got != nil {
			t.Errorf("%s: New gave a Lines", name)
		}
	}
}

// TestLinesCopyFallback checks the path taken when the output refuses splice after all.
func TestLinesCopyFallback(t *testing.T) {
	in := "k1\nd2\nw3\nk4\nk5\n"
	src := feed(t, [][]byte{[]byte(in)}, 0)
	outR, outW, _ := os.Pipe()
	got := drain(outR)
	l := New(src, outW, 1<<20)
	l.noSplice = true
	if err := pass(t, l); err != io.EOF {
		t.Fatal(err)
	}
	outW.Close()
	if g, w := <-got, want([]byte(in)); !bytes.Equal(g, w) {
		t.Errorf("out %q, want %q", g, w)
	}
}

// TestLinesReaderGone: once nobody reads the output, Pass reports EPIPE and the source is
// still read to its end.
func TestLinesReaderGone(t *testing.T) {
	var in []byte
	for i := 0; i < 20000; i++ {
		in = append(in, "k a line of some length to fill the pipe quickly\n"...)
	}
	src := feed(t, [][]byte{in}, 0)
	outR, outW, _ := os.Pipe()
	outR.Close()
	l := New(src, outW, 1<<20)
	var outErr error
	for {
		_, err := l.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if err := l.Pass(); err != nil && outErr == nil {
			outErr = err
		}
	}
	if outErr == nil {
		outErr = l.OutErr()
	}
	if outErr == nil || !strings.Contains(outErr.Error(), "broken pipe") {
		t.Errorf("output error %v, want a broken pipe", outErr)
	}
}

// FuzzLines cuts the input into random writes and compares what comes out with want.
func FuzzLines(f *testing.F) {
	f.Add([]byte("k1\nd2\nw3\nk4"), int64(1))
	f.Add([]byte("\n\r\nk\r\nkk\n\nw"), int64(2))
	f.Fuzz(func(t *testing.T, in []byte, seed int64) {
		rng := rand.New(rand.NewSource(seed))
		var chunks [][]byte
		for rest := in; len(rest) > 0; {
			n := 1 + rng.Intn(len(rest))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		got, err := through(t, chunks, time.Duration(rng.Intn(2))*time.Millisecond, 1<<20)
		if err != io.EOF {
			t.Fatalf("Next ended with %v", err)
		}
		if w := want(in); !bytes.Equal(got, w) {
			t.Errorf("out %q, want %q", got, w)
		}
	})
}

// TestLinesSourceClosed: closing the source while Next waits ends Next with os.ErrClosed.
func TestLinesSourceClosed(t *testing.T) {
	r, w, _ := os.Pipe()
	defer w.Close()
	outR, outW, _ := os.Pipe()
	defer outR.Close()
	defer outW.Close()
	l := New(r, outW, 1<<20)
	w.Write([]byte("k1\n"))
	if line, err := l.Next(); err != nil || string(line) != "k1\n" {
		t.Fatalf("Next: %q, %v", line, err)
	}
	l.Pass()
	time.AfterFunc(50*time.Millisecond, func() { r.Close() })
	if _, err := l.Next(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Next on a closed source: %v, want os.ErrClosed", err)
	}
	buf := make([]byte, 10)
	if n, _ := outR.Read(buf); string(buf[:n]) != "k1\n" {
		t.Errorf("out %q, want the line kept before", buf[:n])
	}
}

// TestLinesBlockingOutput: an output in blocking mode (a command's stdout, most often) that
// fills up is waited for, not given up on.
func TestLinesBlockingOutput(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	outR, outW := os.NewFile(uintptr(p[0]), "outR"), os.NewFile(uintptr(p[1]), "outW")
	var in []byte
	for i := 0; len(in) < 4<<20; i++ {
		in = append(in, "k a line to fill the pipe many times over\n"...)
	}
	src := feed(t, [][]byte{in}, 0)
	got := drain(outR)
	l := New(src, outW, 1<<20)
	if l == nil {
		t.Fatal("no Lines")
	}
	if err := pass(t, l); err != io.EOF {
		t.Fatalf("Next ended with %v", err)
	}
	outW.Close()
	if g := <-got; !bytes.Equal(g, in) {
		t.Errorf("out: %d bytes, want %d", len(g), len(in))
	}
}
