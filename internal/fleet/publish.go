package fleet

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Publisher publishes events to JetStream without waiting for each acknowledgement, in order,
// with a bounded number in flight (so a worker's memory stays bounded whatever a task sends):
// a publish the server did not acknowledge (it restarted, say) is published again, until it
// is stored or the Publisher is closed. Sync waits until everything published before it is
// stored.
type Publisher struct {
	js   jetstream.JetStream
	q    chan pending
	mu   sync.Mutex
	cond *sync.Cond
	sent uint64 // published so far
	done uint64 // acknowledged so far
	err  error  // set once the Publisher gave up (closed)
	stop chan struct{}
	once sync.Once
	max  int64
}

type pending struct {
	msg *nats.Msg
	fut jetstream.PubAckFuture
}

// NewPublisher starts a Publisher over js. maxPayload is the server's maximum payload.
func NewPublisher(js jetstream.JetStream, maxPayload int64) *Publisher {
	p := &Publisher{js: js, q: make(chan pending, 4096), stop: make(chan struct{}), max: maxPayload}
	p.cond = sync.NewCond(&p.mu)
	go p.acks()
	return p
}

// MaxPayload is the server's maximum payload, for Split.
func (p *Publisher) MaxPayload() int64 { return p.max }

// Publish sends msg; it blocks while 4096 messages wait for their acknowledgement.
func (p *Publisher) Publish(msg *nats.Msg) error {
	fut, err := p.publishAsync(msg)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.sent++
	p.mu.Unlock()
	select {
	case p.q <- pending{msg: msg, fut: fut}:
		return nil
	case <-p.stop:
		return errClosed
	}
}

var errClosed = errors.New("the publisher is closed")

func (p *Publisher) publishAsync(msg *nats.Msg) (jetstream.PubAckFuture, error) {
	for {
		fut, err := p.js.PublishMsgAsync(msg)
		if err == nil {
			return fut, nil
		}
		// Too many in flight or no connection right now: wait a little, then again.
		select {
		case <-p.stop:
			return nil, errClosed
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// acks waits for each acknowledgement in order, and publishes again, synchronously, what was
// not acknowledged.
func (p *Publisher) acks() {
	for {
		var pd pending
		select {
		case pd = <-p.q:
		case <-p.stop:
			return
		}
		var err error
		select {
		case <-pd.fut.Ok():
		case err = <-pd.fut.Err():
		case <-p.stop:
			return
		}
		for err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err = p.js.PublishMsg(ctx, copyMsg(pd.msg))
			cancel()
			if err != nil {
				select {
				case <-p.stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
		p.mu.Lock()
		p.done++
		p.cond.Broadcast()
		p.mu.Unlock()
	}
}

func copyMsg(m *nats.Msg) *nats.Msg {
	return &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data}
}

// Sync waits until every message published before the call is stored, or ctx ends.
func (p *Publisher) Sync(ctx context.Context) error {
	p.mu.Lock()
	target := p.sent
	p.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.done < target {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case <-p.stop:
			return errClosed
		default:
		}
		p.cond.Wait()
	}
	return nil
}

// PublishSync publishes msg and waits for it to be stored, trying again until ctx ends.
func (p *Publisher) PublishSync(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) error {
	for {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := p.js.PublishMsg(c, copyMsg(msg), opts...)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close stops the Publisher; what was not acknowledged is given up.
func (p *Publisher) Close() {
	p.once.Do(func() {
		close(p.stop)
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
}
