package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/testkit"
)

// floodLines is n lines of various lengths, some past the size copied into shared blocks,
// some noise.
func floodLines(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		switch {
		case i%997 == 5:
			out = append(out, fmt.Sprintf(`{"type":"tool_result","i":%d,"output":"%s"}`, i, strings.Repeat("x", 20000+i)))
		case i%101 == 3:
			out = append(out, fmt.Sprintf("stray text %d", i))
		default:
			out = append(out, fmt.Sprintf(`{"type":"token","i":%d,"text":"hello "}`, i))
		}
	}
	return out
}

// TestBatchesKeepEveryLineInOrder: every line comes once, in order, with bytes of its own
// (not the reader's buffer, which later lines overwrite), in batches within their bounds.
func TestBatchesKeepEveryLineInOrder(t *testing.T) {
	want := floodLines(20000)
	c := NewConn(strings.NewReader(strings.Join(want, "\n")+"\n"), io.Discard, Options{})
	defer c.Close()
	var got []Line
	batches := 0
	for b := range c.Batches() {
		batches++
		if len(b) == 0 || len(b) > maxBatchLines {
			t.Fatalf("a batch of %d lines", len(b))
		}
		size := 0
		for _, l := range b[:len(b)-1] {
			size += len(l.Raw)
		}
		if size >= maxBatchBytes {
			t.Fatalf("a batch of %d bytes before its last line", size)
		}
		got = append(got, b...)
	}
	if err := c.Err(); !errors.Is(err, io.EOF) {
		t.Fatalf("Err = %v, want io.EOF", err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i, l := range got {
		if string(l.Raw) != want[i] {
			t.Fatalf("line %d = %.60q, want %.60q", i, l.Raw, want[i])
		}
		if k := ParseLine([]byte(want[i])); l.Kind != k.Kind || l.Type != k.Type {
			t.Fatalf("line %d is %v %q, want %v %q", i, l.Kind, l.Type, k.Kind, k.Type)
		}
	}
	if batches > len(want)/10 {
		t.Errorf("%d batches for %d lines read from memory: lines were not batched", batches, len(want))
	}
}

// TestBatchIsNotHeldForMore: lines that arrived are handed on without waiting for more.
func TestBatchIsNotHeldForMore(t *testing.T) {
	pr, pw := io.Pipe()
	c := NewConn(pr, io.Discard, Options{})
	defer c.Close()
	defer pw.Close()
	take := func(n int) []string {
		var got []string
		timeout := testkit.After(10 * time.Second)
		for len(got) < n {
			select {
			case b := <-c.Batches():
				for _, l := range b {
					got = append(got, string(l.Raw))
				}
			case <-timeout:
				t.Fatalf("after 10s, %d of %d lines: %q", len(got), n, got)
			}
		}
		return got
	}
	go pw.Write([]byte("{\"type\":\"token\",\"text\":\"a\"}\n{\"type\":\"token\",\"text\":\"b\"}\nnoise\n"))
	if got := take(3); got[2] != "noise" {
		t.Fatalf("got %q", got)
	}
	go pw.Write([]byte("{\"type\":\"token\",\"text\":\"c\"}\n"))
	if got := take(1); got[0] != `{"type":"token","text":"c"}` {
		t.Fatalf("got %q", got)
	}
}

// errAfter gives data, with err on the read that takes its end.
type errAfter struct {
	data *bytes.Reader
	err  error
}

func (r *errAfter) Read(p []byte) (int, error) {
	n, _ := r.data.Read(p)
	if r.data.Len() == 0 {
		return n, r.err
	}
	return n, nil
}

// TestBatchesBeforeAnError: the lines read before the stream broke all come before its end.
func TestBatchesBeforeAnError(t *testing.T) {
	boom := errors.New("boom")
	want := floodLines(1000)
	c := NewConn(&errAfter{bytes.NewReader([]byte(strings.Join(want, "\n") + "\n")), boom}, io.Discard, Options{})
	defer c.Close()
	n := 0
	for {
		l, err := c.Next(context.Background())
		if err != nil {
			if !errors.Is(err, boom) {
				t.Fatalf("Next: %v, want boom", err)
			}
			break
		}
		if string(l.Raw) != want[n] {
			t.Fatalf("line %d = %.60q, want %.60q", n, l.Raw, want[n])
		}
		n++
	}
	if n != len(want) {
		t.Fatalf("%d lines before the error, want %d", n, len(want))
	}
}

// TestBatchesBoundWhatIsRead: while nobody takes the lines the Conn stops reading, after a
// bounded amount; then everything comes, from Lines too.
func TestBatchesBoundWhatIsRead(t *testing.T) {
	pr, pw := io.Pipe()
	c := NewConn(pr, io.Discard, Options{})
	defer c.Close()
	const total = 100000
	line := []byte(`{"type":"token","text":"` + strings.Repeat("y", 70) + `"}` + "\n")
	var written atomic.Int64
	go func() {
		for i := 0; i < total; i++ {
			if _, err := pw.Write(line); err != nil {
				return
			}
			written.Add(1)
		}
		pw.Close()
	}()
	// Wait until the writer is held up: no progress for a while.
	for last := int64(-1); ; {
		time.Sleep(300 * time.Millisecond)
		n := written.Load()
		if n == last {
			break
		}
		last = n
	}
	// What may be held: the queued batches, the one being made, and the reader's buffer.
	bound := int64((batchQueue+1)*maxBatchLines + initialBuf/len(line) + 2)
	if n := written.Load(); n > bound || n == total {
		t.Fatalf("%d lines read while none was taken, want at most %d", n, bound)
	}
	got := 0
	for l := range c.Lines() {
		if !bytes.Equal(append(l.Raw, '\n'), line) {
			t.Fatalf("line %d = %q", got, l.Raw)
		}
		got++
	}
	if got != total {
		t.Fatalf("%d lines, want %d", got, total)
	}
}
