package budget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// KVStore keeps the running totals in a NATS JetStream key-value bucket, for runs on many
// hosts (--budget-kv): the same totals as a budget file, per day and per week in local time.
//
// Each day's totals are one key, day.YYYY-MM-DD (a week's are the sum of its days), and the
// turns in flight and the largest turn one key, shared. Every update is a compare-and-set on
// the key's revision, tried again when another run updated it first: concurrent runs on any
// number of hosts never lose an update. A turn in flight is believed for kvTurnStale after
// its run last said so (a run says so again at least every kvTurnRefresh while its turn goes
// on): a run whose host died is forgotten that much later.
type KVStore struct {
	kv     jetstream.KeyValue
	name   string
	closer func()
}

const (
	kvTurnStale   = 10 * time.Minute
	kvTurnRefresh = time.Minute
	kvTries       = 1000 // compare-and-set tries of one update before it fails
)

// kvSharedValue is what runs share besides the totals: their turns in flight, and the most
// tokens a turn took.
type kvSharedValue struct {
	InFlight map[string]kvTurn `json:"turnsInFlight,omitempty"`
	Largest  int64             `json:"largestTurnTokens,omitempty"`
}

type kvTurn struct {
	Since time.Time `json:"since"`
	Seen  time.Time `json:"seen"`
}

// OpenKV opens the bucket, making it (file storage, one revision a key) if it is not there.
// name is what messages call it (nats://HOST:PORT/BUCKET).
func OpenKV(ctx context.Context, js jetstream.JetStream, bucket, name string) (*KVStore, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, History: 1,
			Description: "fr: running totals of turns, tokens, time and cost, per day", Storage: jetstream.FileStorage})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, bucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", bucket, err)
	}
	if name == "" {
		name = bucket
	}
	return &KVStore{kv: kv, name: name}, nil
}

// Name is the bucket as given.
func (s *KVStore) Name() string { return s.name }

// OnClose sets what Close does: close the connection the store was opened on.
func (s *KVStore) OnClose(f func()) { s.closer = f }

// Close closes the connection the store was opened on, when OnClose said how.
func (s *KVStore) Close() {
	if s.closer != nil {
		s.closer()
	}
}

// kvTimeout bounds one Commit: a server that does not answer is a store that cannot be
// updated, which the Budget takes as a breach. (A variable: tests shorten it.)
var kvTimeout = 30 * time.Second

func dayKey(t time.Time) string { return "day." + DayKey(t) }

// Read returns the totals of the day and of the week now falls in.
func (s *KVStore) Read(now time.Time) (day, week Usage, err error) {
	day, week, _, err = s.Commit(now, Usage{}, nil)
	return day, week, err
}

// Add adds d to the totals of the day and of the week now falls in, and returns them.
func (s *KVStore) Add(now time.Time, d Usage) (day, week Usage, err error) {
	day, week, _, err = s.Commit(now, d, nil)
	return day, week, err
}

// Commit adds d to today's totals, records t, and returns the day's and the week's totals and
// the other runs' turns in flight.
func (s *KVStore) Commit(now time.Time, d Usage, t *Turn) (day, week Usage, sh Shared, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), kvTimeout)
	defer cancel()
	// The day's totals and the turns in flight are one value, updated by one compare-and-set,
	// so that no run sees the one without the other (as under the budget file's lock).
	v, err := s.commitDay(ctx, now, d, t)
	if err != nil {
		return Usage{}, Usage{}, Shared{}, err
	}
	day = v.Usage
	week = day
	// the other days of the week: Monday to Sunday, local time
	local := now.Local()
	wd := (int(local.Weekday()) + 6) % 7
	for i := 0; i < 7; i++ {
		if i == wd {
			continue
		}
		u, _, err := s.get(ctx, dayKey(local.AddDate(0, 0, i-wd)))
		if err != nil {
			return Usage{}, Usage{}, Shared{}, err
		}
		week = week.Add(u)
	}
	sh.Largest = v.Largest
	for id, tr := range v.InFlight {
		if (t == nil || id != t.Run) && now.Sub(tr.Seen) <= kvTurnStale {
			sh.Others++
		}
	}
	return day, week, sh, nil
}

// kvDayValue is a day key's value: the day's totals, and the turns in flight (which belong
// to the day they are in flight on).
type kvDayValue struct {
	Usage
	kvSharedValue
}

// commitDay adds d to the day's totals and records t, in one compare-and-set, and returns
// the day's value.
func (s *KVStore) commitDay(ctx context.Context, now time.Time, d Usage, t *Turn) (kvDayValue, error) {
	key := dayKey(now)
	for try := 1; try <= kvTries; try++ {
		var v kvDayValue
		var rev uint64
		e, err := s.kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return v, fmt.Errorf("bucket %s: %s: %w", s.name, key, err)
		default:
			rev = e.Revision()
			if err := json.Unmarshal(e.Value(), &v); err != nil {
				return v, fmt.Errorf("bucket %s: %s is not a budget total: %v", s.name, key, err)
			}
			if !validUsage(v.Usage) {
				return v, fmt.Errorf("bucket %s: %s: a total is negative", s.name, key)
			}
		}
		changed := d != (Usage{})
		v.Usage = v.Usage.Add(d)
		if t != nil && s.changes(&v.kvSharedValue, now, *t) {
			changed = true
		}
		if !changed {
			return v, nil
		}
		b, _ := json.Marshal(v)
		conflict, err := s.cas(ctx, key, b, rev)
		if err != nil {
			return v, err
		}
		if !conflict {
			return v, nil
		}
		if err := backoff(ctx, try); err != nil {
			return v, fmt.Errorf("bucket %s: %s: %w", s.name, key, err)
		}
	}
	return kvDayValue{}, fmt.Errorf("bucket %s: %s: still updated by other runs after %d tries", s.name, key, kvTries)
}

func validUsage(u Usage) bool {
	return u.Runs >= 0 && u.Turns >= 0 && u.Input >= 0 && u.Output >= 0 && u.Cached >= 0 && u.Seconds >= 0 && u.CostUSD >= 0
}

// get reads a day's totals and their revision (0: no such key).
func (s *KVStore) get(ctx context.Context, key string) (Usage, uint64, error) {
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Usage{}, 0, nil
	}
	if err != nil {
		return Usage{}, 0, fmt.Errorf("bucket %s: %s: %w", s.name, key, err)
	}
	var u Usage
	if err := json.Unmarshal(e.Value(), &u); err != nil {
		return Usage{}, 0, fmt.Errorf("bucket %s: %s is not a budget total: %v", s.name, key, err)
	}
	if !validUsage(u) {
		return Usage{}, 0, fmt.Errorf("bucket %s: %s: a total is negative", s.name, key)
	}
	return u, e.Revision(), nil
}

// cas updates key from the revision read (0: create it) and says whether another run got
// there first.
func (s *KVStore) cas(ctx context.Context, key string, b []byte, rev uint64) (conflict bool, err error) {
	if rev == 0 {
		_, err = s.kv.Create(ctx, key, b)
	} else {
		_, err = s.kv.Update(ctx, key, b, rev)
	}
	if err == nil {
		return false, nil
	}
	var apiErr *jetstream.APIError
	if errors.Is(err, jetstream.ErrKeyExists) || (errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence) {
		return true, nil
	}
	return false, fmt.Errorf("bucket %s: %s: %w", s.name, key, err)
}

// backoff waits a moment, a little longer each try, so that runs that collided spread out.
func backoff(ctx context.Context, try int) error {
	d := time.Duration(rand.Int64N(int64(time.Millisecond)*int64(min(try, 20)) + 1))
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// changes applies t to v, forgetting stale turns, and reports whether v changed.
func (s *KVStore) changes(v *kvSharedValue, now time.Time, t Turn) bool {
	changed := false
	for id, tr := range v.InFlight {
		if id != t.Run && now.Sub(tr.Seen) > kvTurnStale {
			delete(v.InFlight, id)
			changed = true
		}
	}
	if t.Done > v.Largest {
		v.Largest, changed = t.Done, true
	}
	tr, was := v.InFlight[t.Run]
	switch {
	case t.InFlight && (!was || now.Sub(tr.Seen) >= kvTurnRefresh):
		if v.InFlight == nil {
			v.InFlight = map[string]kvTurn{}
		}
		if !was {
			tr.Since = now.UTC()
		}
		tr.Seen = now.UTC()
		v.InFlight[t.Run] = tr
		changed = true
	case !t.InFlight && was:
		delete(v.InFlight, t.Run)
		changed = true
	}
	return changed
}
