package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fuseraft/fr/internal/jsonscan"
)

// VersionError says that fuseraft sent a protocolVersion this build does not support.
type VersionError struct {
	Seen      int   // the version fuseraft sent
	Supported []int // the versions this build supports
	Where     string
}

// Error names the version found and the versions this package reads.
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

// Error says what in the output breaks the protocol.
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
//
// It accepts what DecodeEnvelope accepts, with one difference a stream forces: a field given
// twice is refused (DecodeEnvelope keeps the last, which a stream cannot take back).
func ReadEnvelope(r io.Reader, allowVersion bool, onItem func(raw []byte) error) (EnvelopeHead, error) {
	var head EnvelopeHead
	s := &envScanner{r: r, buf: make([]byte, 0, 64<<10)}
	fail := func(msg string) (EnvelopeHead, error) {
		if s.ioErr != nil {
			return head, s.ioErr
		}
		return head, protocolErr(msg, s.seen)
	}
	c, ok := s.skipSpace()
	if !ok {
		return fail("expected a JSON envelope, got no output") // or the read's error
	}
	if c != '{' {
		return fail("expected a JSON envelope")
	}
	s.pos++
	haveVersion, shapes := false, 0
	keys := map[string]bool{}
	for first := true; ; first = false {
		c, ok := s.skipSpace()
		if !ok {
			return fail("envelope is not valid JSON")
		}
		if first && c == '}' {
			s.pos++
			break
		}
		// A key, a colon, a value.
		key, ok := s.key()
		if !ok {
			return fail("envelope is not valid JSON")
		}
		if keys[key] {
			return fail("envelope has the field " + strconv.Quote(key) + " twice")
		}
		keys[key] = true
		c, ok = s.skipSpace()
		if !ok {
			return fail("envelope is not valid JSON")
		}
		var (
			stopped bool
			msg     string
			err     error
		)
		switch key {
		case "items":
			shapes++
			head.Shape = "items"
			stopped, msg, err = s.items(c, onItem)
		default:
			raw, ok := s.value(1, false)
			if !ok {
				return fail("envelope is not valid JSON")
			}
			if key == "protocolVersion" {
				haveVersion = true
			} else if key == "item" || key == "error" {
				shapes++
			}
			stopped, msg, err = head.field(key, raw, allowVersion, onItem)
		}
		switch {
		case err != nil:
			return head, err
		case msg != "":
			return fail(msg)
		case stopped:
			return head, nil
		}
		c, ok = s.skipSpace()
		if !ok {
			return fail("envelope is not valid JSON")
		}
		s.pos++
		if c == '}' {
			break
		}
		if c != ',' {
			return fail("envelope is not valid JSON")
		}
	}
	if _, ok := s.skipSpace(); ok {
		return fail("expected exactly one JSON envelope")
	}
	if s.ioErr != nil {
		return head, s.ioErr
	}
	if msg := envelopeComplete(haveVersion, shapes); msg != "" {
		return fail(msg)
	}
	if err := CheckVersion(head.ProtocolVersion, "the envelope"); err != nil && !allowVersion {
		return head, err
	}
	return head, nil
}

// envelopeComplete says what a whole envelope read lacks, "" for nothing.
func envelopeComplete(haveVersion bool, shapes int) string {
	switch {
	case !haveVersion:
		return "envelope has no protocolVersion"
	case shapes != 1:
		return "envelope must have exactly one of items, item and error"
	}
	return ""
}

// items reads the array of "items" (c is its first byte), passing each element to onItem.
// It returns stopped when onItem returned ErrStop, a message when the envelope is not valid,
// or onItem's error.
func (s *envScanner) items(c byte, onItem func(raw []byte) error) (stopped bool, msg string, err error) {
	const invalid = "envelope is not valid JSON"
	if c != '[' {
		if _, ok := s.value(1, false); !ok {
			return false, invalid, nil
		}
		return false, "envelope's items is not an array", nil
	}
	s.pos++
	for n := 0; ; n++ {
		c, ok := s.skipSpace()
		if !ok {
			return false, invalid, nil
		}
		if c == ']' {
			s.pos++
			return false, "", nil
		}
		if n > 0 {
			if c != ',' {
				return false, invalid, nil
			}
			s.pos++
			if _, ok := s.skipSpace(); !ok {
				return false, invalid, nil
			}
		}
		raw, ok := s.value(2, false)
		if !ok {
			return false, invalid, nil
		}
		if err := onItem(raw); err != nil {
			if err == ErrStop {
				return true, "", nil
			}
			return false, "", err
		}
	}
}

// field takes in the value of a field of the envelope other than "items": protocolVersion
// (checked at once), item (passed to onItem) or error. It returns as items does.
func (head *EnvelopeHead) field(key string, raw []byte, allowVersion bool, onItem func(raw []byte) error) (stopped bool, msg string, err error) {
	switch key {
	case "protocolVersion":
		// As DecodeEnvelope reads it: a JSON integer (null leaves it 0).
		if err := json.Unmarshal(raw, &head.ProtocolVersion); err != nil {
			return false, "envelope's protocolVersion is not an integer", nil
		}
		if err := CheckVersion(head.ProtocolVersion, "the envelope"); err != nil && !allowVersion {
			return false, "", err
		}
	case "item":
		head.Shape = "item"
		if string(raw) == "null" {
			return false, "envelope's item is null", nil
		}
		if err := onItem(raw); err != nil {
			if err == ErrStop {
				return true, "", nil
			}
			return false, "", err
		}
	case "error":
		head.Shape = "error"
		var m string
		if err := json.Unmarshal(raw, &m); err != nil {
			return false, "envelope's error is not a string", nil
		}
		head.Error = &m
	}
	return false, "", nil
}

// key reads an object's key and the colon after it.
func (s *envScanner) key() (string, bool) {
	raw, ok := s.value(1, true)
	if !ok {
		return "", false
	}
	key, ok := jsonKey(raw)
	if !ok {
		return "", false
	}
	if c, ok := s.skipSpace(); !ok || c != ':' {
		return "", false
	}
	s.pos++
	return key, true
}

// jsonKey decodes an object key given with its quotes.
func jsonKey(raw []byte) (string, bool) {
	plain := true
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(raw[1 : len(raw)-1]), true
	}
	var k string
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", false
	}
	return k, true
}

// envScanner reads one JSON document from a stream in blocks, handing out each value's bytes
// from its buffer: memory grows only to the largest single value. Values are checked as
// strictly as encoding/json checks them, its nesting limit included.
type envScanner struct {
	r     io.Reader
	buf   []byte // read so far; unread from pos on
	pos   int
	eof   bool
	ioErr error
	seen  []byte // the first bytes read, for error messages
}

// more reads another block, keeping buf[pos:]. It reports false at the end of the input.
func (s *envScanner) more() bool {
	if s.eof {
		return false
	}
	if s.pos > 0 {
		n := copy(s.buf, s.buf[s.pos:])
		s.buf = s.buf[:n]
		s.pos = 0
	}
	if cap(s.buf)-len(s.buf) < 32<<10 {
		nb := make([]byte, len(s.buf), 2*cap(s.buf)+64<<10)
		copy(nb, s.buf)
		s.buf = nb
	}
	for {
		n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		if n > 0 && len(s.seen) < 512 {
			s.seen = append(s.seen, s.buf[len(s.buf):len(s.buf)+min(n, 512-len(s.seen))]...)
		}
		s.buf = s.buf[:len(s.buf)+n]
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.ioErr = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// skipSpace moves past JSON whitespace and returns the next byte, false at the end of input.
func (s *envScanner) skipSpace() (byte, bool) {
	for {
		for s.pos < len(s.buf) {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\r', '\n':
				s.pos++
			default:
				return c, true
			}
		}
		if !s.more() {
			return 0, false
		}
	}
}

// value scans the JSON value at pos (whitespace already skipped) at nesting depth, returns
// its bytes and moves past it. A value cut by the end of the buffer is scanned again once
// more is read. keyOnly accepts only a string.
func (s *envScanner) value(depth int, keyOnly bool) ([]byte, bool) {
	for {
		if s.pos >= len(s.buf) && !s.more() {
			return nil, false
		}
		if keyOnly && s.buf[s.pos] != '"' {
			return nil, false
		}
		end, st := scanValue(s.buf, s.pos, depth, s.eof)
		switch st {
		case scanOK:
			raw := s.buf[s.pos:end]
			s.pos = end
			return raw, true
		case scanShort:
			// Scan again once more has come: after any read for a value under 1 MiB (so
			// items are passed on as they arrive), else once the bytes have doubled, so a
			// value of any size is scanned O(1) times per byte.
			scanned := len(s.buf) - s.pos
			need := 1
			if scanned >= 1<<20 {
				need = scanned
			}
			for len(s.buf)-s.pos-scanned < need {
				if !s.more() {
					if len(s.buf)-s.pos > scanned {
						break // the input ended: one last scan says how
					}
					return nil, false
				}
			}
		default:
			return nil, false
		}
	}
}

type scanState int

const (
	scanOK scanState = iota
	scanShort
	scanBad
)

// scanValue finds the end of the JSON value starting at b[i], at nesting depth (of what
// holds it), with jsonscan's validator. atEOF says no more bytes come after b. A value the
// end of b may have cut is scanShort: a number that ends there (more digits may come), or a
// value that stops being valid within the last few bytes (an unclosed string or container, a
// literal or an escape cut short); the caller reads more and scans again, and at the end of
// the input scanShort is as bad as scanBad.
func scanValue(b []byte, i, depth int, atEOF bool) (int, scanState) {
	end, ok := jsonscan.ValueEndDepth(b, i, depth)
	switch {
	case atEOF && !ok:
		return end, scanBad
	case atEOF:
		return end, scanOK
	case !ok && end >= len(b)-len(`\u000`):
		return end, scanShort
	case !ok:
		return end, scanBad
	case end == len(b) && b[end-1] >= '0' && b[end-1] <= '9':
		return end, scanShort
	}
	return end, scanOK
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
