package ls

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/fuseraft/fr/pkg/wire"
)

// resource is one thing fr-ls lists: the fuseraft command line it runs, the item's fields (the
// protocol page's order) and the columns a table or TSV shows by default.
type resource struct {
	name    string
	args    string // usage of its arguments
	usage   string
	of      any      // the item: a pkg/wire struct, whose fields it has
	item    string   // of's type, on the protocol page
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

// Each resource's item and fields are those of its pkg/wire struct: the fields fuseraft sends,
// in the order it sends them.
func init() {
	for _, r := range append(append([]*resource{}, resources...), initResult) {
		t := reflect.TypeOf(r.of)
		r.item, r.fields = t.Name(), typeFields(t)
	}
}

// typeFields is the JSON names of struct t's fields, in order, those of an embedded struct in
// its place.
func typeFields(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			names = append(names, typeFields(f.Type)...)
		} else if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

var resources = []*resource{
	{name: "sessions", args: "[--all] [--project P]", usage: "orchestration sessions (incomplete ones unless --all)", of: wire.Session{},
		columns: cols("sessionId:ID", "task", "lastUpdatedAt:UPDATED", "isComplete:COMPLETE", "turnCount:TURNS")},
	{name: "session", args: "ID", usage: "one orchestration session with its messages (ID: the id, or any unique prefix of one)", of: wire.SessionDetail{},
		columns: withShow(cols("sessionId:ID", "task", "lastUpdatedAt:UPDATED", "isComplete:COMPLETE", "messages"),
			"messages", count)},
	{name: "repl-sessions", args: "[--project P]", usage: "REPL chats, newest first", of: wire.ReplSession{},
		columns: withFallback(cols("sessionId:ID", "title", "modelId:MODEL", "cwd:DIRECTORY", "lastUpdatedAt:UPDATED", "turnIndex:TURNS"),
			"title", "autoTitle")},
	{name: "memory", args: "[--agent A]", usage: "memories (an agent's with --agent)", of: wire.Memory{},
		columns: cols("name", "type", "description")},
	{name: "memory-agents", usage: "agents with at least one memory", of: wire.MemoryAgent{},
		columns: cols("agent", "count:MEMORIES")},
	{name: "context", args: "[--dir D]", usage: "imported context of a project", of: wire.ContextItem{},
		columns: withShow(cols("name", "description", "sizeBytes:SIZE", "files", "importedAt:IMPORTED"), "files", count)},
	{name: "schedules", usage: "scheduled jobs, by next run", of: wire.ScheduledJob{},
		columns: cols("name", "cron", "enabled", "due", "nextRun:NEXT RUN", "task")},
	{name: "plugins", args: "[--plugin NAME]", usage: "plugins and their tools", of: wire.Plugin{},
		columns: withShow(cols("name", "source", "functions:TOOLS"), "functions", names)},
	{name: "models", usage: "the provider's models", of: wire.Model{},
		columns: cols("id:MODEL", "current")},
	{name: "configs", args: "[--dir D]", usage: "orchestration configs in a directory", of: wire.ConfigSummary{},
		columns: cols("name", "path", "agents", "selectionType:SELECTION", "error")},
	{name: "validate", args: "PATH", usage: "validate an orchestration config (exit 1 when it has errors)", of: wire.Validation{},
		columns: withShow(cols("path", "valid", "issues"), "issues", issues)},
	{name: "templates", usage: "templates fuseraft init can write", of: wire.Template{},
		columns: cols("key", "label", "description")},
}

// initResult is the item of fuseraft init --json, known for fr-ls - only.
var initResult = &resource{name: "init", of: wire.InitResult{},
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
