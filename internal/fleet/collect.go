package fleet

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Collector delivers the final record of each task it is given, once, as soon as the task
// has one, whichever worker stored it: it watches the bucket, and looks each task up again
// every few seconds too, so a watch broken by a server restart loses nothing.
type Collector struct {
	kv   jetstream.KeyValue
	mu   sync.Mutex
	want map[string]bool
	out  chan Record
	poll time.Duration
}

// NewCollector starts watching; it ends with ctx.
func NewCollector(ctx context.Context, kv jetstream.KeyValue) (*Collector, error) {
	c := &Collector{kv: kv, want: map[string]bool{}, out: make(chan Record, 64), poll: 2 * time.Second}
	wt, err := kv.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		return nil, err
	}
	go func() {
		defer wt.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-wt.Updates():
				if !ok {
					return
				}
				if e == nil || e.Operation() != jetstream.KeyValuePut {
					continue
				}
				if r, err := ParseRecord(e.Value()); err == nil {
					c.offer(ctx, e.Key(), r)
				}
			}
		}
	}()
	go c.sweep(ctx)
	return c, nil
}

// Add asks for id's result.
func (c *Collector) Add(ctx context.Context, id string) {
	c.mu.Lock()
	c.want[id] = true
	c.mu.Unlock()
	c.check(ctx, id)
}

func (c *Collector) check(ctx context.Context, id string) {
	r, _, ok, err := Lookup(ctx, c.kv, id)
	if err == nil && ok {
		c.offer(ctx, id, r)
	}
}

// offer delivers r when it is final and wanted, once.
func (c *Collector) offer(ctx context.Context, id string, r Record) {
	if !Final(r.Status) {
		return
	}
	c.mu.Lock()
	w := c.want[id]
	delete(c.want, id)
	c.mu.Unlock()
	if !w {
		return
	}
	select {
	case c.out <- r:
	case <-ctx.Done():
	}
}

// sweep looks every task still wanted up again, now and then.
func (c *Collector) sweep(ctx context.Context) {
	t := time.NewTicker(c.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.mu.Lock()
		ids := make([]string, 0, len(c.want))
		for id := range c.want {
			ids = append(ids, id)
		}
		c.mu.Unlock()
		for _, id := range ids {
			c.check(ctx, id)
		}
	}
}

// Results are the final records, in the order the tasks finished.
func (c *Collector) Results() <-chan Record { return c.out }
