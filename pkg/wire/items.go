package wire

import "time"

// Resource item types of the protocol page, section "Resource queries". Field order follows
// the page, which is the order fuseraft writes them in. Nullable fields are pointers.

// SessionInfo is what every listing says of an orchestration session: the fields Session
// and SessionDetail begin with.
type SessionInfo struct {
	SessionID        string    `json:"sessionId"`
	Task             string    `json:"task"`
	WorkingDirectory *string   `json:"workingDirectory"`
	ConfigPath       *string   `json:"configPath"`
	StartedAt        time.Time `json:"startedAt"`
	LastUpdatedAt    time.Time `json:"lastUpdatedAt"`
	IsComplete       bool      `json:"isComplete"`
}

// Session is an orchestration session (fuseraft sessions --json).
type Session struct {
	SessionInfo
	TurnCount int `json:"turnCount"`
}

// SessionDetail is fuseraft sessions --show ID --json.
type SessionDetail struct {
	SessionInfo
	Messages []AgentMessage `json:"messages"`
}

// ToolCallSummary is one tool call of an AgentMessage.
type ToolCallSummary struct {
	Name        string `json:"name"`
	ArgsSummary string `json:"argsSummary"`
	Succeeded   bool   `json:"succeeded"`
}

// AgentMessage is one message of an orchestration session.
type AgentMessage struct {
	AgentName           string            `json:"agentName"`
	Role                string            `json:"role"`
	Content             string            `json:"content"`
	TurnIndex           int               `json:"turnIndex"`
	Timestamp           time.Time         `json:"timestamp"`
	InputTokens         *int              `json:"inputTokens"`
	OutputTokens        *int              `json:"outputTokens"`
	IsCompactionSummary bool              `json:"isCompactionSummary"`
	ToolCalls           []ToolCallSummary `json:"toolCalls"`
}

// ReplSession is a REPL chat (fuseraft sessions --repl --json).
type ReplSession struct {
	SessionID        string    `json:"sessionId"`
	ModelID          string    `json:"modelId"`
	Cwd              string    `json:"cwd"`
	Title            *string   `json:"title"`
	AutoTitle        *string   `json:"autoTitle"`
	StartedAt        time.Time `json:"startedAt"`
	LastUpdatedAt    time.Time `json:"lastUpdatedAt"`
	TurnIndex        int       `json:"turnIndex"`
	FirstUserMessage string    `json:"firstUserMessage"`
}

// Memory is one memory (fuseraft memory list --json).
type Memory struct {
	GUID        string `json:"guid"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Body        string `json:"body"`
}

// MemoryAgent is an agent with at least one memory.
type MemoryAgent struct {
	Agent string `json:"agent"`
	Count int    `json:"count"`
}

// ContextFile is one file of a ContextItem.
type ContextFile struct {
	RelativePath string `json:"relativePath"`
	SizeBytes    int64  `json:"sizeBytes"`
}

// ContextItem is imported context (fuseraft context list --json).
type ContextItem struct {
	Name        string        `json:"name"`
	Description *string       `json:"description"`
	SourcePath  string        `json:"sourcePath"`
	ImportedAt  time.Time     `json:"importedAt"`
	SizeBytes   int64         `json:"sizeBytes"`
	Files       []ContextFile `json:"files"`
}

// ScheduledJob is a scheduled task (fuseraft schedule list --json).
type ScheduledJob struct {
	Name        string     `json:"name"`
	Description *string    `json:"description"`
	Cron        string     `json:"cron"`
	Task        string     `json:"task"`
	Config      *string    `json:"config"`
	WorkDir     *string    `json:"workDir"`
	Enabled     bool       `json:"enabled"`
	Due         bool       `json:"due"`
	CreatedAt   time.Time  `json:"createdAt"`
	LastRun     *time.Time `json:"lastRun"`
	NextRun     *time.Time `json:"nextRun"`
}

// ConfigSummary describes one orchestration config (fuseraft config --list --json).
type ConfigSummary struct {
	Path          string   `json:"path"`
	Name          *string  `json:"name"`
	Description   *string  `json:"description"`
	Agents        []string `json:"agents"`
	SelectionType *string  `json:"selectionType"`
	Error         *string  `json:"error"`
}

// ValidationIssue is one finding of Validation.
type ValidationIssue struct {
	Level   string `json:"level"` // error or warning
	Message string `json:"message"`
}

// Validation is fuseraft validate PATH --json.
type Validation struct {
	Path   string            `json:"path"`
	Valid  bool              `json:"valid"`
	Issues []ValidationIssue `json:"issues"`
	Config *ConfigSummary    `json:"config"`
}

// Template is an init template.
type Template struct {
	Key         string `json:"key"`
	Label       string `json:"label"`
	Description string `json:"description"`
}

// InitResult is fuseraft init --json.
type InitResult struct {
	Template   string   `json:"template"`
	Model      string   `json:"model"`
	Endpoint   *string  `json:"endpoint"`
	ConfigPath string   `json:"configPath"`
	AgentFiles []string `json:"agentFiles"`
}

// PluginFunction is one tool of a Plugin.
type PluginFunction struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Plugin is fuseraft plugins --json.
type Plugin struct {
	Name      string           `json:"name"`
	Source    string           `json:"source"` // builtin or mcp
	Functions []PluginFunction `json:"functions"`
}

// Model is fuseraft models --json.
type Model struct {
	ID      string `json:"id"`
	Current bool   `json:"current"`
}
