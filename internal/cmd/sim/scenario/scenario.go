package scenario

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Version is the scenario format version this package reads.
const Version = 1

// Scenario is one scripted fuseraft: what repl --vscode, run --bridge and serve play.
type Scenario struct {
	Version int    `yaml:"version"`
	Model   string `yaml:"model"`
	Repl    Repl   `yaml:"repl"`
	Run     Run    `yaml:"run"`
	Serve   Serve  `yaml:"serve"`
	Faults  Faults `yaml:"faults"`

	// Path is the file the scenario was loaded from ("" for the embedded default).
	Path string `yaml:"-"`
}

// Repl describes fuseraft repl --vscode.
type Repl struct {
	SessionID       string   `yaml:"sessionId"`
	Title           *string  `yaml:"title"`
	AutoTitle       *string  `yaml:"autoTitle"`
	MidTurnCommands []string `yaml:"midTurnCommands"`
	// NotConfigured, when set, is sent as an error event before ready, then exit 1.
	NotConfigured string `yaml:"notConfigured"`
	// Sessions are the ids --resume accepts besides SessionID; any other id is unknown.
	Sessions []string `yaml:"sessions"`
	Turns    []Turn   `yaml:"turns"`
	// AfterTurns says what a user_input gets once the turns ran out: "wrap" (start again,
	// the default) or "echo" (a one-token turn repeating the message).
	AfterTurns string `yaml:"afterTurns"`
	// Interjections says what a message sent while a turn plays does: "queue" (the default)
	// keeps it for a turn of its own once this one ends, so a session's events never depend
	// on timing; "carry" joins such messages into the next turn (its turn_start text) after an
	// interjection event, as fuseraft does.
	Interjections string `yaml:"interjections"`
	// Replay is sent after ready on --resume.
	Replay *Replay `yaml:"replay"`
	// EndDelay models the memory-extraction call between end of input and session_end.
	EndDelay *Duration `yaml:"endDelay"`
}

// Turn is the reply to one user_input.
type Turn struct {
	Steps []Step `yaml:"steps"`
}

// Replay is the replay event's content, in a scenario or in fr-sim's dataset.
type Replay struct {
	Compacted bool         `yaml:"compacted" json:"compacted"`
	Turns     []ReplayTurn `yaml:"turns" json:"turns"`
}

// ReplayTurn is one earlier turn.
type ReplayTurn struct {
	User      string   `yaml:"user" json:"user"`
	Assistant string   `yaml:"assistant" json:"assistant"`
	ToolCalls []string `yaml:"toolCalls" json:"toolCalls"`
}

// Run describes fuseraft run --bridge.
type Run struct {
	SessionID string `yaml:"sessionId"`
	// Task is the task a resumed session reports (--resume gives no task).
	Task   string   `yaml:"task"`
	Agents []string `yaml:"agents"`
	Steps  []Step   `yaml:"steps"`
	Result Result   `yaml:"result"`
	// FailBeforeStart, when set, makes the run fail before it starts: only a result with a
	// null sessionId is sent, with this errorMessage.
	FailBeforeStart string `yaml:"failBeforeStart"`
	// Sessions are the ids --resume accepts besides SessionID.
	Sessions []string `yaml:"sessions"`
	// CI is how the config's success criteria come out for run --ci (without --bridge).
	CI CI `yaml:"ci"`
}

// CI is the outcome of run --ci's criteria: unless Passed is false they pass; a failed one
// makes the summary's exit_code 2, with Message as its error_message.
type CI struct {
	Passed  *bool  `yaml:"passed"`
	Message string `yaml:"message"`
}

// Result holds the fields of a result event the scenario fixes. Unset fields are filled in
// by the player's outcome (a denial or fail step makes succeeded false, and so on).
type Result struct {
	Succeeded      *bool    `yaml:"succeeded"`
	ErrorMessage   *string  `yaml:"errorMessage"`
	ExitCode       *int     `yaml:"exitCode"`
	Turns          *int     `yaml:"turns"`
	ElapsedSeconds *float64 `yaml:"elapsedSeconds"`
	InputTokens    *int     `yaml:"inputTokens"`
	OutputTokens   *int     `yaml:"outputTokens"`
	LastAgent      *string  `yaml:"lastAgent"`
	LastMessage    *string  `yaml:"lastMessage"`
}

// Over returns r with the fields o sets replacing r's; r and o are left as they are, and
// either may be nil.
func (r *Result) Over(o *Result) *Result {
	var out Result
	if r != nil {
		out = *r
	}
	if o == nil {
		return &out
	}
	set := func(dst **bool, src *bool) {
		if src != nil {
			*dst = src
		}
	}
	set(&out.Succeeded, o.Succeeded)
	for _, f := range []struct{ dst, src **string }{{&out.ErrorMessage, &o.ErrorMessage},
		{&out.LastAgent, &o.LastAgent}, {&out.LastMessage, &o.LastMessage}} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
	for _, f := range []struct{ dst, src **int }{{&out.ExitCode, &o.ExitCode}, {&out.Turns, &o.Turns},
		{&out.InputTokens, &o.InputTokens}, {&out.OutputTokens, &o.OutputTokens}} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
	if o.ElapsedSeconds != nil {
		out.ElapsedSeconds = o.ElapsedSeconds
	}
	return &out
}

// Serve describes the tasks fuseraft serve runs.
type Serve struct {
	Tasks []Task `yaml:"tasks"`
}

// Task is how serve plays a dispatched task whose text matches Match (a regular expression;
// empty matches everything). The first matching task wins.
type Task struct {
	Match  string `yaml:"match"`
	Steps  []Step `yaml:"steps"`
	Result Result `yaml:"result"`
	// Uncancellable makes an interrupt cancel nothing: it is dropped, as by a daemon that
	// cannot cancel a task, and the task runs to its end.
	Uncancellable bool `yaml:"uncancellable"`

	re *regexp.Regexp
}

// Matches reports whether text selects this task.
func (t *Task) Matches(text string) bool {
	return t.re == nil || t.re.MatchString(text)
}

// TaskFor returns the first task matching text, or nil when there is none.
func (s *Serve) TaskFor(text string) *Task {
	for i := range s.Tasks {
		if s.Tasks[i].Matches(text) {
			return &s.Tasks[i]
		}
	}
	return nil
}

// Split makes every line reach the client in pieces of Bytes bytes, Pause apart.
type Split struct {
	Bytes int      `yaml:"bytes"`
	Pause Duration `yaml:"pause"`
}

// Faults are the ways the real fuseraft makes life hard for clients. Each can be set in the
// scenario and overridden by fr-sim's flags or $FRSIM_FAULTS (see Merge).
type Faults struct {
	// DotNet writes JSON as .NET does (see DotNetJSON).
	DotNet bool `yaml:"dotnet"`
	// CRLF ends lines with \r\n.
	CRLF bool `yaml:"crlf"`
	// Noise lines are written as plain text before the first event and then every NoiseEvery
	// lines (default 4), cycling through the list.
	Noise      []string `yaml:"noise"`
	NoiseEvery int      `yaml:"noiseEvery"`
	// Split writes each line in pieces, with a pause between them.
	Split *Split `yaml:"split"`
	// ProtocolVersion, when not 0, is the protocolVersion sent in ready, hello and envelopes.
	ProtocolVersion int `yaml:"protocolVersion"`
	// UnknownKind, when set, replaces the kind of every approval_request.
	UnknownKind string `yaml:"unknownKind"`
	// Big grows every tool_result output and file_write newContent to at least Big bytes.
	Big int `yaml:"big"`
	// CrashAfter makes the process die after that many events in a session, leaving half a
	// line on stdout, with CrashExitCode (default 134).
	CrashAfter    int `yaml:"crashAfter"`
	CrashExitCode int `yaml:"crashExitCode"`
	// Flood sends that many token events at the start of every turn, task or run.
	Flood int `yaml:"flood"`
}

// DefaultNoise are the plain-text lines the noise fault writes when none are given.
var DefaultNoise = []string{
	"Loading plugins... done",
	"Warning: falling back to default model settings",
	"[mcp] server 'filesystem' connected",
	"Context window: 128k tokens",
}

// Merge returns f with every knob that is set in o taking o's value.
func (f Faults) Merge(o Faults) Faults {
	if o.DotNet {
		f.DotNet = true
	}
	if o.CRLF {
		f.CRLF = true
	}
	if len(o.Noise) > 0 {
		f.Noise = o.Noise
	}
	if o.NoiseEvery > 0 {
		f.NoiseEvery = o.NoiseEvery
	}
	if o.Split != nil {
		f.Split = o.Split
	}
	if o.ProtocolVersion != 0 {
		f.ProtocolVersion = o.ProtocolVersion
	}
	if o.UnknownKind != "" {
		f.UnknownKind = o.UnknownKind
	}
	if o.Big > 0 {
		f.Big = o.Big
	}
	if o.CrashAfter > 0 {
		f.CrashAfter = o.CrashAfter
	}
	if o.CrashExitCode != 0 {
		f.CrashExitCode = o.CrashExitCode
	}
	if o.Flood > 0 {
		f.Flood = o.Flood
	}
	return f
}

// Version returns the protocolVersion to announce.
func (f Faults) Version() int {
	if f.ProtocolVersion != 0 {
		return f.ProtocolVersion
	}
	return 1
}

// Encode marshals v (an *Object, a struct or a map) as fuseraft would write it: compact,
// and .NET-escaped when that fault is on.
func (f Faults) Encode(v any) []byte {
	b := Marshal(v)
	if f.DotNet {
		b = DotNetJSON(b)
	}
	return b
}

// Duration is a time.Duration written as "20ms", "1.5s" or a number of milliseconds.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalYAML reads "20ms", "2s" or a plain number of milliseconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return lineErr(n.Line, "a duration must be like 20ms or 1.5s")
	}
	if ms, err := strconv.ParseFloat(n.Value, 64); err == nil {
		*d = Duration(ms * float64(time.Millisecond))
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return lineErr(n.Line, "bad duration %q (want e.g. 20ms or 1.5s)", n.Value)
	}
	*d = Duration(v)
	return nil
}

// LineError is an error at a line of a scenario file.
type LineError struct {
	Path string
	Line int
	Msg  string
}

func (e *LineError) Error() string {
	p := e.Path
	if p == "" {
		p = "scenario"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p, e.Line, e.Msg)
	}
	return p + ": " + e.Msg
}

func lineErr(line int, format string, args ...any) *LineError {
	return &LineError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML returns the embedded default scenario's source, a starting point for your own.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Default returns the embedded default scenario (a fresh copy each time).
func Default() *Scenario {
	s, err := Parse("", defaultYAML)
	if err != nil {
		panic("scenario: embedded default: " + err.Error())
	}
	return s
}

// Load reads a scenario file (YAML, or JSON, which is YAML too). Errors name the file and line.
func Load(path string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

var yamlLineRe = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// Parse reads a scenario from b; path is used in error messages.
func Parse(path string, b []byte) (*Scenario, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, yamlError(path, err)
	}
	if len(root.Content) == 0 {
		return nil, &LineError{Path: path, Msg: "empty scenario (it needs at least \"version: 1\")"}
	}
	doc := root.Content[0]
	budget := maxExpandedNodes
	if err := checkAliases(doc, map[*yaml.Node]bool{}, &budget); err != nil {
		return nil, withPath(path, err)
	}
	if doc.Kind != yaml.MappingNode {
		return nil, &LineError{Path: path, Line: doc.Line, Msg: "a scenario is a mapping with version, repl, run, serve and faults"}
	}
	s := &Scenario{Path: path}
	if err := decodeStrict(doc, s); err != nil {
		return nil, withPath(path, err)
	}
	vline := doc.Line
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "version" {
			vline = doc.Content[i+1].Line
		}
	}
	if s.Version != Version {
		if s.Version == 0 {
			return nil, &LineError{Path: path, Line: doc.Line, Msg: "missing \"version: 1\""}
		}
		return nil, &LineError{Path: path, Line: vline, Msg: fmt.Sprintf("unsupported scenario version %d (this fr-sim reads version %d)", s.Version, Version)}
	}
	if err := s.check(doc); err != nil {
		return nil, withPath(path, err)
	}
	return s, nil
}

func (s *Scenario) check(doc *yaml.Node) error {
	if s.Model == "" {
		s.Model = "sim-small"
	}
	switch s.Repl.Interjections {
	case "", "queue", "carry":
	default:
		return lineErr(findLine(doc, "repl", "interjections"), "interjections must be queue or carry, not %q", s.Repl.Interjections)
	}
	switch s.Repl.AfterTurns {
	case "", "wrap", "echo":
	default:
		return lineErr(findLine(doc, "repl", "afterTurns"), "afterTurns must be wrap or echo, not %q", s.Repl.AfterTurns)
	}
	for i := range s.Serve.Tasks {
		t := &s.Serve.Tasks[i]
		if t.Match == "" {
			continue
		}
		re, err := regexp.Compile(t.Match)
		if err != nil {
			return lineErr(findLine(doc, "serve", "tasks"), "task %d: bad match expression: %v", i+1, err)
		}
		t.re = re
	}
	if s.Faults.Split != nil && s.Faults.Split.Bytes <= 0 {
		return lineErr(findLine(doc, "faults", "split"), "split.bytes must be at least 1")
	}
	return nil
}

// findLine returns the line of a nested key, or 0.
func findLine(n *yaml.Node, keys ...string) int {
	line := 0
	for _, k := range keys {
		if n.Kind != yaml.MappingNode {
			return line
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				line, n, found = n.Content[i].Line, n.Content[i+1], true
				break
			}
		}
		if !found {
			return line
		}
	}
	return line
}

func yamlError(path string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return yamlMsg(path, te.Errors[0])
	}
	return yamlMsg(path, err.Error())
}

func yamlMsg(path, msg string) error {
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &LineError{Path: path, Line: line, Msg: msg[len(m[0]):]}
	}
	return &LineError{Path: path, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

func withPath(path string, err error) error {
	var le *LineError
	if errors.As(err, &le) {
		le.Path = path
		return le
	}
	return yamlError(path, err)
}

// maxExpandedNodes bounds a document's size with its aliases expanded, so a small file of
// nested aliases cannot make a huge scenario.
const maxExpandedNodes = 1 << 20

// checkAliases refuses aliases that refer to a node containing themselves, and documents
// whose aliases expand past maxExpandedNodes.
func checkAliases(n *yaml.Node, open map[*yaml.Node]bool, budget *int) error {
	*budget--
	if *budget < 0 {
		return lineErr(n.Line, "the scenario is too large once its aliases are expanded")
	}
	if n.Kind == yaml.AliasNode {
		if open[n.Alias] {
			return lineErr(n.Line, "alias *%s refers to a value that contains it", n.Value)
		}
		return checkAliases(n.Alias, open, budget)
	}
	open[n] = true
	defer delete(open, n)
	for _, c := range n.Content {
		if err := checkAliases(c, open, budget); err != nil {
			return err
		}
	}
	return nil
}

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// decodeStrict decodes n into v after checking that every mapping key names a field: yaml.v3's
// KnownFields does not reach into custom unmarshalers, and its messages lack the key's line.
func decodeStrict(n *yaml.Node, v any) error {
	if err := checkKeys(n, reflect.TypeOf(v), ""); err != nil {
		return err
	}
	if err := n.Decode(v); err != nil {
		var le *LineError
		if errors.As(err, &le) {
			return le
		}
		return yamlError("", err)
	}
	return nil
}

func checkKeys(n *yaml.Node, t reflect.Type, where string) error {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(yaml.Node{}) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // n.Decode reports the type mismatch
		}
		fields := map[string]reflect.Type{}
		var names []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			fields[name] = f.Type
			names = append(names, name)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			ft, ok := fields[k.Value]
			if !ok {
				in := ""
				if where != "" {
					in = " in " + where
				}
				return lineErr(k.Line, "unknown key %q%s (known: %s)", k.Value, in, strings.Join(names, ", "))
			}
			if err := checkKeys(n.Content[i+1], ft, k.Value); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind == yaml.SequenceNode {
			for _, c := range n.Content {
				if err := checkKeys(c, t.Elem(), where); err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		if n.Kind == yaml.MappingNode {
			for i := 1; i < len(n.Content); i += 2 {
				if err := checkKeys(n.Content[i], t.Elem(), where); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// bytesRepeat builds n bytes of readable filler text, line by line, starting with seed. A
// block of numbered lines is built once and then copied, so 50 MB cost little.
func bytesRepeat(seed string, n int) string {
	if n <= len(seed) {
		return seed
	}
	var block bytes.Buffer
	for i := 1; block.Len() < 64<<10; i++ {
		fmt.Fprintf(&block, "line %07d: the quick brown fox jumps over the lazy dog\n", i)
	}
	b := make([]byte, n)
	copy(b, seed)
	for off := len(seed); off < n; {
		off += copy(b[off:], block.Bytes())
	}
	return string(b)
}

func typeOf[T any]() reflect.Type { return reflect.TypeOf((*T)(nil)).Elem() }
