package ls

import (
	"fmt"
	"strconv"
	"strings"
)

// resource is one thing fr-ls lists: the fuseraft command line it runs, the item's fields (the
// protocol page's order) and the columns a table or TSV shows by default.
type resource struct {
	name    string
	args    string // usage of its arguments
	usage   string
	item    string   // item type on the protocol page
	fields  []string // the item's fields, in the page's order
	columns []column // default columns for table and tsv
}

// column is one default column: a field, shown under a label, maybe through a formatter that
// makes a compound value readable.
type column struct {
	field    string
	label    string
	fallback string                       // field shown when this one is null
	show     func(v value) (string, bool) // nil: the plain rendering of the value
}

func cols(spec ...string) []column {
	c := make([]column, 0, len(spec))
	for _, s := range spec {
		field, label, _ := strings.Cut(s, ":")
		if label == "" {
			label = strings.ToUpper(field)
		}
		c = append(c, column{field: field, label: label})
	}
	return c
}

// withShow sets the formatter of the named column.
func withShow(c []column, field string, show func(v value) (string, bool)) []column {
	for i := range c {
		if c[i].field == field {
			c[i].show = show
		}
	}
	return c
}

// withFallback shows field fb in the named column when its own field is null (a REPL chat's
// generated title stands in for a title never set, as the protocol page says).
func withFallback(c []column, field, fb string) []column {
	for i := range c {
		if c[i].field == field {
			c[i].fallback = fb
		}
	}
	return c
}

// count shows an array as its length.
func count(v value) (string, bool) {
	if arr, ok := v.any.([]any); ok {
		return strconv.Itoa(len(arr)), true
	}
	return "", false
}

// names shows an array of objects by their "name" fields.
func names(v value) (string, bool) {
	arr, ok := v.any.([]any)
	if !ok {
		return "", false
	}
	var out []string
	for _, e := range arr {
		if m, ok := e.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return strings.Join(out, ", "), true
}

// issues shows Validation.issues as "error: message; warning: message".
func issues(v value) (string, bool) {
	arr, ok := v.any.([]any)
	if !ok {
		return "", false
	}
	if len(arr) == 0 {
		return "none", true
	}
	var out []string
	for _, e := range arr {
		m, _ := e.(map[string]any)
		out = append(out, fmt.Sprintf("%v: %v", m["level"], m["message"]))
	}
	return strings.Join(out, "; "), true
}

var (
	sessionFields = []string{"sessionId", "task", "workingDirectory", "configPath", "startedAt", "lastUpdatedAt", "isComplete", "turnCount"}
	detailFields  = []string{"sessionId", "task", "workingDirectory", "configPath", "startedAt", "lastUpdatedAt", "isComplete", "messages"}
	replFields    = []string{"sessionId", "modelId", "cwd", "title", "autoTitle", "startedAt", "lastUpdatedAt", "turnIndex", "firstUserMessage"}
	configFields  = []string{"path", "name", "description", "agents", "selectionType", "error"}
)

var resources = []*resource{
	{name: "sessions", args: "[--all] [--project P]", usage: "orchestration sessions (incomplete ones unless --all)", item: "Session",
		fields:  sessionFields,
		columns: cols("sessionId:ID", "task", "lastUpdatedAt:UPDATED", "isComplete:COMPLETE", "turnCount:TURNS")},
	{name: "session", args: "ID", usage: "one orchestration session with its messages", item: "SessionDetail",
		fields: detailFields,
		columns: withShow(cols("sessionId:ID", "task", "lastUpdatedAt:UPDATED", "isComplete:COMPLETE", "messages"),
			"messages", count)},
	{name: "repl-sessions", args: "[--project P]", usage: "REPL chats, newest first", item: "ReplSession",
		fields: replFields,
		columns: withFallback(cols("sessionId:ID", "title", "modelId:MODEL", "cwd:DIRECTORY", "lastUpdatedAt:UPDATED", "turnIndex:TURNS"),
			"title", "autoTitle")},
	{name: "memory", args: "[--agent A]", usage: "memories (an agent's with --agent)", item: "Memory",
		fields:  []string{"guid", "name", "type", "description", "body"},
		columns: cols("name", "type", "description")},
	{name: "memory-agents", usage: "agents with at least one memory", item: "MemoryAgent",
		fields:  []string{"agent", "count"},
		columns: cols("agent", "count:MEMORIES")},
	{name: "context", args: "[--dir D]", usage: "imported context of a project", item: "ContextItem",
		fields:  []string{"name", "description", "sourcePath", "importedAt", "sizeBytes", "files"},
		columns: withShow(cols("name", "description", "sizeBytes:SIZE", "files", "importedAt:IMPORTED"), "files", count)},
	{name: "schedules", usage: "scheduled jobs, by next run", item: "ScheduledJob",
		fields:  []string{"name", "description", "cron", "task", "config", "workDir", "enabled", "due", "createdAt", "lastRun", "nextRun"},
		columns: cols("name", "cron", "enabled", "due", "nextRun:NEXT RUN", "task")},
	{name: "plugins", args: "[--plugin NAME]", usage: "plugins and their tools", item: "Plugin",
		fields:  []string{"name", "source", "functions"},
		columns: withShow(cols("name", "source", "functions:TOOLS"), "functions", names)},
	{name: "models", usage: "the provider's models", item: "Model",
		fields:  []string{"id", "current"},
		columns: cols("id:MODEL", "current")},
	{name: "configs", args: "[--dir D]", usage: "orchestration configs in a directory", item: "ConfigSummary",
		fields:  configFields,
		columns: cols("name", "path", "agents", "selectionType:SELECTION", "error")},
	{name: "validate", args: "PATH", usage: "validate an orchestration config (exit 1 when it has errors)", item: "Validation",
		fields:  []string{"path", "valid", "issues", "config"},
		columns: withShow(cols("path", "valid", "issues"), "issues", issues)},
	{name: "templates", usage: "templates fuseraft init can write", item: "Template",
		fields:  []string{"key", "label", "description"},
		columns: cols("key", "label", "description")},
}

// initResult is the item of fuseraft init --json, known for fr-ls - only.
var initResult = &resource{name: "init", item: "InitResult",
	fields:  []string{"template", "model", "endpoint", "configPath", "agentFiles"},
	columns: cols("template", "model", "configPath:CONFIG", "agentFiles:AGENT FILES")}

func lookup(name string) *resource {
	for _, r := range resources {
		if r.name == name {
			return r
		}
	}
	return nil
}

// guess finds the resource whose item has every one of the given keys' known fields, for
// envelopes read from stdin (the longest match wins: SessionDetail over Session).
func guess(keys []string) *resource {
	have := map[string]bool{}
	for _, k := range keys {
		have[k] = true
	}
	var best *resource
	for _, r := range append(append([]*resource{}, resources...), initResult) {
		all := true
		for _, f := range r.fields {
			if !have[f] {
				all = false
				break
			}
		}
		if all && (best == nil || len(r.fields) > len(best.fields)) {
			best = r
		}
	}
	return best
}
