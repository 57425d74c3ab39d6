package fleet

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// attempt bounds one request to the server: a request sent as the server went away is never
// answered, and is sent again rather than waited for.
const attempt = 3 * time.Second

// retry runs op with a bound per attempt until it succeeds, fails for a reason other than an
// unanswered or undeliverable request, or ctx ends.
func retry(ctx context.Context, op func(context.Context) error) error {
	for {
		c, cancel := context.WithTimeout(ctx, attempt)
		err := op(c)
		cancel()
		if err == nil || !transient(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// transient reports whether err is the server being away (restarting, a leader election)
// rather than an answer.
func transient(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, jetstream.ErrJetStreamNotEnabled)
}
