package otel

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fuseraft/fr/internal/jsonscan"
)

// event holds the fields of any event the mapping reads (the protocol page's "Live sessions"),
// decoded at once; fields an event does not have stay zero. Big fields (a tool's args and
// output, file contents) are kept raw and unquoted only when content is captured.
type event struct {
	Type            string  `json:"type"`
	ProtocolVersion *int    `json:"protocolVersion"`
	SessionID       *string `json:"sessionId"`
	TaskID          string  `json:"taskId"` // added by the fleet
	Host            string  `json:"host"`   // added by the fleet
	Pool            string  `json:"pool"`   // added by the fleet

	// ready
	Model  string   `json:"model"`
	Task   *string  `json:"task"`
	Config *string  `json:"config"`
	Agents []string `json:"agents"`

	// tool_call, tool_result
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Summary string          `json:"summary"`
	Args    json.RawMessage `json:"args"`
	Agent   string          `json:"agent"`
	OK      *bool           `json:"ok"`
	Output  json.RawMessage `json:"output"`

	// message_end
	TurnIndex         *int   `json:"turnIndex"`
	InputTokens       *int64 `json:"inputTokens"`
	OutputTokens      *int64 `json:"outputTokens"`
	CachedInputTokens *int64 `json:"cachedInputTokens"`

	// tool_calling
	Tool        string `json:"tool"`
	ArgsSummary string `json:"argsSummary"`

	// agent_message
	Message   *agentMessage `json:"message"`
	ElapsedMs *int64        `json:"elapsedMs"`

	// result
	Succeeded      *bool    `json:"succeeded"`
	ErrorMessage   *string  `json:"errorMessage"`
	ExitCode       *int     `json:"exitCode"`
	ElapsedSeconds *float64 `json:"elapsedSeconds"`
	LastAgent      string   `json:"lastAgent"`
	LastMessage    *string  `json:"lastMessage"`

	// approval_request
	Kind        string `json:"kind"`
	Command     string `json:"command"`
	Plugin      string `json:"plugin"`
	Action      string `json:"action"`
	Detail      string `json:"detail"`
	Path        string `json:"path"`
	Keyword     string `json:"keyword"`
	SourceAgent string `json:"sourceAgent"`
	TargetAgent string `json:"targetAgent"`

	// text, info, warning, error, retrying, interjection, file_changed, queued
	Text     string `json:"text"`
	Attempt  *int   `json:"attempt"`
	Max      *int   `json:"max"`
	Status   string `json:"status"`
	Count    *int   `json:"count"`
	Sigil    string `json:"sigil"`
	Added    *int   `json:"added"`
	Removed  *int   `json:"removed"`
	Position *int   `json:"position"`

	ObjectiveID string `json:"objectiveId"`
}

// agentMessage is the protocol's AgentMessage, as far as the mapping reads it.
type agentMessage struct {
	AgentName           string  `json:"agentName"`
	Role                string  `json:"role"`
	Content             string  `json:"content"`
	TurnIndex           *int    `json:"turnIndex"`
	Timestamp           *string `json:"timestamp"`
	InputTokens         *int64  `json:"inputTokens"`
	OutputTokens        *int64  `json:"outputTokens"`
	IsCompactionSummary bool    `json:"isCompactionSummary"`
	ToolCalls           []struct {
		Name        string `json:"name"`
		ArgsSummary string `json:"argsSummary"`
		Succeeded   *bool  `json:"succeeded"`
	} `json:"toolCalls"`
}

func (e *event) sessionID() string {
	if e.SessionID == nil {
		return ""
	}
	return *e.SessionID
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// bulky are the fields that can be whole files or outputs (megabytes): decoded only when
// content is captured, the only use the mapping has for them.
var bulky = map[string]bool{`"output"`: true, `"args"`: true, `"oldContent"`: true, `"newContent"`: true,
	`"changes"`: true, `"turns"`: true, `"steps"`: true, `"text"`: true}

// withoutContent is an agent_message's message without its content (the reply, a bulky field
// like the others), when it is an object.
func withoutContent(msg []byte) []byte {
	if !bytes.Contains(msg, []byte(`"content"`)) {
		return msg
	}
	b := make([]byte, 0, 256)
	b = append(b, '{')
	if !jsonscan.Members(msg, func(key, val []byte) bool {
		if string(key) == `"content"` {
			return true
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, key...)
		b = append(b, ':')
		b = append(b, val...)
		return true
	}) {
		return msg
	}
	return append(b, '}')
}

var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// decodeEvent decodes raw, a JSON object already known to be valid, into ev: without its bulky
// fields unless capture, so that a tool's megabytes of output cost a scan, not a decode. Most
// lines are picked apart by decodeQuick; the rest, and every line when capture, by
// encoding/json.
func decodeEvent(raw []byte, capture bool, ev *event) error {
	if capture {
		return json.Unmarshal(raw, ev)
	}
	if decodeQuick(raw, ev) {
		return nil
	}
	*ev = event{}
	return decodeMembers(raw, ev)
}

// decodeMembers is decodeEvent without capture by encoding/json: the object again without its
// bulky members, decoded.
func decodeMembers(raw []byte, ev *event) error {
	bp := scratch.Get().(*[]byte)
	defer scratch.Put(bp)
	b := append((*bp)[:0], '{')
	jsonscan.Members(raw, func(key, val []byte) bool {
		k := string(key)
		if strings.IndexByte(k, '\\') >= 0 {
			if u, ok := jsonscan.Unquote(key); ok {
				k = `"` + u + `"`
			}
		}
		if bulky[k] {
			return true
		}
		if k == `"message"` {
			val = withoutContent(val)
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, key...)
		b = append(b, ':')
		b = append(b, val...)
		return true
	})
	b = append(b, '}')
	*bp = b
	return json.Unmarshal(b, ev)
}

// decodeQuick is decodeEvent without capture for the common line, in one pass over raw (a
// JSON object already known to be valid): the members the mapping reads picked out by name,
// the bulky ones and those it does not know skipped at memchr speed. It returns false, with ev
// in any state, for what it leaves to encoding/json: a key with an escape, a non-ASCII byte
// or another case than a field's, a value not of its field's plain type (a float where an
// int goes, a number out of range, a string where a number goes), the nested agents and
// message members decoded badly. FuzzDecodeQuick holds it to decodeEvent.
func decodeQuick(raw []byte, ev *event) bool {
	i := jsonscan.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = jsonscan.SkipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return true
	}
	for i < len(raw) && raw[i] == '"' {
		kEnd, ok := jsonscan.QuickStringEnd(raw, i+1)
		if !ok {
			return false
		}
		key := raw[i+1 : kEnd-1]
		i = jsonscan.SkipSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		v := jsonscan.SkipSpace(raw, i+1)
		if v >= len(raw) {
			return false
		}
		var end int
		if raw[v] == '"' {
			if end, ok = jsonscan.QuickStringEnd(raw, v+1); !ok {
				return false
			}
		} else {
			end = jsonscan.SkipValue(raw, v)
		}
		if !quickMember(key, raw[v:end], ev) {
			return false
		}
		i = jsonscan.SkipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = jsonscan.SkipSpace(raw, i+1)
			continue
		}
		return i < len(raw) && raw[i] == '}'
	}
	return false
}

// quickMember sets the field named key (a plain ASCII name) from val.
func quickMember(key, val []byte, ev *event) bool {
	f, known := quickFields[string(key)]
	if !known {
		// encoding/json matches names without regard to case: one of those, or a name it
		// would unfold, is for it to place.
		for _, c := range key {
			if c == '\\' || c >= 0x80 {
				return false
			}
		}
		_, folded := quickFolded[strings.ToLower(string(key))]
		return !folded
	}
	switch f.kind {
	case qSkip:
		return true
	case qString:
		if isNull(val) {
			return true
		}
		s, ok := quickString(val)
		*f.str(ev) = s
		return ok
	case qStringPtr:
		p := f.strPtr(ev)
		if isNull(val) {
			*p = nil
			return true
		}
		s, ok := quickString(val)
		*p = &s
		return ok
	case qInt:
		p := f.intPtr(ev)
		if isNull(val) {
			*p = nil
			return true
		}
		n, ok := quickInt(val, strconv.IntSize)
		x := int(n)
		*p = &x
		return ok
	case qInt64:
		p := f.int64Ptr(ev)
		if isNull(val) {
			*p = nil
			return true
		}
		n, ok := quickInt(val, 64)
		*p = &n
		return ok
	case qFloat:
		if isNull(val) {
			ev.ElapsedSeconds = nil
			return true
		}
		if val[0] != '-' && (val[0] < '0' || val[0] > '9') {
			return false
		}
		x, err := strconv.ParseFloat(string(val), 64)
		ev.ElapsedSeconds = &x
		return err == nil
	case qBool:
		p := f.boolPtr(ev)
		switch string(val) {
		case "null":
			*p = nil
		case "true", "false":
			b := val[0] == 't'
			*p = &b
		default:
			return false
		}
		return true
	case qJSON:
		if f.any == nil {
			return json.Unmarshal(withoutContent(val), &ev.Message) == nil
		}
		return json.Unmarshal(val, f.any(ev)) == nil
	}
	return false
}

func isNull(val []byte) bool { return string(val) == "null" }

// quickString is a JSON string's value; false for any other value.
func quickString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	if s := val[1 : len(val)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s), true
	}
	return jsonscan.Unquote(val)
}

// quickInt is a JSON number without fraction or exponent that fits in bits.
func quickInt(val []byte, bits int) (int64, bool) {
	for j, c := range val {
		if (c < '0' || c > '9') && (c != '-' || j > 0) {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(val), 10, bits)
	return n, err == nil
}

const (
	qSkip = iota
	qString
	qStringPtr
	qInt
	qInt64
	qFloat
	qBool
	qJSON
)

// quickField is where a member goes in an event.
type quickField struct {
	kind     int
	str      func(*event) *string
	strPtr   func(*event) **string
	intPtr   func(*event) **int
	int64Ptr func(*event) **int64
	boolPtr  func(*event) **bool
	any      func(*event) any
}

// quickFields are event's members by their JSON names, and the bulky ones to skip.
var quickFields = func() map[string]quickField {
	m := map[string]quickField{}
	for k := range bulky {
		m[k[1:len(k)-1]] = quickField{kind: qSkip}
	}
	s := func(name string, f func(*event) *string) { m[name] = quickField{kind: qString, str: f} }
	sp := func(name string, f func(*event) **string) { m[name] = quickField{kind: qStringPtr, strPtr: f} }
	ip := func(name string, f func(*event) **int) { m[name] = quickField{kind: qInt, intPtr: f} }
	lp := func(name string, f func(*event) **int64) { m[name] = quickField{kind: qInt64, int64Ptr: f} }
	bp := func(name string, f func(*event) **bool) { m[name] = quickField{kind: qBool, boolPtr: f} }
	s("type", func(e *event) *string { return &e.Type })
	s("taskId", func(e *event) *string { return &e.TaskID })
	s("host", func(e *event) *string { return &e.Host })
	s("pool", func(e *event) *string { return &e.Pool })
	s("model", func(e *event) *string { return &e.Model })
	s("id", func(e *event) *string { return &e.ID })
	s("name", func(e *event) *string { return &e.Name })
	s("summary", func(e *event) *string { return &e.Summary })
	s("agent", func(e *event) *string { return &e.Agent })
	s("tool", func(e *event) *string { return &e.Tool })
	s("argsSummary", func(e *event) *string { return &e.ArgsSummary })
	s("lastAgent", func(e *event) *string { return &e.LastAgent })
	s("kind", func(e *event) *string { return &e.Kind })
	s("command", func(e *event) *string { return &e.Command })
	s("plugin", func(e *event) *string { return &e.Plugin })
	s("action", func(e *event) *string { return &e.Action })
	s("detail", func(e *event) *string { return &e.Detail })
	s("path", func(e *event) *string { return &e.Path })
	s("keyword", func(e *event) *string { return &e.Keyword })
	s("sourceAgent", func(e *event) *string { return &e.SourceAgent })
	s("targetAgent", func(e *event) *string { return &e.TargetAgent })
	s("status", func(e *event) *string { return &e.Status })
	s("sigil", func(e *event) *string { return &e.Sigil })
	s("objectiveId", func(e *event) *string { return &e.ObjectiveID })
	sp("sessionId", func(e *event) **string { return &e.SessionID })
	sp("task", func(e *event) **string { return &e.Task })
	sp("config", func(e *event) **string { return &e.Config })
	sp("errorMessage", func(e *event) **string { return &e.ErrorMessage })
	sp("lastMessage", func(e *event) **string { return &e.LastMessage })
	ip("protocolVersion", func(e *event) **int { return &e.ProtocolVersion })
	ip("turnIndex", func(e *event) **int { return &e.TurnIndex })
	ip("exitCode", func(e *event) **int { return &e.ExitCode })
	ip("attempt", func(e *event) **int { return &e.Attempt })
	ip("max", func(e *event) **int { return &e.Max })
	ip("count", func(e *event) **int { return &e.Count })
	ip("added", func(e *event) **int { return &e.Added })
	ip("removed", func(e *event) **int { return &e.Removed })
	ip("position", func(e *event) **int { return &e.Position })
	lp("inputTokens", func(e *event) **int64 { return &e.InputTokens })
	lp("outputTokens", func(e *event) **int64 { return &e.OutputTokens })
	lp("cachedInputTokens", func(e *event) **int64 { return &e.CachedInputTokens })
	lp("elapsedMs", func(e *event) **int64 { return &e.ElapsedMs })
	bp("ok", func(e *event) **bool { return &e.OK })
	bp("succeeded", func(e *event) **bool { return &e.Succeeded })
	m["elapsedSeconds"] = quickField{kind: qFloat}
	m["agents"] = quickField{kind: qJSON, any: func(e *event) any { return &e.Agents }}
	m["message"] = quickField{kind: qJSON} // without its content
	return m
}()

// quickFolded are the names of quickFields in lower case: a key that is one of them in
// another case is encoding/json's to match.
var quickFolded = func() map[string]bool {
	m := map[string]bool{}
	for k := range quickFields {
		m[strings.ToLower(k)] = true
	}
	return m
}()
