package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Setup makes sure the fleet's streams and bucket exist. What exists already is left as it
// is, so an operator may create them beforehand with replicas and limits of their own
// (docs/fleet.md shows how); what is missing is created with the defaults documented there.
func (c *Client) Setup(ctx context.Context) error {
	streams := []jetstream.StreamConfig{
		{
			Name:        TasksStream,
			Description: "fr fleet: tasks, one work queue per pool",
			Subjects:    []string{"fr.tasks.*"},
			Retention:   jetstream.WorkQueuePolicy,
			Storage:     jetstream.FileStorage,
			Duplicates:  DuplicateWindow,
		},
		{
			Name:        EventsStream,
			Description: "fr fleet: every task's events",
			Subjects:    []string{"fr.events.>"},
			Retention:   jetstream.LimitsPolicy,
			Storage:     jetstream.FileStorage,
			MaxAge:      EventsMaxAge,
			Duplicates:  2 * time.Minute,
		},
	}
	for _, cfg := range streams {
		if _, err := c.JS.Stream(ctx, cfg.Name); err == nil {
			continue
		} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("stream %s: %w", cfg.Name, err)
		}
		if _, err := c.JS.CreateStream(ctx, cfg); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("creating stream %s: %w", cfg.Name, err)
		}
	}
	_, err := c.Bucket(ctx)
	return err
}

// Bucket returns the task records' bucket, created when missing.
func (c *Client) Bucket(ctx context.Context) (jetstream.KeyValue, error) {
	kv, err := c.JS.KeyValue(ctx, TasksBucket)
	if err == nil {
		return kv, nil
	}
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("bucket %s: %w", TasksBucket, err)
	}
	kv, err = c.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      TasksBucket,
		Description: "fr fleet: each task's record and its one result",
		History:     1,
		TTL:         RecordTTL,
		Storage:     jetstream.FileStorage,
	})
	if errors.Is(err, jetstream.ErrBucketExists) {
		return c.JS.KeyValue(ctx, TasksBucket)
	}
	if err != nil {
		return nil, fmt.Errorf("creating bucket %s: %w", TasksBucket, err)
	}
	return kv, nil
}

// Consumer returns the work queue consumer of pool, created or updated with ackWait and
// maxDeliver. Every worker of the pool shares it. The consumer delivers a task once more than
// maxDeliver, so that the worker that gets it then can end it with a failed result.
func (c *Client) Consumer(ctx context.Context, pool string, ackWait time.Duration, maxDeliver int) (jetstream.Consumer, error) {
	return c.JS.CreateOrUpdateConsumer(ctx, TasksStream, jetstream.ConsumerConfig{
		Durable:       ConsumerName(pool),
		Description:   "fr-worker: tasks of pool " + pool,
		FilterSubject: TaskSubject(pool),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		MaxDeliver:    maxDeliver + 1,
		MaxAckPending: -1,
	})
}
