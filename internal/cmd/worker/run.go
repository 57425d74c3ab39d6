package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/internal/fleet/embedded"
	"github.com/fuseraft/fr/pkg/wire"
)

// worker is one running fr-worker.
type worker struct {
	s        cmdutil.Streams
	o        *options
	cl       *fleet.Client
	kv       jetstream.KeyValue
	cons     jetstream.Consumer
	pub      *fleet.Publisher
	daemonID string // the daemon's token in subjects
	daemon   string // the daemon, for tags

	inflight  atomic.Int32 // tasks handed to the daemon and not finished
	daemonSeq atomic.Uint64
	slots     []*slot
	logMu     sync.Mutex
}

func run(ctx context.Context, s cmdutil.Streams, o *options) error {
	if o.approver == nil {
		o.approver = &fleet.DenyAll{Warn: s.Err, Prog: prog}
	}
	if o.embedded != "" {
		if err := os.MkdirAll(o.store, 0o700); err != nil {
			return cmdutil.Usagef("--nats-store: %v", err)
		}
		srv, err := embedded.Start(o.embedded, o.store)
		if err != nil {
			return cmdutil.Errorf(cmdutil.ExitUnavailable, "%v", err)
		}
		defer srv.Shutdown()
		if o.conn.URL == "" {
			o.conn.URL = srv.URL()
		}
		cmdutil.Sayf(s.Err, prog, "embedded NATS server listening at %s (store %s)", srv.URL(), o.store)
	}
	dialCtx, cancelDial := context.WithTimeout(ctx, 30*time.Second)
	cl, err := fleet.Dial(dialCtx, o.conn)
	cancelDial()
	if err != nil {
		return err
	}
	defer cl.Close()
	w := &worker{s: s, o: o, cl: cl, daemon: o.daemon.String()}
	h := sha256.Sum256([]byte(o.host + "\x00" + w.daemon))
	w.daemonID = hex.EncodeToString(h[:6])
	setupCtx, cancelSetup := context.WithTimeout(ctx, 30*time.Second)
	defer cancelSetup()
	if err := cl.Setup(setupCtx); err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "setting up the fleet on %s: %v", o.conn, err)
	}
	if w.kv, err = cl.Bucket(setupCtx); err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "%v", err)
	}
	if w.cons, err = cl.Consumer(setupCtx, o.pool, o.ackWait, o.maxDeliver); err != nil {
		return cmdutil.Errorf(cmdutil.ExitUnavailable, "the work queue of pool %s: %v", o.pool, err)
	}
	w.pub = fleet.NewPublisher(cl.JS, cl.NC.MaxPayload())
	defer w.pub.Close()
	if o.budget == nil {
		tb, err := openBudget(setupCtx, o, cl.JS)
		if err != nil {
			return err
		}
		if tb != nil {
			defer tb.Close()
			tb.stop = w.limitStopTask
			o.budget = tb
		}
	}
	if o.approvers {
		a, err := natsApprovers(setupCtx, s, cl, o)
		if err != nil {
			return err
		}
		defer a.Close()
		o.approver = a
	}

	// runCtx outlives ctx (the first signal) by --drain-timeout, or until a second signal.
	runCtx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	go func() {
		<-ctx.Done()
		second := make(chan os.Signal, 1)
		signal.Notify(second, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(second)
		if w.inflight.Load() > 0 {
			cmdutil.Sayf(s.Err, prog, "draining: no new task; %d running may finish within %s (a second signal hands them back now)", w.inflight.Load(), o.drainTimeout)
		}
		select {
		case <-second:
		case <-time.After(o.drainTimeout):
		case <-runCtx.Done():
		}
		cancelRun()
	}()

	w.slots = make([]*slot, o.capacity)
	base := "fr-worker-" + randomID()
	for i := range w.slots {
		w.slots[i] = &slot{w: w, i: i, clientID: base + "-" + strconv.Itoa(i), up: make(chan struct{})}
	}
	var wg sync.WaitGroup
	for _, sl := range w.slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sl.run(ctx, runCtx)
		}()
	}
	if o.readyFile != "" {
		if err := writeReady(o.readyFile, o.conn.URL); err != nil {
			cmdutil.Warnf(s.Err, prog, "--ready-file: %v", err)
		}
	}
	wg.Wait()
	syncCtx, cancelSync := context.WithTimeout(context.Background(), 10*time.Second)
	w.pub.Sync(syncCtx)
	cancelSync()
	if err := ctx.Err(); err != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return ctx.Err()
}

func (w *worker) warnf(format string, args ...any) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	cmdutil.Warnf(w.s.Err, prog, format, args...)
}

func (w *worker) errorf(format string, args ...any) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	fmt.Fprintf(w.s.Err, "%s: error: %s\n", prog, fmt.Sprintf(format, args...))
}

func (w *worker) sayf(format string, args ...any) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	cmdutil.Sayf(w.s.Err, prog, format, args...)
}

// publish sends one event (split when larger than the server takes) to subject.
func (w *worker) publish(subject string, seq uint64, raw []byte, hdr map[string]string) {
	parts := fleet.Split(raw, w.pub.MaxPayload())
	for i, p := range parts {
		m := nats.NewMsg(subject)
		for k, v := range hdr {
			m.Header.Set(k, v)
		}
		m.Header.Set(fleet.HeaderSeq, strconv.FormatUint(seq, 10))
		if len(parts) > 1 {
			m.Header.Set(fleet.HeaderChunk, fleet.ChunkHeader(i, len(parts)))
		}
		m.Data = append([]byte(nil), p...)
		if err := w.pub.Publish(m); err != nil {
			return
		}
	}
}

// publishOwned sends one message whose data the caller gives up (not copied).
func (w *worker) publishOwned(subject string, seq uint64, data []byte, hdr map[string]string) {
	m := nats.NewMsg(subject)
	for k, v := range hdr {
		m.Header.Set(k, v)
	}
	m.Header.Set(fleet.HeaderSeq, strconv.FormatUint(seq, 10))
	m.Data = data
	w.pub.Publish(m)
}

// record is the base of a task's record.
func (w *worker) record(t fleet.Task, deliveries int) fleet.Record {
	return fleet.Record{TaskID: t.TaskID, Task: t.Task, Pool: w.o.pool, Host: w.o.host, Deliveries: deliveries}
}

// finish stores a task's result: its result event (once, by its message id) and its final
// record. It reports whether this was the task's result (false: it had one already).
func (w *worker) finish(ctx context.Context, t fleet.Task, rec fleet.Record, resultEvent []byte, seq uint64, session string) (bool, error) {
	if err := w.pub.Sync(ctx); err != nil {
		return false, err
	}
	// A result already there is the task's: nothing more is published for it.
	if cur, _, ok, err := fleet.Lookup(ctx, w.kv, t.TaskID); err == nil && ok && fleet.Final(cur.Status) {
		return false, nil
	}
	m := nats.NewMsg(fleet.EventSubject(w.o.pool, t.TaskID))
	m.Header.Set(fleet.HeaderHost, w.o.host)
	m.Header.Set(fleet.HeaderPool, w.o.pool)
	m.Header.Set(fleet.HeaderTask, t.TaskID)
	m.Header.Set(fleet.HeaderSeq, strconv.FormatUint(seq, 10))
	if session != "" {
		m.Header.Set(fleet.HeaderSession, session)
	}
	hdr := map[string]string{fleet.HeaderHost: w.o.host, fleet.HeaderPool: w.o.pool, fleet.HeaderTask: t.TaskID}
	if rec.Limit != "" {
		m.Header.Set(fleet.HeaderLimit, rec.Limit)
		hdr[fleet.HeaderLimit] = rec.Limit
	}
	m.Data = resultEvent
	if len(resultEvent) < int(w.pub.MaxPayload())-8<<10 {
		if err := w.pub.PublishSync(ctx, m, jetstream.WithMsgID("result-"+t.TaskID)); err != nil {
			return false, err
		}
	} else {
		w.publish(m.Subject, seq, resultEvent, hdr)
		if err := w.pub.Sync(ctx); err != nil {
			return false, err
		}
	}
	for {
		_, err := fleet.Put(ctx, w.kv, rec)
		if errors.Is(err, fleet.ErrFinal) {
			return false, nil
		}
		if err == nil {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// workerResult is the result event a worker writes itself for a task that ends without one
// from a daemon (a bad message, too many deliveries, a limit), shaped as the daemon's.
func workerResult(t fleet.Task, why string) []byte {
	b, _ := json.Marshal(struct {
		Type         string  `json:"type"`
		SessionID    *string `json:"sessionId"`
		Task         string  `json:"task"`
		Succeeded    bool    `json:"succeeded"`
		ErrorMessage string  `json:"errorMessage"`
		LastAgent    *string `json:"lastAgent"`
		LastMessage  *string `json:"lastMessage"`
	}{Type: wire.TypeResult, Task: t.Task, ErrorMessage: why})
	return b
}
