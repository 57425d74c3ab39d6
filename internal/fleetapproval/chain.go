package fleetapproval

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/auditchain"
)

// Chain appends one writer's hash chain to the audit stream, on a subject of its own
// (AuditSubject). Each line is published with the sequence the writer last saw on that subject
// expected (so two writers given the same id cannot interleave their lines: the second is
// refused) and with its hash as the message id (so a publish retried after a lost
// acknowledgement is stored once). A Chain opened on a subject that already holds lines goes
// on from its last line: a writer restarted with the same id extends its chain.
type Chain struct {
	js      jetstream.JetStream
	stream  string
	subject string

	mu   sync.Mutex
	prev *string
	seq  uint64 // the stream sequence of the last line on subject, 0 when none
}

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
	h := auditchain.HashOf(m.Data)
	if h == "" {
		return fmt.Errorf("audit stream %s: the last message on %s is not an audit line", c.stream, c.subject)
	}
	c.prev, c.seq = &h, m.Sequence
	return nil
}

// Append seals the record mk makes (given the hash of the line before it, nil for the first)
// and appends it, returning once the stream has stored it. After a failure the chain is read
// again from the stream and the line tried once more: a line is stored once or not at all,
// and the chain never forks.
func (c *Chain) Append(ctx context.Context, mk func(prev *string) []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var err error
	for try := 0; try < 2; try++ {
		if try > 0 {
			if rerr := c.resync(ctx); rerr != nil {
				return fmt.Errorf("%w (then %v)", err, rerr)
			}
		}
		line, h := auditchain.Seal(mk(c.prev))
		if try > 0 && c.prev != nil && *c.prev == h {
			return nil // the first try was stored; its acknowledgement was lost
		}
		msg := &nats.Msg{Subject: c.subject, Data: line, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, h)
		var ack *jetstream.PubAck
		ack, err = c.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(c.seq))
		if err == nil {
			c.prev, c.seq = &h, ack.Sequence
			return nil
		}
	}
	return fmt.Errorf("audit stream %s: %w", c.stream, err)
}

// ChainLog is what the audit stream holds on one subject: one writer's lines, in order.
type ChainLog struct {
	Subject string
	Data    []byte // the lines, each ending in a line end
	Lines   int
}

// ReadStream reads every message the audit stream holds now, and returns them per subject,
// in the order each subject first appears.
func ReadStream(ctx context.Context, js jetstream.JetStream, stream string) ([]ChainLog, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("audit stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit stream %s: %w", stream, err)
	}
	last := info.State.LastSeq
	var logs []ChainLog
	if info.State.Msgs == 0 {
		return logs, nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return nil, fmt.Errorf("audit stream %s: %w", stream, err)
	}
	at := map[string]int{}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("audit stream %s: %w", stream, err)
	}
	defer it.Stop()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			it.Stop()
		case <-done:
		}
	}()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("audit stream %s: %w", stream, ctx.Err())
			}
			return nil, fmt.Errorf("audit stream %s: %w", stream, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return nil, fmt.Errorf("audit stream %s: %w", stream, err)
		}
		i, ok := at[m.Subject()]
		if !ok {
			i = len(logs)
			at[m.Subject()] = i
			logs = append(logs, ChainLog{Subject: m.Subject()})
		}
		logs[i].Data = append(append(logs[i].Data, m.Data()...), '\n')
		logs[i].Lines++
		if md.Sequence.Stream >= last {
			return logs, nil
		}
	}
}
