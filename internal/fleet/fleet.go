// Package fleet is what fr's commands share to run tasks on many fuseraft serve daemons
// through NATS JetStream: how to reach the server (flags, environment, credentials), the names
// of the streams, bucket and subjects and their setup, the task, event and result messages, the
// splitting of events larger than the server's maximum payload, and the server fr-worker
// embeds. See docs/fleet.md for what the fleet promises.
//
// The layout on the server:
//
//	FR_TASKS   stream, work queue: fr.tasks.POOL carries one message per task (Nats-Msg-Id is
//	           the task id, so a publish repeated within the duplicate window is stored once);
//	           the durable consumer fr-workers-POOL hands each to one worker at a time.
//	FR_EVENTS  stream, limits: fr.events.POOL.task.TASKID carries a task's events, unchanged,
//	           tagged in headers; fr.events.POOL.daemon.DAEMON the progress events no single
//	           task can be named for.
//	fr-tasks   key-value bucket: TASKID holds the task's record (queued, running, then its
//	           one result), updated by compare-and-set.
package fleet

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"time"
)

// Names of what the fleet keeps on the server.
const (
	TasksStream  = "FR_TASKS"
	EventsStream = "FR_EVENTS"
	TasksBucket  = "fr-tasks"
)

// Retention and windows, documented in docs/fleet.md.
const (
	// DuplicateWindow is how long a task id published again is recognised by JetStream and
	// stored once. The task's record outlives it: fr-dispatch looks there first.
	DuplicateWindow = time.Hour
	// RecordTTL is how long a task's record (and so its result) is kept.
	RecordTTL = 7 * 24 * time.Hour
	// EventsMaxAge is how long events are kept for --from-start and late readers.
	EventsMaxAge = 24 * time.Hour
	// DefaultPool is the pool when --pool is not given.
	DefaultPool = "default"
)

// Headers a worker adds to the messages it publishes. The body of an event message is the
// daemon's line, unchanged.
const (
	HeaderHost    = "Fr-Host"
	HeaderPool    = "Fr-Pool"
	HeaderTask    = "Fr-Task"
	HeaderDaemon  = "Fr-Daemon"
	HeaderSession = "Fr-Session"
	HeaderSeq     = "Fr-Seq"   // the event's number within its task (or daemon), from 1
	HeaderChunk   = "Fr-Chunk" // "I/N": part I (from 1) of an event split in N parts
	HeaderCount   = "Fr-Count" // how many events, newline-separated, the message holds (1 when absent)
	HeaderLimit   = "Fr-Limit" // on a result: the limit that stopped the task (--max-turns), as its record's "limit"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidName reports whether s may be a pool or a task id: 1-64 of A-Z a-z 0-9 - _ (one token
// of a NATS subject, and a key of the bucket).
func ValidName(s string) bool { return nameRE.MatchString(s) }

// CheckName is ValidName as an error naming the flag.
func CheckName(what, s string) error {
	if !ValidName(s) {
		return fmt.Errorf("%s %q is not valid: it must be 1-64 of A-Z a-z 0-9 - _", what, s)
	}
	return nil
}

// NewTaskID returns a random task id.
func NewTaskID() string {
	var b [12]byte
	rand.Read(b[:])
	return "t-" + hex.EncodeToString(b[:])
}

// TaskSubject is where tasks for pool are published.
func TaskSubject(pool string) string { return "fr.tasks." + pool }

// EventSubject is where the events of a task go.
func EventSubject(pool, task string) string { return "fr.events." + pool + ".task." + task }

// DaemonSubject is where a daemon's progress events go when no single task can be named.
func DaemonSubject(pool, daemon string) string { return "fr.events." + pool + ".daemon." + daemon }

// PoolEvents is every event of a pool; AnyPoolTask every event of a task, whatever its pool.
func PoolEvents(pool string) string  { return "fr.events." + pool + ".>" }
func AnyPoolTask(task string) string { return "fr.events.*.task." + task }

// ConsumerName is the durable consumer every worker of pool shares.
func ConsumerName(pool string) string { return "fr-workers-" + pool }
