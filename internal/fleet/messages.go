package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/jsonscan"
)

// Task is the message published on fr.tasks.POOL: one task for one worker.
type Task struct {
	TaskID      string    `json:"taskId"`
	Task        string    `json:"task"`
	Pool        string    `json:"pool"`
	PublishedAt time.Time `json:"publishedAt"`
}

// ParseTask reads a task message. A message that is not a JSON object with a valid taskId and
// a task that is not blank is an error saying what is wrong; the task id is returned whenever
// it could be read, so that the worker can record the failure under it.
func ParseTask(data []byte) (Task, error) {
	var t Task
	if !json.Valid(data) || !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		return t, errors.New("the task message is not a JSON object")
	}
	if err := json.Unmarshal(data, &t); err != nil {
		return Task{}, fmt.Errorf("the task message does not read as a task: %v", err)
	}
	if !ValidName(t.TaskID) {
		id := t.TaskID
		t.TaskID = ""
		return t, fmt.Errorf("the task message's taskId %q is not valid (1-64 of A-Z a-z 0-9 - _)", id)
	}
	if strings.TrimSpace(t.Task) == "" {
		return t, errors.New("the task is empty")
	}
	return t, nil
}

// Statuses of a record: queued and running, then one of the two final ones.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusUnknown   = "unknown"
)

// Final reports whether status is a finished task's.
func Final(status string) bool { return status == StatusCompleted || status == StatusFailed }

// Record is a task's entry in the fr-tasks bucket, and the line fr-dispatch prints for it.
// Once final (completed or failed) it is the task's one result, never overwritten: the
// daemon's sessionId, succeeded, errorMessage, lastAgent and lastMessage are the result
// event's.
type Record struct {
	TaskID       string          `json:"taskId"`
	SessionID    json.RawMessage `json:"sessionId,omitempty"`
	Status       string          `json:"status"`
	Succeeded    *bool           `json:"succeeded,omitempty"`
	ErrorMessage json.RawMessage `json:"errorMessage,omitempty"`
	LastAgent    json.RawMessage `json:"lastAgent,omitempty"`
	LastMessage  json.RawMessage `json:"lastMessage,omitempty"`
	Task         string          `json:"task,omitempty"`
	Pool         string          `json:"pool"`
	Host         string          `json:"host,omitempty"`
	Deliveries   int             `json:"deliveries,omitempty"`
	UpdatedAt    time.Time       `json:"updatedAt"`
	Error        string          `json:"error,omitempty"` // unknown: why
	// Limit is the limit that stopped the task, by its flag ("--max-turns"): it was not
	// handed to a daemon, or it was interrupted there. fr-dispatch exits 6 for it.
	Limit string `json:"limit,omitempty"`
}

// Line is the record as one JSON line (no newline).
func (r Record) Line() []byte {
	b, _ := json.Marshal(r)
	return b
}

// OK reports whether the record is a task that succeeded.
func (r Record) OK() bool { return r.Status == StatusCompleted && r.Succeeded != nil && *r.Succeeded }

// Why says why a record is not a success, for messages.
func (r Record) Why() string {
	switch {
	case r.Status == StatusUnknown:
		return r.Error
	case !Final(r.Status):
		return "still " + r.Status
	case len(r.ErrorMessage) > 0 && string(r.ErrorMessage) != "null":
		var s string
		if json.Unmarshal(r.ErrorMessage, &s) == nil {
			return s
		}
	}
	return "the task failed"
}

// ParseRecord reads a bucket entry.
func ParseRecord(b []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("a task record that is not JSON: %v", err)
	}
	return r, nil
}

// UnknownRecord is the line for an id the fleet has no record of.
func UnknownRecord(id string) Record {
	return Record{TaskID: id, Status: StatusUnknown, Error: fmt.Sprintf("no task %q in the fleet (records are kept %s)", id, durText(RecordTTL))}
}

func durText(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}

// ResultRecord makes the final record from the daemon's result event.
func ResultRecord(base Record, result []byte) Record {
	r := base
	r.Status = StatusFailed
	ok := false
	jsonscan.Fields(result, func(key, raw []byte) bool {
		switch string(key) {
		case "sessionId":
			r.SessionID = append(json.RawMessage(nil), raw...)
		case "succeeded":
			ok = string(raw) == "true"
		case "errorMessage":
			r.ErrorMessage = append(json.RawMessage(nil), raw...)
		case "lastAgent":
			r.LastAgent = append(json.RawMessage(nil), raw...)
		case "lastMessage":
			r.LastMessage = append(json.RawMessage(nil), raw...)
		}
		return true
	})
	if ok {
		r.Status = StatusCompleted
	}
	r.Succeeded = &ok
	nullIfEmpty(&r.ErrorMessage)
	nullIfEmpty(&r.LastAgent)
	nullIfEmpty(&r.LastMessage)
	if len(r.SessionID) == 0 {
		r.SessionID = json.RawMessage("null")
	}
	return r
}

func nullIfEmpty(m *json.RawMessage) {
	if len(*m) == 0 {
		*m = json.RawMessage("null")
	}
}

// FailedRecord is a final record for a task that did not run to a result: why says so.
func FailedRecord(base Record, why string) Record {
	r := base
	r.Status = StatusFailed
	f := false
	r.Succeeded = &f
	msg, _ := json.Marshal(why)
	r.ErrorMessage = msg
	if len(r.SessionID) == 0 {
		r.SessionID = json.RawMessage("null")
	}
	nullIfEmpty(&r.LastAgent)
	nullIfEmpty(&r.LastMessage)
	return r
}

// Lookup returns a task's record; ok is false when there is none.
func Lookup(ctx context.Context, kv jetstream.KeyValue, id string) (Record, uint64, bool, error) {
	var e jetstream.KeyValueEntry
	err := retry(ctx, func(c context.Context) error {
		var err error
		e, err = kv.Get(c, id)
		return err
	})
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Record{}, 0, false, nil
	}
	if err != nil {
		return Record{}, 0, false, err
	}
	r, err := ParseRecord(e.Value())
	return r, e.Revision(), err == nil, err
}

// ErrFinal is returned by Put when the task already has its result: the record was not
// changed, and the result in it stands.
var ErrFinal = errors.New("the task already has its result")

// Put writes r as the task's record by compare-and-set, unless the record there is already
// final: so however many workers run a task, its first result is its only one. A queued
// record is written only where there is none (a worker may have been faster).
func Put(ctx context.Context, kv jetstream.KeyValue, r Record) (Record, error) {
	r.UpdatedAt = time.Now().UTC()
	for attempt := 0; ; attempt++ {
		cur, rev, ok, err := Lookup(ctx, kv, r.TaskID)
		if err != nil {
			return r, err
		}
		if ok && Final(cur.Status) {
			if r.Status == cur.Status && string(r.SessionID) == string(cur.SessionID) && r.Host == cur.Host && r.Deliveries == cur.Deliveries {
				return cur, nil // ours: an earlier attempt was stored, its answer lost
			}
			return cur, ErrFinal
		}
		if ok && r.Status == StatusQueued {
			return cur, nil
		}
		if ok {
			if r.Task == "" {
				r.Task = cur.Task
			}
			if len(r.SessionID) == 0 {
				r.SessionID = cur.SessionID
			}
			err = retry(ctx, func(c context.Context) error {
				_, err := kv.Update(c, r.TaskID, r.Line(), rev)
				return err
			})
		} else {
			err = retry(ctx, func(c context.Context) error {
				_, err := kv.Create(c, r.TaskID, r.Line())
				return err
			})
		}
		if err == nil {
			return r, nil
		}
		if !isConflict(err) || attempt > 100 {
			return r, err
		}
	}
}

func isConflict(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		return true
	}
	return errors.Is(err, jetstream.ErrKeyExists)
}

// Tag adds the fleet's fields to an event line for fr-attach's output: taskId, host, pool
// (and daemon, for progress no task can be named for), each after the event's own fields and
// only where the event has no field of that name. A line that is not a JSON object is
// returned unchanged.
func Tag(line []byte, fields [][2]string) []byte {
	end := bytes.LastIndexByte(line, '}')
	if end < 0 {
		return line
	}
	have := map[string]bool{}
	if !jsonscan.Fields(line, func(key, _ []byte) bool {
		have[string(key)] = true
		return true
	}) {
		return line
	}
	out := make([]byte, 0, len(line)+96)
	out = append(out, line[:end]...)
	empty := len(have) == 0
	for _, f := range fields {
		if f[1] == "" || have[f[0]] {
			continue
		}
		if !empty {
			out = append(out, ',')
		}
		empty = false
		k, _ := json.Marshal(f[0])
		v, _ := json.Marshal(f[1])
		out = append(append(append(out, k...), ':'), v...)
	}
	return append(out, line[end:]...)
}

// Publish sends task t to its pool's queue, once: a task id the bucket knows already is not
// published again (its record is returned), and a publish repeated within DuplicateWindow is
// stored once by JetStream. It returns the task's record.
func (c *Client) Publish(ctx context.Context, kv jetstream.KeyValue, t Task) (Record, error) {
	if cur, _, ok, err := Lookup(ctx, kv, t.TaskID); err != nil {
		return Record{}, err
	} else if ok {
		return cur, nil
	}
	if t.PublishedAt.IsZero() {
		t.PublishedAt = time.Now().UTC()
	}
	b, _ := json.Marshal(t)
	if err := retry(ctx, func(c2 context.Context) error {
		_, err := c.JS.Publish(c2, TaskSubject(t.Pool), b, jetstream.WithMsgID(t.TaskID))
		return err
	}); err != nil {
		return Record{}, err
	}
	r, err := Put(ctx, kv, Record{TaskID: t.TaskID, Status: StatusQueued, Task: t.Task, Pool: t.Pool})
	if errors.Is(err, ErrFinal) {
		err = nil
	}
	return r, err
}

func jsonFields(b []byte, fn func(k, raw []byte)) {
	jsonscan.Fields(b, func(k, raw []byte) bool {
		fn(k, raw)
		return true
	})
}
