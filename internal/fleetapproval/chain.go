package fleetapproval

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/audit"
)

// Chain appends one writer's hash chain to the audit stream, on a subject of its own
// (AuditSubject). Lines are appended in the order they are given, by one goroutine that takes
// every line waiting at once and publishes them back to back (the first with the sequence the
// writer last saw on its subject expected, so a second writer given the same id is refused
// rather than interleaved; each with its hash as the message id, so a publish tried again
// after a lost acknowledgement is stored once), then waits for the stream to store them. A
// Chain opened on a subject that already holds lines goes on from its last line: a writer
// restarted with the same id extends its chain.
type Chain struct {
	js      jetstream.JetStream
	stream  string
	subject string

	mu      sync.Mutex
	queue   []*queued
	writing bool

	// the writer goroutine's own
	prev  *string
	prev0 *string // prev when the batch being written was sealed
	seq   uint64  // the stream sequence of the last line on subject, 0 when none
}

type queued struct {
	mk   func(prev *string) []byte
	done chan error
}

// maxBatch is the most lines published before their acknowledgements are waited for (well
// under the client's limit of acknowledgements outstanding).
const maxBatch = 512

// appendWait bounds how long the lines of one batch wait for the stream.
const appendWait = 30 * time.Second

// EnsureStream makes the audit stream name (subjects fr.audit.>, file storage, kept until an
// operator removes it) unless it exists; an existing stream is left as its operator set it.
func EnsureStream(ctx context.Context, js jetstream.JetStream, name string) error {
	_, err := js.Stream(ctx, name)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("audit stream %s: %w", name, err)
	}
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name:        name,
		Description: "fr: every approval decision of the fleet, one hash chain per writer",
		Subjects:    []string{AuditSubjects},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Duplicates:  2 * time.Minute,
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("creating audit stream %s: %w", name, err)
	}
	return nil
}

// OpenChain opens the chain on subject of the audit stream, making the stream if need be.
func OpenChain(ctx context.Context, js jetstream.JetStream, stream, subject string) (*Chain, error) {
	if err := EnsureStream(ctx, js, stream); err != nil {
		return nil, err
	}
	c := &Chain{js: js, stream: stream, subject: subject}
	if err := c.resync(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Subject is the chain's subject.
func (c *Chain) Subject() string { return c.subject }

// resync reads the last line of the chain from the stream.
func (c *Chain) resync(ctx context.Context) error {
	s, err := c.js.Stream(ctx, c.stream)
	if err != nil {
		return fmt.Errorf("audit stream %s: %w", c.stream, err)
	}
	m, err := s.GetLastMsgForSubject(ctx, c.subject)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		c.prev, c.seq = nil, 0
		return nil
	case err != nil:
		return fmt.Errorf("audit stream %s: reading %s: %w", c.stream, c.subject, err)
	}
	h := audit.HashOf(m.Data)
	if h == "" {
		return fmt.Errorf("audit stream %s: the last message on %s is not an audit line", c.stream, c.subject)
	}
	c.prev, c.seq = &h, m.Sequence
	return nil
}

// Append seals the record mk makes (given the hash of the line before it, nil for the first)
// and appends it, returning once the stream has stored it or ctx ends.
func (c *Chain) Append(ctx context.Context, mk func(prev *string) []byte) error {
	return c.Enqueue(mk)(ctx)
}

// Enqueue puts the record mk makes next in the chain, after every record enqueued before it,
// and returns what waits until the stream has stored it. A record that could not be stored
// is an error of its wait: the line is in the stream or it is not, never half.
func (c *Chain) Enqueue(mk func(prev *string) []byte) (wait func(ctx context.Context) error) {
	q := &queued{mk: mk, done: make(chan error, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, q)
	if !c.writing {
		c.writing = true
		go c.write()
	}
	c.mu.Unlock()
	return func(ctx context.Context) error {
		select {
		case err := <-q.done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// write appends what is queued, a batch at a time, until nothing is.
func (c *Chain) write() {
	for {
		c.mu.Lock()
		batch := c.queue
		if len(batch) > maxBatch {
			batch, c.queue = batch[:maxBatch:maxBatch], batch[maxBatch:]
		} else {
			c.queue = nil
		}
		if len(batch) == 0 {
			c.writing = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		c.appendBatch(batch)
	}
}

// appendBatch publishes batch back to back and tells each line's waiter how it went. After a
// failure the chain is read again from the stream: lines stored are done, the rest are
// sealed again after the last stored and tried once more.
func (c *Chain) appendBatch(batch []*queued) {
	ctx, cancel := context.WithTimeout(context.Background(), appendWait)
	defer cancel()
	var err error
	for try := 0; try < 2 && len(batch) > 0; try++ {
		if try > 0 {
			if rerr := c.resync(ctx); rerr != nil {
				err = fmt.Errorf("%w (then %v)", err, rerr)
				break
			}
			// the lines stored before the failure are done
			for i, h := range hashes(batch, c.prev0) {
				if c.prev != nil && h == *c.prev {
					for _, q := range batch[:i+1] {
						q.done <- nil
					}
					batch = batch[i+1:]
					break
				}
			}
			if len(batch) == 0 {
				return
			}
		}
		c.prev0 = c.prev
		futures := make([]jetstream.PubAckFuture, 0, len(batch))
		prev := c.prev
		var last string
		for i, q := range batch {
			line, h := audit.Seal(q.mk(prev))
			msg := &nats.Msg{Subject: c.subject, Data: line, Header: nats.Header{}}
			msg.Header.Set(jetstream.MsgIDHeader, h)
			var opts []jetstream.PublishOpt
			if i == 0 {
				opts = append(opts, jetstream.WithExpectLastSequencePerSubject(c.seq))
			}
			f, perr := c.js.PublishMsgAsync(msg, opts...)
			if perr != nil {
				err = perr
				break
			}
			futures = append(futures, f)
			hh := h
			prev, last = &hh, h
		}
		var lastSeq uint64
		// every line published is waited for, even after one failed: the chain is read
		// again only once none is still on its way
		for _, f := range futures {
			select {
			case ack := <-f.Ok():
				lastSeq = ack.Sequence
			case e := <-f.Err():
				if err == nil {
					err = e
				}
			case <-ctx.Done():
				if err == nil {
					err = ctx.Err()
				}
			}
		}
		if err == nil && len(futures) == len(batch) {
			c.prev, c.seq = &last, lastSeq
			for _, q := range batch {
				q.done <- nil
			}
			return
		}
	}
	err = fmt.Errorf("audit stream %s: %w", c.stream, err)
	for _, q := range batch {
		q.done <- err
	}
}

// hashes are the hashes the lines of batch were sealed with after prev.
func hashes(batch []*queued, prev *string) []string {
	hs := make([]string, len(batch))
	for i, q := range batch {
		_, h := audit.Seal(q.mk(prev))
		hs[i] = h
		prev = &hs[i]
	}
	return hs
}
