package attach

import (
	"bytes"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/testkit"
)

// blockingWriter never returns from Write until released.
type blockingWriter struct{ release chan struct{} }

func (w *blockingWriter) Write(b []byte) (int, error) { <-w.release; return len(b), nil }

// slowWriter takes what it is given slowly, but keeps taking it.
type slowWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *slowWriter) Write(b []byte) (int, error) {
	time.Sleep(time.Duration(1+len(b)/512) * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(b)
}

func TestOutQueueStallsOnABlockedWriter(t *testing.T) {
	w := &blockingWriter{release: make(chan struct{})}
	defer close(w.release)
	q := newOutQueue(w, 1024, 200*time.Millisecond)
	defer q.close()
	start := time.Now()
	line := bytes.Repeat([]byte("x"), 99)
	for i := 0; i < 20; i++ {
		if _, err := q.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	if !q.full() {
		t.Fatal("2000 bytes queued, limit 1024: not full")
	}
	select {
	case <-q.stalled:
		if el := time.Since(start); el < 200*time.Millisecond || el > testkit.Bound(2*time.Second) {
			t.Errorf("stalled after %v, want about 200ms", el)
		}
	case <-testkit.After(5 * time.Second):
		t.Fatal("a writer that never returns did not stall the queue")
	}
	if left := q.drain(); left == 0 {
		t.Error("drain reported everything written")
	}
}

func TestOutQueueSlowWriterLosesNothing(t *testing.T) {
	w := &slowWriter{}
	q := newOutQueue(w, 1024, 200*time.Millisecond)
	defer q.close()
	var want bytes.Buffer
	stop := make(chan struct{})
	for i := 0; i < 300; i++ {
		q.waitRoom(stop) // as the connection's reader does
		line := bytes.Repeat([]byte{byte('a' + i%26)}, 63)
		line = append(line, '\n')
		want.Write(line)
		q.Write(line)
	}
	if left := q.drain(); left != 0 {
		t.Fatalf("%d bytes left", left)
	}
	select {
	case <-q.stalled:
		t.Error("a writer that keeps taking bytes stalled the queue")
	default:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !bytes.Equal(w.buf.Bytes(), want.Bytes()) {
		t.Errorf("wrote %d bytes, want %d, in order", w.buf.Len(), want.Len())
	}
}

// partialWriter takes part of each write, a random amount, slowly now and then.
type partialWriter struct {
	mu  sync.Mutex
	rnd *rand.Rand
	buf bytes.Buffer
}

func (w *partialWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 1 + w.rnd.Intn(len(b))
	if w.rnd.Intn(64) == 0 {
		time.Sleep(time.Millisecond)
	}
	return w.buf.Write(b[:n])
}

// The buffers written out are filled again: what stdout gets is still every byte queued, in
// order, whatever it takes at a time.
func TestOutQueueRefillsItsBuffersIntact(t *testing.T) {
	w := &partialWriter{rnd: rand.New(rand.NewSource(1))}
	q := newOutQueue(w, 1<<20, 5*time.Second)
	rnd := rand.New(rand.NewSource(2))
	var want bytes.Buffer
	for i := 0; i < 1000; i++ {
		b := bytes.Repeat([]byte{byte('a' + i%26)}, 1+rnd.Intn(outChunk/4))
		want.Write(b)
		if _, err := q.Write(b); err != nil {
			t.Fatal(err)
		}
		if rnd.Intn(4) == 0 {
			time.Sleep(10 * time.Microsecond)
		}
		for q.full() {
			q.waitRoom(nil)
		}
	}
	if left := q.drain(); left != 0 {
		t.Fatalf("%d bytes left", left)
	}
	q.close()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !bytes.Equal(w.buf.Bytes(), want.Bytes()) {
		t.Fatalf("stdout got %d bytes, not the %d queued", w.buf.Len(), want.Len())
	}
}
