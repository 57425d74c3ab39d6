// Package arrival stamps each line a command writes with the time it arrived, and reads the
// stamp back. Protocol v1 carries no time on its events, so a recording made without stamps
// loses when things happened; with them, fr-otel can place every event where it was.
//
// The stamp is one more field, added last to a JSON object: "frArrivedAt" holding an RFC 3339
// time in UTC with nanoseconds. Everything before it is the line as it came, so a reader that
// ignores fields it does not know (as the protocol asks) reads the same event. A line that is
// not a JSON object is written as it is.
package arrival

import (
	"bytes"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/pkg/wire"
)

// Field is the name of the field a Stamper adds.
const Field = "frArrivedAt"

// FlagUsage is the usage line of the flag that turns stamping on, the same in every command.
const FlagUsage = `add a "` + Field + `" field (the time the line arrived, RFC 3339 UTC) to each JSON line written`

var key = []byte(`"` + Field + `":"`)

// Stamper adds the arrival time to lines. A nil *Stamper leaves every line as it is, so a
// command holds one whether or not stamping was asked for. It is safe for concurrent use.
type Stamper struct {
	now func() time.Time
}

// New returns a Stamper that reads the time from now (time.Now when nil).
func New(now func() time.Time) *Stamper {
	if now == nil {
		now = time.Now
	}
	return &Stamper{now: now}
}

// Line returns raw with the stamp added (a new slice) when raw is a JSON object, else raw
// itself; a nil Stamper returns raw.
func (s *Stamper) Line(raw []byte) []byte {
	if s == nil {
		return raw
	}
	return s.Add(raw, s.now())
}

// Event is Line for a line the caller has parsed already and found to be an event (a JSON
// object, wire.EventLine): it is not parsed again.
func (s *Stamper) Event(raw []byte) []byte {
	if s == nil {
		return raw
	}
	return s.stamp(raw, s.now(), true)
}

// Add is Line with the time given.
func (s *Stamper) Add(raw []byte, t time.Time) []byte { return s.stamp(raw, t, false) }

// stamp adds t to raw when raw is a JSON object; valid says the caller knows it is JSON.
func (s *Stamper) stamp(raw []byte, t time.Time, valid bool) []byte {
	end := len(raw)
	for end > 0 && (raw[end-1] == ' ' || raw[end-1] == '\t' || raw[end-1] == '\r') {
		end--
	}
	start := 0
	for start < end && (raw[start] == ' ' || raw[start] == '\t') {
		start++
	}
	if end-start < 2 || raw[start] != '{' || raw[end-1] != '}' {
		return raw
	}
	if !valid && wire.ParseLine(raw).Kind == wire.Noise {
		return raw
	}
	body := bytes.TrimRight(raw[:end-1], " \t\r\n")
	b := make([]byte, 0, len(body)+len(key)+40)
	b = append(b, body...)
	if len(bytes.TrimSpace(body[start+1:])) > 0 { // not {}
		b = append(b, ',')
	}
	b = append(b, key...)
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"', '}')
}

// Read returns the stamp of line, when it has one. It looks at the end of the line first,
// where a Stamper puts it, and then anywhere at the top level (a line another tool rewrote).
func Read(line []byte) (time.Time, bool) {
	tail := line
	if len(tail) > 80 {
		tail = tail[len(tail)-80:]
	}
	if i := bytes.LastIndex(tail, key); i >= 0 {
		v := tail[i+len(key):]
		if j := bytes.IndexByte(v, '"'); j > 0 {
			if t, err := time.Parse(time.RFC3339Nano, string(v[:j])); err == nil {
				if rest := bytes.TrimLeft(v[j+1:], " \t\r"); len(rest) > 0 && rest[0] == '}' {
					return t, true
				}
			}
		}
	}
	if !bytes.Contains(line, key[:len(key)-1]) {
		return time.Time{}, false
	}
	v, ok := wire.TopLevelString(line, Field)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil
}

// Flag is the flag that turns stamping on, the same in every command that has it.
func Flag() cli.Flag {
	return &cli.BoolFlag{Name: "arrival-time", Usage: FlagUsage}
}

// FromFlag returns the Stamper the command line asks for: nil unless --arrival-time.
func FromFlag(c *cli.Context, now func() time.Time) *Stamper {
	if !c.Bool("arrival-time") {
		return nil
	}
	return New(now)
}
