package attach

import (
	"io"
	"sync"
	"time"
)

// Defaults for the buffer between the connection and stdout.
const (
	// defaultOutBuffer is how many bytes of events wait for stdout before fr-attach stops
	// reading the connection.
	defaultOutBuffer = 8 << 20
	// defaultOutTimeout is how long a full buffer may go without stdout taking any of it
	// before fr-attach gives up (--output-timeout).
	defaultOutTimeout = 30 * time.Second
	// outChunk is the most written to stdout at once, so a slow reader shows progress.
	outChunk = 16 << 10
	// maxSpare is how many buffers written out are kept to be filled again.
	maxSpare = 4
)

// outQueue stands between the events read from the daemon and stdout, so that neither the
// connection's reading nor its pings wait on stdout. Write never blocks: it queues, and a
// goroutine of its own writes to stdout. The queue is bounded by its reader, which calls
// waitRoom before reading more from the connection: while limit bytes wait, the connection is
// not read (the daemon's side holds what it sends). When the queue has been full for timeout
// with stdout taking nothing, stalled is closed: output cannot keep up.
type outQueue struct {
	w       io.Writer
	limit   int
	timeout time.Duration

	mu       sync.Mutex
	wake     *sync.Cond // for the writer goroutine
	queue    [][]byte
	spare    [][]byte  // buffers written out, for Write to fill again
	pending  int       // bytes queued, not yet written
	progress time.Time // when stdout last took bytes, or the queue last became full
	err      error     // stdout's write error, sticky
	closed   bool
	room     chan struct{} // a token each time stdout takes bytes
	stalled  chan struct{} // closed once output cannot keep up
	stallOne sync.Once
	done     chan struct{} // closed when the queue is closed
}

func newOutQueue(w io.Writer, limit int, timeout time.Duration) *outQueue {
	q := &outQueue{w: w, limit: limit, timeout: timeout, room: make(chan struct{}, 1),
		stalled: make(chan struct{}), done: make(chan struct{})}
	q.wake = sync.NewCond(&q.mu)
	go q.write()
	go q.watch()
	return q
}

// Write queues b for stdout. It returns stdout's error once a write has failed.
func (q *outQueue) Write(b []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return 0, q.err
	}
	if len(b) == 0 {
		return 0, nil
	}
	wasFull := q.pending >= q.limit
	var c []byte
	if n := len(q.spare); n > 0 && cap(q.spare[n-1]) >= len(b) {
		c, q.spare = q.spare[n-1], q.spare[:n-1]
	}
	q.queue = append(q.queue, append(c, b...))
	q.pending += len(b)
	if !wasFull && q.pending >= q.limit {
		q.progress = time.Now()
	}
	q.wake.Broadcast()
	return len(b), nil
}

// write is the goroutine that writes the queue to stdout.
func (q *outQueue) write() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for len(q.queue) == 0 && !q.closed {
			q.wake.Wait()
		}
		if len(q.queue) == 0 {
			return
		}
		b := q.queue[0]
		if len(b) > outChunk {
			b = b[:outChunk]
		}
		q.mu.Unlock()
		n, err := q.w.Write(b)
		q.mu.Lock()
		if n > 0 {
			q.progress = time.Now()
		}
		if err != nil {
			// Nothing more can be written: what waits is let go, and every later Write
			// returns the error (a closed stdout is then handled as at any write).
			q.err, q.queue, q.pending = err, nil, 0
		} else {
			if n == len(q.queue[0]) {
				if len(q.spare) < maxSpare {
					q.spare = append(q.spare, q.queue[0][:0])
				}
				q.queue[0] = nil
				q.queue = q.queue[1:]
			} else {
				q.queue[0] = q.queue[0][n:]
			}
			q.pending -= n
		}
		q.wake.Broadcast()
		select {
		case q.room <- struct{}{}:
		default:
		}
	}
}

// watch closes stalled once the queue has been full for timeout with no progress.
func (q *outQueue) watch() {
	tick := q.timeout / 10
	tick = min(max(tick, 10*time.Millisecond), time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-q.done:
			return
		case <-t.C:
		}
		q.mu.Lock()
		stuck := q.err == nil && q.pending >= q.limit && time.Since(q.progress) >= q.timeout
		q.mu.Unlock()
		if stuck {
			q.stallOne.Do(func() { close(q.stalled) })
			return
		}
	}
}

// full reports whether the queue holds its limit.
func (q *outQueue) full() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err == nil && q.pending >= q.limit
}

// waitRoom waits while the queue is full, until stdout takes some of it, output is stalled,
// or stop is closed. It reports whether it had to wait.
func (q *outQueue) waitRoom(stop <-chan struct{}) bool {
	waited := false
	for q.full() {
		waited = true
		select {
		case <-q.room:
		case <-q.stalled:
			return true
		case <-stop:
			return true
		}
	}
	return waited
}

// drain waits until everything queued has been written, stdout failed, or stdout has taken
// nothing for timeout. It reports how many bytes were left unwritten.
func (q *outQueue) drain() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	last := time.Now()
	for q.pending > 0 && q.err == nil {
		if q.progress.After(last) {
			last = q.progress
		}
		if time.Since(last) >= q.timeout {
			return q.pending
		}
		// Woken by the writer's progress, or by the timer below.
		t := time.AfterFunc(min(q.timeout, time.Second), func() {
			q.mu.Lock()
			q.wake.Broadcast()
			q.mu.Unlock()
		})
		q.wake.Wait()
		t.Stop()
	}
	return 0
}

// close ends the writer once the queue is written (or at once if stdout failed), and the watch.
func (q *outQueue) close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.done)
	}
	q.wake.Broadcast()
	q.mu.Unlock()
}
