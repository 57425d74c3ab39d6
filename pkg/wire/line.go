package wire

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/jsonscan"
)

// Kind says what a line of a live stream is.
type Kind int

const (
	// Noise is a line that is not JSON: slash-command output, a banner, a stray message, or
	// JSON whose bytes are not UTF-8 (RFC 8259 §8.1: JSON text is UTF-8; strict readers
	// reject anything else). It must never reach a consumer as data.
	Noise Kind = iota
	// OtherJSON is valid JSON that is not an event: not an object, or an object without a
	// string "type".
	OtherJSON
	// EventLine is a JSON object with a string "type" field.
	EventLine
)

// String returns the kind's name, as used in messages.
func (k Kind) String() string {
	switch k {
	case EventLine:
		return "event"
	case OtherJSON:
		return "json"
	}
	return "noise"
}

// Line is one classified line of a stream.
type Line struct {
	Raw  []byte // the line as read, without its line end
	Kind Kind
	// Type is the event type of an EventLine. On a Noise line it is set only for a prompt
	// that was not UTF-8 text, which a Conn answered itself (NotText).
	Type string
	// text is what ParseLine learned of the bytes of a line that is JSON (TextFlags).
	text uint8
}

// textKnown marks Line.text as set by ParseLine.
const textKnown = 1 << 7

// TextFlags returns what ParseLine learned of the bytes of a line that is JSON, so that a
// decoder of the line need not look again: internal/jsonscan's TextFlags (a byte of 0x80 or
// more; a \u escape), with its CheckedUTF8 flag when those bytes are UTF-8. ok is false for a line
// that is not JSON or that ParseLine did not make.
func (l Line) TextFlags() (flags int, ok bool) {
	return int(l.text &^ textKnown), l.text&textKnown != 0
}

// Event returns the line as an Event; ok is false unless the line is an event.
func (l Line) Event() (ev Event, ok bool) {
	if l.Kind != EventLine {
		return Event{}, false
	}
	return Event{Type: l.Type, Raw: l.Raw}, true
}

// Clone returns a copy of l whose Raw no longer aliases the reader's buffer.
func (l Line) Clone() Line {
	l.Raw = append([]byte(nil), l.Raw...)
	return l
}

// ParseLine classifies one line. Whitespace around the JSON is allowed. When an object has the
// key "type" more than once, the last one counts, as in jq. A line whose bytes are not UTF-8
// is Noise, however well formed, but for a prompt (approval_request or question): that stays
// an EventLine, so that the Gate counts it and it still gets its one answer, and NotText
// says it must be answered without being passed on.
func ParseLine(b []byte) Line {
	// One pass validates the line and finds its type, as json.Valid and a full decode would.
	// (Each result is built where it is returned: a Line is too big to live in registers, and
	// one built and then copied costs as much as scanning a short line.)
	valid, _, rawType, typeEsc := jsonscan.ScanType(b)
	if !valid {
		return Line{Raw: b}
	}
	text := uint8(jsonscan.TextFlags(b)) | textKnown
	if text&jsonscan.HighBytes != 0 {
		if !utf8.Valid(b) {
			if rawType != nil {
				if t := eventType(rawType, typeEsc); isPrompt(t) {
					return Line{Raw: b, Kind: EventLine, Type: t, text: text}
				}
			}
			return Line{Raw: b}
		}
		text |= jsonscan.CheckedUTF8
	}
	if rawType == nil {
		return Line{Raw: b, Kind: OtherJSON, text: text}
	}
	return Line{Raw: b, Kind: EventLine, Type: eventType(rawType, typeEsc), text: text}
}

// isUTF8 reports whether b is UTF-8: a quick look for bytes over 0x7f, and a full check only
// when there are some.
func isUTF8(b []byte) bool {
	return jsonscan.TextFlags(b)&jsonscan.HighBytes == 0 || utf8.Valid(b)
}

// NotText reports whether l is a prompt (approval_request or question) whose bytes are not
// UTF-8. Nobody downstream can read it as it is, so it is never passed on: the client shows
// it to its Gate and answers it itself with Refusal (a Conn does so, and hands the line on
// as Noise with its Type), so that the prompt still gets exactly one answer.
func (l Line) NotText() bool {
	if l.Kind != EventLine || !isPrompt(l.Type) {
		return false
	}
	if flags, ok := l.TextFlags(); ok {
		return flags&(jsonscan.HighBytes|jsonscan.CheckedUTF8) == jsonscan.HighBytes
	}
	return !isUTF8(l.Raw)
}

// NotJSON is how messages name a line that is Noise, in every command: "a line that is " +
// NotJSON.
const NotJSON = "not JSON (or not UTF-8)"

// NotTextPrompt is how messages name a prompt of type promptType whose bytes are not UTF-8
// (a NotText line), in every command.
func NotTextPrompt(promptType string) string {
	return "a prompt (" + promptType + ") that is not UTF-8 text"
}

func isPrompt(t string) bool { return t == TypeApproval || t == TypeQuestion }

// Refusal is the answer a client gives a prompt of type promptType itself: a denial for an
// approval_request, a null answer (a skip) for a question.
func Refusal(promptType string) Input {
	if promptType == TypeQuestion {
		return Input{Line: QuestionResponse(nil), Type: TypeQuestionResponse}
	}
	return Input{Line: ApprovalResponse(false), Type: TypeApprovalResponse}
}

// eventType is the decoded type of a jsonscan.ScanType result, without allocating for the types
// fuseraft sends most.
func eventType(rawType []byte, typeEsc bool) string {
	if !typeEsc {
		switch string(rawType[1 : len(rawType)-1]) {
		case TypeToken:
			return TypeToken
		case TypeThinking:
			return TypeThinking
		case TypeToolCall:
			return TypeToolCall
		case TypeToolResult:
			return TypeToolResult
		case TypeStatus:
			return TypeStatus
		case TypeMessageEnd:
			return TypeMessageEnd
		case TypeTurnStart:
			return TypeTurnStart
		case TypeApproval:
			return TypeApproval
		case TypeAgentMessage:
			return TypeAgentMessage
		case TypeShellOutput:
			return TypeShellOutput
		}
	}
	sh := jsonscan.Shape{Valid: true, Object: true, Typed: true, RawType: rawType, TypeEsc: typeEsc}
	return sh.Type()
}

// TopLevelString returns the string value of key in the JSON object b, or ok=false when b is
// not an object, lacks the key, or the value is not a string. Keys and values are compared and
// returned after unescaping; the last occurrence of a repeated key wins. Anything that is not
// valid JSON gives ok=false.
func TopLevelString(b []byte, key string) (val string, ok bool) {
	if !json.Valid(b) {
		return "", false
	}
	return topLevelString(b, key)
}

// topLevelString is TopLevelString for b already known to be valid JSON.
func topLevelString(b []byte, key string) (val string, ok bool) {
	raw, found := topLevelRaw(b, key)
	if !found || raw[0] != '"' {
		return "", false
	}
	return jsonscan.Unquote(raw)
}

// topLevelRaw returns the raw bytes of the last value of key in the JSON object b.
func topLevelRaw(b []byte, key string) (val []byte, ok bool) {
	if !jsonscan.Fields(b, func(k, raw []byte) bool {
		if string(k) == key {
			val = raw
		}
		return true
	}) || val == nil {
		return nil, false
	}
	return val, true
}
