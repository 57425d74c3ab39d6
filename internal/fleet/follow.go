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
// result: nil when all succeeded, else an error with exit code 1, or 6 when a limit stopped
// one of them (its result names the limit).
func FollowEvents(ctx context.Context, cl *Client, f Follow, out *wire.Writer) error {
	fw := newFollower(f, out)
	stream, err := cl.JS.Stream(ctx, EventsStream)
	if err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "the fleet's events: %v", err)
	}
	if f.ExitOnResult && !f.FromStart && len(f.Tasks) > 0 {
		if done, err := fw.finishedBefore(ctx, cl, stream); done || err != nil {
			return err
		}
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: followSubjects(f), DeliverPolicy: jetstream.DeliverNewPolicy}
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
	msgs, errc := pump(ctx, it)
	var j Joiner
	seen := dedup{}
	for {
		m, err := nextMsg(ctx, msgs, errc)
		if err != nil {
			out.Flush()
			return err
		}
		nm := &nats.Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()}
		data, done, err := j.Add(nm)
		if err != nil {
			return cmdutil.Errorf(cmdutil.ExitProtocol, "an event on %s: %v", m.Subject(), err)
		}
		if !done || !seen.fresh(nm) {
			continue
		}
		if end, err := fw.print(data, nm.Header); end || err != nil {
			return err
		}
		if len(msgs) == 0 {
			if err := out.Flush(); err != nil {
				return closed(err)
			}
		}
	}
}

// followSubjects are the subjects of the events f follows.
func followSubjects(f Follow) []string {
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
	return subjects
}

// follower prints events and keeps the tasks still waited for and those that failed.
type follower struct {
	f       Follow
	out     *wire.Writer
	want    map[string]bool
	failed  []string
	limited bool // a task waited for failed for a limit (its result names one)
}

func newFollower(f Follow, out *wire.Writer) *follower {
	fw := &follower{f: f, out: out, want: map[string]bool{}, failed: []string{}}
	for _, id := range f.Tasks {
		fw.want[id] = true
	}
	return fw
}

// finishedBefore prints the result of each task that finished before we came (its result is
// the last event on its subject) and stops waiting for it. It reports whether none is left,
// in which case err is the outcome.
func (fw *follower) finishedBefore(ctx context.Context, cl *Client, stream jetstream.Stream) (bool, error) {
	kv, err := cl.Bucket(ctx)
	if err != nil {
		return true, cmdutil.Errorf(cmdutil.ExitUnavailable, "%v", err)
	}
	for _, id := range fw.f.Tasks {
		r, _, ok, err := Lookup(ctx, kv, id)
		if err != nil {
			return true, cmdutil.Errorf(cmdutil.ExitUnavailable, "looking up task %s: %v", id, err)
		}
		if !ok {
			return true, cmdutil.Errorf(cmdutil.ExitFailed, "%s", UnknownRecord(id).Error)
		}
		if !Final(r.Status) {
			continue
		}
		if m, err := stream.GetLastMsgForSubject(ctx, EventSubject(r.Pool, id)); err == nil && m.Header.Get(HeaderChunk) == "" {
			if err := fw.out.WriteLine(Tag(m.Data, tags(m.Header))); err != nil {
				return true, closed(err)
			}
		}
		delete(fw.want, id)
		if !r.OK() {
			fw.failed = append(fw.failed, id+": "+r.Why())
			fw.limited = fw.limited || r.Limit != ""
		}
	}
	if len(fw.want) == 0 {
		fw.out.Flush()
		return true, outcome(fw.failed, len(fw.f.Tasks), fw.limited)
	}
	return false, nil
}

// print writes the events of one message (one, or several that arrived together, one a
// line), tagged with the fleet's fields of h. It reports whether following is over: every
// task waited for has its result (err is the outcome), or the output failed.
func (fw *follower) print(data []byte, h nats.Header) (bool, error) {
	tg := tags(h)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if err := fw.out.WriteLine(Tag(line, tg)); err != nil {
			return true, closed(err)
		}
		if fw.f.ExitOnResult && len(fw.want) > 0 && fw.result(h, line) {
			fw.out.Flush()
			return true, outcome(fw.failed, len(fw.f.Tasks), fw.limited)
		}
	}
	return false, nil
}

// result notes line when it is the result of a task waited for (h names it), and reports
// whether it was the last one waited for.
func (fw *follower) result(h nats.Header, line []byte) bool {
	id := h.Get(HeaderTask)
	if t, _ := wire.TopLevelString(line, "type"); t != wire.TypeResult || !fw.want[id] {
		return false
	}
	delete(fw.want, id)
	if ok, _ := topLevelBool(line, "succeeded"); !ok {
		fw.limited = fw.limited || h.Get(HeaderLimit) != ""
		em, _ := wire.TopLevelString(line, "errorMessage")
		if em == "" {
			em = "the task failed"
		}
		fw.failed = append(fw.failed, id+": "+em)
	}
	return len(fw.want) == 0
}

// pump hands the consumer's messages to a channel until it or ctx ends; an error that ended
// it is on the second channel.
func pump(ctx context.Context, it jetstream.MessagesContext) (<-chan jetstream.Msg, <-chan error) {
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
	return msgs, errc
}

// nextMsg is the next message pumped, or the error that ends following.
func nextMsg(ctx context.Context, msgs <-chan jetstream.Msg, errc <-chan error) (jetstream.Msg, error) {
	select {
	case m, ok := <-msgs:
		if ok {
			return m, nil
		}
	case <-ctx.Done():
		return nil, cmdutil.Errorf(cmdutil.ExitInterrupted, "interrupted")
	}
	select {
	case err := <-errc:
		return nil, cmdutil.Errorf(cmdutil.ExitUnavailable, "the fleet's events: %v", err)
	default:
		return nil, cmdutil.Errorf(cmdutil.ExitInterrupted, "interrupted")
	}
}

// dedup keeps, by subject, the event numbers seen lately.
type dedup map[string]*recent

// fresh reports whether m was not seen before: an event published twice (a retry after
// the server restarted) carries the same number on the same subject.
func (d dedup) fresh(m *nats.Msg) bool {
	seq, err := strconv.ParseUint(m.Header.Get(HeaderSeq), 10, 64)
	if err != nil {
		return true
	}
	r := d[m.Subject]
	if r == nil {
		r = &recent{set: map[uint64]bool{}}
		d[m.Subject] = r
	}
	return r.add(seq)
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
	return [][2]string{{"taskId", h.Get(HeaderTask)}, {"host", h.Get(HeaderHost)}, {"pool", h.Get(HeaderPool)}, {"daemon", h.Get(HeaderDaemon)}, {"limit", h.Get(HeaderLimit)}}
}

func closed(err error) error {
	if wire.IsBrokenPipe(err) {
		return nil
	}
	return err
}

// outcome is the end of following tasks to their results: nil when none failed, exit 1 when
// one did, 6 when a limit stopped one.
func outcome(failed []string, of int, limited bool) error {
	if len(failed) == 0 {
		return nil
	}
	code := cmdutil.ExitFailed
	if limited {
		code = cmdutil.ExitLimit // a task a limit stopped, as fr-dispatch wait says it
	}
	if of > 1 {
		return cmdutil.Errorf(code, "%s (%d of %d tasks did not succeed)", failed[len(failed)-1], len(failed), of)
	}
	return cmdutil.Errorf(code, "%s", failed[0])
}
