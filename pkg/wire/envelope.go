package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// VersionError says that fuseraft sent a protocolVersion this build does not support.
type VersionError struct {
	Seen      int   // the version fuseraft sent
	Supported []int // the versions this build supports
	Where     string
}

func (e *VersionError) Error() string {
	where := e.Where
	if where == "" {
		where = "fuseraft"
	}
	return fmt.Sprintf("%s speaks protocolVersion %d; this build of fr supports %s",
		where, e.Seen, versionList(e.Supported))
}

func versionList(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// CheckVersion returns a *VersionError unless v is one of SupportedVersions. where names what
// carried the version in the message ("the ready event", "the envelope"); it may be empty.
func CheckVersion(v int, where string) error {
	for _, s := range SupportedVersions {
		if v == s {
			return nil
		}
	}
	return &VersionError{Seen: v, Supported: SupportedVersions, Where: where}
}

// ProtocolError says that fuseraft's output broke the contract: an envelope that is not one, or
// a handshake missing its fields. Seen holds (a prefix of) what was seen.
type ProtocolError struct {
	Msg  string
	Seen string
}

func (e *ProtocolError) Error() string {
	if e.Seen == "" {
		return e.Msg
	}
	return e.Msg + ": " + e.Seen
}

func protocolErr(msg string, seen []byte) *ProtocolError {
	const max = 200
	s := strings.TrimSpace(string(seen))
	if len(s) > max {
		s = s[:max] + "…"
	}
	if s == "" {
		s = "(nothing)"
	}
	return &ProtocolError{Msg: msg, Seen: s}
}

// Envelope is the one line a --json command prints: items, or one item, or an error.
type Envelope struct {
	ProtocolVersion int
	// Items holds each element of "items" as its original bytes. It is nil (not empty) when
	// the envelope has "item" or "error" instead.
	Items []json.RawMessage
	// Item is the "item" field, nil when absent.
	Item json.RawMessage
	// Error is the "error" field; an envelope with it reports a failure.
	Error *string
}

// Shape names which of items, item and error the envelope carries.
func (e *Envelope) Shape() string {
	switch {
	case e.Error != nil:
		return "error"
	case e.Item != nil:
		return "item"
	}
	return "items"
}

// DecodeEnvelope parses a whole envelope, checks that it has exactly one of items, item and
// error, and checks its protocolVersion (a *VersionError when unsupported; the envelope is
// still returned so the caller may go on when the user allows it). Anything that is not an
// envelope is a *ProtocolError.
func DecodeEnvelope(b []byte) (*Envelope, error) {
	var raw map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil || raw == nil {
		return nil, protocolErr("expected a JSON envelope", b)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, protocolErr("expected exactly one JSON envelope", b)
	}
	env := &Envelope{}
	pv, ok := raw["protocolVersion"]
	if !ok {
		return nil, protocolErr("envelope has no protocolVersion", b)
	}
	if err := json.Unmarshal(pv, &env.ProtocolVersion); err != nil {
		return nil, protocolErr("envelope's protocolVersion is not an integer", b)
	}
	shapes := 0
	if v, ok := raw["items"]; ok {
		shapes++
		if err := json.Unmarshal(v, &env.Items); err != nil || env.Items == nil {
			return nil, protocolErr("envelope's items is not an array", b)
		}
	}
	if v, ok := raw["item"]; ok {
		shapes++
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return nil, protocolErr("envelope's item is null", b)
		}
		env.Item = v
	}
	if v, ok := raw["error"]; ok {
		shapes++
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, protocolErr("envelope's error is not a string", b)
		}
		env.Error = &s
	}
	if shapes != 1 {
		return nil, protocolErr("envelope must have exactly one of items, item and error", b)
	}
	return env, CheckVersion(env.ProtocolVersion, "the envelope")
}

// EnvelopeHead is what ReadEnvelope learned of an envelope besides its items.
type EnvelopeHead struct {
	ProtocolVersion int
	Shape           string  // "items", "item" or "error"
	Error           *string // for Shape "error"
}

// ErrStop may be returned by a ReadEnvelope callback to stop reading without an error.
var ErrStop = errors.New("stop")

// ReadEnvelope streams an envelope from r, calling onItem with the original bytes of each
// element of "items" (or of "item") as soon as it is decoded, so an envelope of any size is read
// in bounded memory. The protocolVersion is checked as soon as it is seen; fuseraft writes it
// first, and when it comes after the items they have already been passed on. The callback's
// slice is only valid during the call. allowVersion makes an unsupported version not an error
// (the caller warns). It returns a *ProtocolError when r does not hold exactly one envelope.
func ReadEnvelope(r io.Reader, allowVersion bool, onItem func(raw []byte) error) (EnvelopeHead, error) {
	var head EnvelopeHead
	seen := &prefixRecorder{}
	d := json.NewDecoder(io.TeeReader(r, seen))
	d.UseNumber()
	fail := func(msg string) (EnvelopeHead, error) {
		return head, protocolErr(msg, seen.b)
	}
	tok, err := d.Token()
	if err != nil {
		if err == io.EOF {
			return fail("expected a JSON envelope, got no output")
		}
		return fail("expected a JSON envelope")
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '{' {
		return fail("expected a JSON envelope")
	}
	haveVersion := false
	shapes := 0
	var raw json.RawMessage
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return fail("envelope is not valid JSON")
		}
		key, _ := tok.(string)
		switch key {
		case "protocolVersion":
			var n json.RawMessage
			if err := d.Decode(&n); err != nil {
				return fail("envelope's protocolVersion is not an integer")
			}
			v, err := strconv.Atoi(string(n))
			if err != nil {
				return fail("envelope's protocolVersion is not an integer")
			}
			head.ProtocolVersion, haveVersion = v, true
			if err := CheckVersion(v, "the envelope"); err != nil && !allowVersion {
				return head, err
			}
		case "items":
			shapes++
			head.Shape = "items"
			tok, err := d.Token()
			if err != nil {
				return fail("envelope is not valid JSON")
			}
			if delim, ok := tok.(json.Delim); !ok || delim != '[' {
				return fail("envelope's items is not an array")
			}
			for d.More() {
				raw = raw[:0]
				if err := d.Decode(&raw); err != nil {
					return fail("envelope is not valid JSON")
				}
				if err := onItem(raw); err != nil {
					if err == ErrStop {
						return head, nil
					}
					return head, err
				}
			}
			if _, err := d.Token(); err != nil {
				return fail("envelope is not valid JSON")
			}
		case "item":
			shapes++
			head.Shape = "item"
			raw = raw[:0]
			if err := d.Decode(&raw); err != nil {
				return fail("envelope is not valid JSON")
			}
			if string(raw) == "null" {
				return fail("envelope's item is null")
			}
			if err := onItem(raw); err != nil {
				if err == ErrStop {
					return head, nil
				}
				return head, err
			}
		case "error":
			shapes++
			head.Shape = "error"
			var s string
			if err := d.Decode(&s); err != nil {
				return fail("envelope's error is not a string")
			}
			head.Error = &s
		default:
			var skip json.RawMessage
			if err := d.Decode(&skip); err != nil {
				return fail("envelope is not valid JSON")
			}
		}
	}
	if _, err := d.Token(); err != nil {
		return fail("envelope is not valid JSON")
	}
	if _, err := d.Token(); err != io.EOF {
		return fail("expected exactly one JSON envelope")
	}
	if !haveVersion {
		return fail("envelope has no protocolVersion")
	}
	if shapes != 1 {
		return fail("envelope must have exactly one of items, item and error")
	}
	if err := CheckVersion(head.ProtocolVersion, "the envelope"); err != nil && !allowVersion {
		return head, err
	}
	return head, nil
}

// prefixRecorder keeps the first bytes of what a streaming decode saw, for error messages.
type prefixRecorder struct{ b []byte }

func (p *prefixRecorder) Write(b []byte) (int, error) {
	if room := 512 - len(p.b); room > 0 {
		p.b = append(p.b, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

// CheckHandshake checks the protocolVersion of a ready or hello event: a *ProtocolError when it
// is missing or not an integer, a *VersionError when this build does not support it.
func CheckHandshake(ev Event) error {
	if !json.Valid(ev.Raw) {
		return protocolErr("the "+ev.Type+" event is not valid JSON", ev.Raw)
	}
	raw, ok := topLevelRaw(ev.Raw, "protocolVersion")
	if !ok || string(raw) == "null" {
		return protocolErr("the "+ev.Type+" event has no protocolVersion", ev.Raw)
	}
	v, err := strconv.Atoi(string(raw))
	if err != nil {
		return protocolErr("the "+ev.Type+" event's protocolVersion is not an integer", ev.Raw)
	}
	return CheckVersion(v, "the "+ev.Type+" event")
}
