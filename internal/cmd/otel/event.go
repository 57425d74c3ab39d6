package otel

import (
	"encoding/json"
	"strings"
	"sync"

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

var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// decodeEvent decodes raw, a JSON object already known to be valid, into ev: without its bulky
// fields unless capture, so that a tool's megabytes of output cost a scan, not a decode.
func decodeEvent(raw []byte, capture bool, ev *event) error {
	if capture {
		return json.Unmarshal(raw, ev)
	}
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
