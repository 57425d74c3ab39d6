// Package query answers fuseraft's --json resource queries for fr-sim (protocol page, section
// "Resource queries"): sessions, memory, context, schedule, plugins, models, config, validate
// and init, each printing exactly one envelope line, from an embedded dataset or one of the
// user's own.
//
// The environment it reads besides fr-sim's FRSIM_SCENARIO and FRSIM_FAULTS (dotnet, crlf,
// noise, version=N and crash apply to envelopes too):
//
//	FRSIM_STATE=FILE       the dataset, a JSON file shaped like the embedded one
//	                       ('fr-sim dataset' prints the embedded data.json)
//	FRSIM_UNCONFIGURED=1   models answers "not configured" (as does a scenario whose
//	                       repl.notConfigured is set); fr-sim's repl and run refuse too
//	FRSIM_ITEMS=N          sessions --json lists N generated sessions, streamed
//	FRSIM_NOW=TIME         the clock (RFC 3339) deciding schedule's due
//	FRSIM_STDERR=TEXT      a diagnostic line written to stderr before the envelope
//	FRSIM_KILL=SIGNAL      write half of the envelope, then die of SIGNAL (KILL, TERM, SEGV...)
package query

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fuseraft/fr/internal/cmd/sim/scenario"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// Environment variables of the queries (see the package comment).
const (
	EnvState        = "FRSIM_STATE"
	EnvUnconfigured = "FRSIM_UNCONFIGURED"
	EnvItems        = "FRSIM_ITEMS"
	EnvNow          = "FRSIM_NOW"
	EnvStderr       = "FRSIM_STDERR"
	EnvKill         = "FRSIM_KILL"
)

// NotConfigured is fuseraft's message when no provider is set up.
const NotConfigured = "fuseraft is not configured. Run 'fuseraft setup' to set an API key."

//go:embed data.json
var defaultData []byte

// DefaultState returns the embedded dataset, as FRSIM_STATE files are written.
func DefaultState() []byte { return append([]byte(nil), defaultData...) }

// State is the dataset the queries answer from.
type State struct {
	NotConfigured string                        `json:"notConfigured"`
	Sessions      []StoredSession               `json:"sessions"`
	ReplSessions  []StoredReplSession           `json:"replSessions"`
	Memories      map[string][]wire.Memory      `json:"memories"`
	Context       map[string][]wire.ContextItem `json:"context"`
	Schedules     []wire.ScheduledJob           `json:"schedules"`
	Plugins       []wire.Plugin                 `json:"plugins"`
	Models        []wire.Model                  `json:"models"`
	Configs       []wire.ConfigSummary          `json:"configs"`
	Templates     []wire.Template               `json:"templates"`
	Endpoint      *string                       `json:"endpoint"`
}

// StoredSession is an orchestration session with everything both its list and detail show.
type StoredSession struct {
	wire.SessionDetail
	TurnCount int `json:"turnCount"`
}

// StoredReplSession is a REPL chat as sessions --repl lists it, plus the earlier turns
// repl --resume replays (the embedded scenario resumes every chat of the dataset).
type StoredReplSession struct {
	wire.ReplSession
	Replay *scenario.Replay `json:"replay,omitempty"`
}

func (s StoredSession) summary() wire.Session {
	return wire.Session{SessionInfo: s.SessionInfo, TurnCount: s.TurnCount}
}

// LoadState reads the dataset named by FRSIM_STATE, else the embedded one.
func LoadState(getenv func(string) string) (*State, error) {
	data := defaultData
	if p := getenv(EnvState); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvState, err)
		}
		data = b
	}
	st := &State{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("%s: %v", EnvState, err)
	}
	return st, nil
}

// LoadStateFile reads a dataset file strictly: an unknown key is an error, so that a typo in
// a hand-edited copy is found before the queries silently answer without it.
func LoadStateFile(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	st := &State{}
	if err := d.Decode(st); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return st, nil
}

// q is one query being answered.
type q struct {
	ctx    context.Context
	s      cmdutil.Streams
	st     *State
	faults scenario.Faults
	out    *bufio.Writer
	human  bool // no --json: fuseraft's human output
}

// usageError is a bad command line: fuseraft prints it on stderr and exits 2, JSON or not.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// failure is a failed query: an error envelope (or, without --json, a message), exit 1.
type failure struct{ msg string }

func (e *failure) Error() string { return e.msg }

// Run answers one query; args are fuseraft's arguments after the program name
// (for example "sessions", "--json", "--all"). It returns the exit status.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	sc, err := scenario.FromEnv(s.Env)
	if err != nil {
		fmt.Fprintf(s.Err, "fr-sim: error: %v\n", err)
		return cmdutil.ExitUsage
	}
	st, err := LoadState(s.Env)
	if err != nil {
		fmt.Fprintf(s.Err, "fr-sim: error: %v\n", err)
		return cmdutil.ExitUsage
	}
	if sc.Repl.NotConfigured != "" && st.NotConfigured == "" {
		st.NotConfigured = sc.Repl.NotConfigured
	}
	if v := s.Env(EnvUnconfigured); v != "" && v != "0" && st.NotConfigured == "" {
		st.NotConfigured = NotConfigured
	}
	qq := &q{ctx: ctx, s: s, st: st, faults: sc.Faults, out: bufio.NewWriterSize(s.Out, 64<<10)}
	if d := s.Env(EnvStderr); d != "" {
		fmt.Fprintln(s.Err, d)
	}
	code := qq.run(args)
	if err := qq.out.Flush(); err != nil && code == 0 {
		code = 1
	}
	return code
}

// queries are the --json queries fr-sim answers, by their first argument.
var queries = map[string]func(qq *q, args []string) error{
	"sessions": (*q).sessions, "memory": (*q).memory, "context": (*q).context,
	"schedule": (*q).schedule, "plugins": (*q).plugins, "models": (*q).models,
	"config": (*q).config, "validate": (*q).validate, "init": (*q).init,
}

func (qq *q) run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(qq.s.Err, "fr-sim: error: no query given")
		return cmdutil.ExitUsage
	}
	query, ok := queries[args[0]]
	if !ok {
		return qq.finish(&usageError{fmt.Sprintf("unknown command %q", args[0])})
	}
	return qq.finish(query(qq, args[1:]))
}

// finish turns an answer's error into output and an exit status.
func (qq *q) finish(err error) int {
	var ue *usageError
	var fe *failure
	var ex exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(qq.s.Err, "Error: %s\n", ue.msg)
		return cmdutil.ExitUsage
	case errors.As(err, &fe):
		if qq.human {
			fmt.Fprintf(qq.s.Err, "Error: %s\n", fe.msg)
			return 1
		}
		line := `{"protocolVersion":` + strconv.Itoa(qq.faults.Version()) + `,"error":` + string(qq.encode(fe.msg)) + `}`
		if werr := qq.line([]byte(line)); werr != nil {
			return 1
		}
		return 1
	case errors.As(err, &ex):
		return int(ex)
	case wire.IsBrokenPipe(err):
		return 1
	}
	fmt.Fprintf(qq.s.Err, "Error: %v\n", err)
	return 1
}

// exitCode ends the query with that status after its output was written.
type exitCode int

func (e exitCode) Error() string { return "exit status " + strconv.Itoa(int(e)) }

func (qq *q) encode(v any) []byte { return qq.faults.Encode(v) }

func (qq *q) end() string {
	if qq.faults.CRLF {
		return "\r\n"
	}
	return "\n"
}

// line writes a whole envelope line, with the faults that apply to one.
func (qq *q) line(b []byte) error {
	if err := qq.noise(); err != nil {
		return err
	}
	if err := qq.dying(b); err != nil {
		return err
	}
	if _, err := qq.out.Write(b); err != nil {
		return err
	}
	_, err := qq.out.WriteString(qq.end())
	return err
}

func (qq *q) noise() error {
	for _, n := range qq.faults.Noise {
		if _, err := qq.out.WriteString(n + qq.end()); err != nil {
			return err
		}
	}
	return nil
}

// dying writes half of b and ends the process as the crash fault or FRSIM_KILL say.
func (qq *q) dying(b []byte) error {
	sig := strings.ToUpper(strings.TrimPrefix(strings.ToUpper(qq.s.Env(EnvKill)), "SIG"))
	if sig == "" && qq.faults.CrashAfter == 0 {
		return nil
	}
	_, _ = qq.out.Write(b[:len(b)/2])
	_ = qq.out.Flush()
	if sig == "" {
		code := qq.faults.CrashExitCode
		if code == 0 {
			code = 134
		}
		fmt.Fprintln(qq.s.Err, "Unhandled exception. System.InvalidOperationException: simulated crash")
		return exitCode(code)
	}
	signals := map[string]syscall.Signal{"KILL": syscall.SIGKILL, "TERM": syscall.SIGTERM, "SEGV": syscall.SIGSEGV,
		"ABRT": syscall.SIGABRT, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP, "PIPE": syscall.SIGPIPE}
	s, ok := signals[sig]
	if !ok {
		return &usageError{fmt.Sprintf("%s=%s: unknown signal", EnvKill, sig)}
	}
	// Die the way a process killed from outside does: by the signal's default action, not
	// the Go runtime's handler (a traceback and exit 2 for SEGV and ABRT, nothing for PIPE).
	signal.Reset(s)
	_ = setDefaultAction(s)
	_ = syscall.Kill(os.Getpid(), s)
	time.Sleep(2 * time.Second) // the signal ends us; this is never reached unless it is ignored
	return exitCode(1)
}

// items writes {"protocolVersion":V,"items":[...]} with each element encoded as fuseraft does.
func items[T any](qq *q, list []T) error {
	if qq.human {
		return humanList(qq, list)
	}
	var b []byte
	b = append(b, `{"protocolVersion":`...)
	b = strconv.AppendInt(b, int64(qq.faults.Version()), 10)
	b = append(b, `,"items":[`...)
	for i, it := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, qq.encode(it)...)
	}
	b = append(b, "]}"...)
	return qq.line(b)
}

// item writes {"protocolVersion":V,"item":{...}}.
func (qq *q) item(v any) error {
	if qq.human {
		return humanList(qq, []any{v})
	}
	b := []byte(`{"protocolVersion":` + strconv.Itoa(qq.faults.Version()) + `,"item":`)
	b = append(b, qq.encode(v)...)
	b = append(b, '}')
	return qq.line(b)
}

// humanList is a plain rendering for the commands run without --json: one line per item,
// its fields tab-separated. fuseraft's real human output is richer; nothing parses it.
func humanList[T any](qq *q, list []T) error {
	if len(list) == 0 {
		_, err := qq.out.WriteString("Nothing to show." + qq.end())
		return err
	}
	for _, it := range list {
		var parts []string
		raw := scenario.Marshal(it)
		d := json.NewDecoder(strings.NewReader(string(raw)))
		_, _ = d.Token()
		for d.More() {
			k, _ := d.Token()
			var v json.RawMessage
			_ = d.Decode(&v)
			if len(parts) < 4 && len(v) > 0 && v[0] != '[' && v[0] != '{' {
				parts = append(parts, fmt.Sprintf("%v=%s", k, v))
			}
		}
		if _, err := qq.out.WriteString(strings.Join(parts, "  ") + qq.end()); err != nil {
			return err
		}
	}
	return nil
}

// flags is a parsed fuseraft command line.
type flags struct {
	vals map[string]string
	set  map[string]bool
	args []string
}

func (f flags) has(n string) bool { return f.set[n] }

// parse reads args with the given flags: value flags take the next argument (or =value),
// the rest are booleans; anything else starting with - is an unknown option.
func parse(args []string, valued, bools string) (flags, error) {
	f := flags{vals: map[string]string{}, set: map[string]bool{}}
	isV := map[string]bool{}
	for _, n := range strings.Fields(valued) {
		isV[n] = true
	}
	isB := map[string]bool{}
	for _, n := range strings.Fields(bools) {
		isB[n] = true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			f.args = append(f.args, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			f.args = append(f.args, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case isV[name]:
			if !hasVal {
				if i+1 >= len(args) {
					return f, &usageError{fmt.Sprintf("option --%s needs a value", name)}
				}
				i++
				val = args[i]
			}
			f.vals[name], f.set[name] = val, true
		case isB[name] && !hasVal:
			f.set[name] = true
		default:
			return f, &usageError{fmt.Sprintf("unrecognized option '%s'", a)}
		}
	}
	return f, nil
}

// flags parses a query's arguments (see parse); --json or not decides how it answers.
func (qq *q) flags(args []string, valued, bools string) (flags, error) {
	f, err := parse(args, valued, bools)
	if err == nil {
		qq.human = !f.has("json")
	}
	return f, err
}

// subcommand is flags for a query whose first argument is a subcommand, one of subs. A list
// subcommand takes no arguments.
func (qq *q) subcommand(args []string, name, subs, valued, bools string) (string, flags, error) {
	if len(args) == 0 {
		return "", flags{}, &usageError{name + " needs a subcommand: " + subs}
	}
	f, err := qq.flags(args[1:], valued, bools)
	if err == nil && args[0] == "list" {
		err = f.noArgs()
	}
	return args[0], f, err
}

func unknownSubcommand(name, sub string) error {
	return &usageError{fmt.Sprintf("unknown %s subcommand %q", name, sub)}
}

// noArgs refuses arguments a query does not take.
func (f flags) noArgs() error {
	if len(f.args) > 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", f.args[0])}
	}
	return nil
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return a
}

var sessionIDPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$`)

func (qq *q) sessions(args []string) error {
	f, err := qq.flags(args, "show project delete older-than", "json all repl cleanup prune")
	if err != nil {
		return err
	}
	if err := f.noArgs(); err != nil {
		return err
	}
	if f.has("json") && (f.has("prune") || f.has("cleanup") || f.has("delete")) {
		return &failure{"--json can't be combined with --prune, --cleanup or --delete"}
	}
	if f.has("delete") {
		for _, s := range qq.st.Sessions {
			if s.SessionID == f.vals["delete"] {
				return nil
			}
		}
		return &failure{fmt.Sprintf("Session '%s' not found.", f.vals["delete"])}
	}
	if f.has("prune") || f.has("cleanup") {
		return nil
	}
	if f.has("show") {
		return qq.showSession(f.vals["show"])
	}
	if f.has("repl") {
		return qq.replSessions(f)
	}
	if n := qq.s.Env(EnvItems); n != "" && !qq.human {
		count, err := strconv.Atoi(n)
		if err != nil || count < 0 {
			return &usageError{fmt.Sprintf("%s=%q: want a whole number", EnvItems, n)}
		}
		return qq.generated(count)
	}
	list := []wire.Session{}
	for _, s := range qq.st.Sessions {
		if s.IsComplete && !f.has("all") {
			continue
		}
		if f.has("project") && (s.WorkingDirectory == nil || filepath.Clean(*s.WorkingDirectory) != abs(f.vals["project"])) {
			continue
		}
		list = append(list, s.summary())
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].LastUpdatedAt.After(list[j].LastUpdatedAt) })
	return items(qq, list)
}

// showSession is sessions --show ID: the session's detail.
func (qq *q) showSession(id string) error {
	if !sessionIDPattern.MatchString(id) {
		return &failure{fmt.Sprintf("'%s' is not a valid session ID.", id)}
	}
	for _, s := range qq.st.Sessions {
		if strings.EqualFold(s.SessionID, id) {
			d := s.SessionDetail
			if d.Messages == nil {
				d.Messages = []wire.AgentMessage{}
			}
			return qq.item(d)
		}
	}
	return &failure{fmt.Sprintf("Session '%s' not found.", id)}
}

// replSessions is sessions --repl: the REPL chats, of the --project only if given, the
// latest first.
func (qq *q) replSessions(f flags) error {
	list := []wire.ReplSession{}
	for _, r := range qq.st.ReplSessions {
		if !f.has("project") || filepath.Clean(r.Cwd) == abs(f.vals["project"]) {
			list = append(list, r.ReplSession)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].LastUpdatedAt.After(list[j].LastUpdatedAt) })
	return items(qq, list)
}

// generated streams an envelope of n made-up sessions, for tests of big envelopes.
func (qq *q) generated(n int) error {
	if err := qq.noise(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(qq.out, `{"protocolVersion":%d,"items":[`, qq.faults.Version()); err != nil {
		return err
	}
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	wd, cfg := "/home/dev/src/brewer", "/home/dev/src/brewer/.fuseraft/config/dev-team.yaml"
	for i := 0; i < n; i++ {
		if i > 0 {
			if err := qq.out.WriteByte(','); err != nil {
				return err
			}
		}
		s := wire.Session{SessionInfo: wire.SessionInfo{
			SessionID:        fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i),
			Task:             fmt.Sprintf("Generated task %d: \"tidy\" the <queue> & retry", i),
			WorkingDirectory: &wd, ConfigPath: &cfg,
			StartedAt:     base.Add(-time.Duration(i) * time.Minute),
			LastUpdatedAt: base.Add(-time.Duration(i)*time.Minute + 30*time.Second),
		}, TurnCount: i % 40}
		if _, err := qq.out.Write(qq.encode(s)); err != nil {
			return err
		}
		if i%1024 == 0 && qq.ctx.Err() != nil {
			return qq.ctx.Err()
		}
	}
	if _, err := qq.out.WriteString("]}" + qq.end()); err != nil {
		return err
	}
	return nil
}

func (qq *q) memory(args []string) error {
	sub, f, err := qq.subcommand(args, "memory", "list, agents or delete", "agent", "json")
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		list := qq.st.Memories[f.vals["agent"]]
		if list == nil {
			list = []wire.Memory{}
		}
		return items(qq, list)
	case "agents":
		list := []wire.MemoryAgent{}
		for a, m := range qq.st.Memories {
			if a != "" && len(m) > 0 {
				list = append(list, wire.MemoryAgent{Agent: a, Count: len(m)})
			}
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Agent < list[j].Agent })
		return items(qq, list)
	case "delete":
		if len(f.args) != 1 {
			return &usageError{"memory delete takes one NAME"}
		}
		for _, m := range qq.st.Memories[f.vals["agent"]] {
			if m.Name == f.args[0] {
				return nil
			}
		}
		return &failure{fmt.Sprintf("No memory named '%s'.", f.args[0])}
	}
	return unknownSubcommand("memory", sub)
}

func (qq *q) context(args []string) error {
	sub, f, err := qq.subcommand(args, "context", "list, add or remove", "dir name description", "json")
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		key := ""
		if f.has("dir") {
			d := abs(f.vals["dir"])
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				return &failure{fmt.Sprintf("Directory '%s' does not exist.", f.vals["dir"])}
			}
			if wd, err := os.Getwd(); err != nil || d != wd {
				key = d
			}
		}
		list := qq.st.Context[key]
		if list == nil {
			list = []wire.ContextItem{}
		}
		return items(qq, list)
	case "add", "remove":
		return nil
	}
	return unknownSubcommand("context", sub)
}

func (qq *q) now() time.Time {
	if v := qq.s.Env(EnvNow); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t
		}
	}
	return time.Now()
}

func (qq *q) schedule(args []string) error {
	sub, _, err := qq.subcommand(args, "schedule", "list, add, remove, enable or disable", "cron task config workdir description", "json")
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		now := qq.now()
		list := append([]wire.ScheduledJob{}, qq.st.Schedules...)
		for i := range list {
			list[i].Due = list[i].Enabled && list[i].NextRun != nil && !list[i].NextRun.After(now)
		}
		sort.SliceStable(list, func(i, j int) bool {
			a, b := list[i].NextRun, list[j].NextRun
			if a == nil || b == nil {
				return a != nil
			}
			return a.Before(*b)
		})
		return items(qq, list)
	case "add", "remove", "enable", "disable":
		return nil
	}
	return unknownSubcommand("schedule", sub)
}

func (qq *q) plugins(args []string) error {
	f, err := qq.flags(args, "plugin", "json")
	if err != nil {
		return err
	}
	list := []wire.Plugin{}
	for _, p := range qq.st.Plugins {
		if !f.has("plugin") || strings.EqualFold(p.Name, f.vals["plugin"]) {
			list = append(list, p)
		}
	}
	if f.has("plugin") && len(list) == 0 {
		return &failure{fmt.Sprintf("No plugin named '%s'.", f.vals["plugin"])}
	}
	return items(qq, list)
}

func (qq *q) models(args []string) error {
	if _, err := qq.flags(args, "", "json"); err != nil {
		return err
	}
	if qq.st.NotConfigured != "" {
		return &failure{qq.st.NotConfigured}
	}
	return items(qq, qq.st.Models)
}
