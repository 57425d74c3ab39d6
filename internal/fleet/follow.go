package fleet

import (
	"bytes"
	"context"
	"errors"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// Follow says what fr-attach --nats prints.
type Follow struct {
	Pool         string   // the pool; with Tasks, "" means whatever pool each task is in
	Tasks        []string // task ids; none: every event of the pool
	FromStart    bool     // from the first event kept, else from now on
	ExitOnResult bool     // with Tasks: end once each has its result
}

// FollowEvents prints the fleet's events as fr-attach prints a daemon's: each event's line
// unchanged, with the fleet's fields (taskId, host, pool, and daemon for progress no task
// was named for) added after its own. With ExitOnResult it ends once every task has its
// result: nil when all succeeded, else an error with exit code 1.
func FollowEvents(ctx context.Context, cl *Client, f Follow, out *wire.Writer) error {
	var subjects []string
	for _, id := range f.Tasks {
		if f.Pool != "" {
			subjects = append(subjects, EventSubject(f.Pool, id))
		} else {
			subjects = append(subjects, AnyPoolTask(id))
		}
	}
	if len(subjects) == 0 {
		subjects = []string{PoolEvents(f.Pool)}
	}
	want := map[string]bool{}
	failed := []string{}
	for _, id := range f.Tasks {
		want[id] = true
	}
	stream, err := cl.JS.Stream(ctx, EventsStream)
	if err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "the fleet's events: %v", err)
	}
	if f.ExitOnResult && !f.FromStart && len(f.Tasks) > 0 {
		// A task that finished before we came: its result is the last event on its subject.
		kv, err := cl.Bucket(ctx)
		if err != nil {
			return cmdutil.Errorf(cmdutil.ExitUnavailable, "%v", err)
		}
		for _, id := range f.Tasks {
			r, _, ok, err := Lookup(ctx, kv, id)
			if err != nil {
				return cmdutil.Errorf(cmdutil.ExitUnavailable, "looking up task %s: %v", id, err)
			}
			if !ok {
				return cmdutil.Errorf(cmdutil.ExitFailed, "%s", UnknownRecord(id).Error)
			}
			if !Final(r.Status) {
				continue
			}
			if m, err := stream.GetLastMsgForSubject(ctx, EventSubject(r.Pool, id)); err == nil && m.Header.Get(HeaderChunk) == "" {
				line := Tag(m.Data, tags(m.Header))
				if err := out.WriteLine(line); err != nil {
					return closed(err)
				}
			}
			delete(want, id)
			if !r.OK() {
				failed = append(failed, id+": "+r.Why())
			}
		}
		if len(want) == 0 {
			out.Flush()
			return outcome(failed, len(f.Tasks))
		}
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: subjects, DeliverPolicy: jetstream.DeliverNewPolicy}
	if f.FromStart {
		cfg.DeliverPolicy = jetstream.DeliverAllPolicy
	}
	cons, err := cl.JS.OrderedConsumer(ctx, EventsStream, cfg)
	if err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "following the fleet's events: %v", err)
	}
	it, err := cons.Messages()
	if err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "following the fleet's events: %v", err)
	}
	defer it.Stop()
	msgs := make(chan jetstream.Msg, 1024)
	errc := make(chan error, 1)
	go func() {
		defer close(msgs)
		for {
			m, err := it.Next()
			if err != nil {
				if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					errc <- err
				}
				return
			}
			select {
			case msgs <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	var j Joiner
	seen := map[string]*recent{}
	for {
		var m jetstream.Msg
		var ok bool
		select {
		case m, ok = <-msgs:
		case <-ctx.Done():
			out.Flush()
			return cmdutil.Errorf(cmdutil.ExitInterrupted, "interrupted")
		}
		if !ok {
			out.Flush()
			select {
			case err := <-errc:
				return cmdutil.Errorf(cmdutil.ExitUnavailable, "the fleet's events: %v", err)
			default:
				return cmdutil.Errorf(cmdutil.ExitInterrupted, "interrupted")
			}
		}
		nm := &nats.Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()}
		data, done, err := j.Add(nm)
		if err != nil {
			return cmdutil.Errorf(cmdutil.ExitProtocol, "an event on %s: %v", m.Subject(), err)
		}
		if !done {
			continue
		}
		if seq, err := strconv.ParseUint(nm.Header.Get(HeaderSeq), 10, 64); err == nil {
			r := seen[m.Subject()]
			if r == nil {
				r = &recent{set: map[uint64]bool{}}
				seen[m.Subject()] = r
			}
			if !r.add(seq) {
				continue // published twice (a retry after the server restarted)
			}
		}
		tg := tags(nm.Header)
		for len(data) > 0 {
			// A message holds one event, or several that arrived together, one a line.
			line := data
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				line, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			if err := out.WriteLine(Tag(line, tg)); err != nil {
				return closed(err)
			}
			if !f.ExitOnResult || len(want) == 0 {
				continue
			}
			id := nm.Header.Get(HeaderTask)
			if t, _ := wire.TopLevelString(line, "type"); t == wire.TypeResult && want[id] {
				delete(want, id)
				if ok, _ := topLevelBool(line, "succeeded"); !ok {
					em, _ := wire.TopLevelString(line, "errorMessage")
					if em == "" {
						em = "the task failed"
					}
					failed = append(failed, id+": "+em)
				}
				if len(want) == 0 {
					out.Flush()
					return outcome(failed, len(f.Tasks))
				}
			}
		}
		if len(msgs) == 0 {
			if err := out.Flush(); err != nil {
				return closed(err)
			}
		}
	}
}

// recent remembers the event numbers seen on one subject lately.
type recent struct {
	set map[uint64]bool
	max uint64
}

func (r *recent) add(seq uint64) bool {
	if r.set[seq] {
		return false
	}
	r.set[seq] = true
	if seq > r.max {
		r.max = seq
	}
	if len(r.set) > 4096 {
		for s := range r.set {
			if s+2048 < r.max {
				delete(r.set, s)
			}
		}
	}
	return true
}

func topLevelBool(b []byte, key string) (bool, bool) {
	var v, found bool
	jsonFields(b, func(k, raw []byte) {
		if string(k) == key {
			found = true
			v = string(raw) == "true"
		}
	})
	return v, found
}

func tags(h nats.Header) [][2]string {
	return [][2]string{{"taskId", h.Get(HeaderTask)}, {"host", h.Get(HeaderHost)}, {"pool", h.Get(HeaderPool)}, {"daemon", h.Get(HeaderDaemon)}}
}

func closed(err error) error {
	if wire.IsBrokenPipe(err) {
		return nil
	}
	return err
}

func outcome(failed []string, of int) error {
	if len(failed) == 0 {
		return nil
	}
	if of > 1 {
		return cmdutil.Errorf(cmdutil.ExitFailed, "%s (%d of %d tasks did not succeed)", failed[len(failed)-1], len(failed), of)
	}
	return cmdutil.Errorf(cmdutil.ExitFailed, "%s", failed[0])
}
