package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fuseraft/fr/internal/budget"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// options is a parsed command line.
type options struct {
	config // what a caller other than the command line may change

	help, version bool
	fromFile      bool // -f: the first argument names the file holding the filter

	rawInput, stream, streamErrors, ascii bool
	redact                                bool     // hide secrets in the output
	redactEnv, redactPatterns             []string // --redact-env, --redact-pattern
	colorFlag                             string   // "", "always" (-C) or "never" (-M)
	libPaths                              []string

	query     string
	haveQuery bool
	queryFile string // -f
	files     []string

	types []string

	raw, join, raw0, compact, tab bool
	indent                        int // -1: not given
	sortKeys, seq                 bool
	exitStatus                    bool
	nullInput, slurp              bool

	varNames   []string // "$name", in order
	varValues  []any
	named      map[string]any
	positional []any

	env        bool
	strict     bool
	timeout    time.Duration
	pretty     bool
	timestamps bool
	color      string
	anyVersion bool
	completion string        // --completion SHELL
	limits     budget.Limits // --max-* with --pretty
}

// flagDef is one of fr-filter's flags: its names, how many values it takes, its usage and what
// it sets. The table below is the only list of them: the parser, the help, the man page and
// the completions all read it.
type flagDef struct {
	name, short string
	hidden      []string // more names, undocumented (gojq's -v)
	args        int      // values it takes: 0, 1, or 2 (--arg NAME VALUE)
	usage       string
	values      []string // the values it takes, when a known few
	set         func(o *options, vals []string, mode *string) error
}

func on(f func(o *options)) func(*options, []string, *string) error {
	return func(o *options, _ []string, _ *string) error { f(o); return nil }
}

// flagTable is every flag, in the order --help shows them.
var flagTable []flagDef

func init() {
	flagTable = []flagDef{
		{name: "type", short: "t", args: 1, usage: "keep only events of the types in `T[,T...]` (repeatable), decided before decoding", values: wire.EventTypes(),
			set: func(o *options, vals []string, _ *string) error {
				for _, t := range strings.Split(vals[0], ",") {
					if t = strings.TrimSpace(t); t != "" {
						o.types = append(o.types, t)
					}
				}
				if len(o.types) == 0 {
					return usageErr("--type needs at least one event type")
				}
				return nil
			}},
		{name: "raw-output", short: "r", usage: "print strings raw, without quotes", set: on(func(o *options) { o.raw = true })},
		{name: "join-output", short: "j", usage: "like -r, with no newline after each value", set: on(func(o *options) { o.join = true })},
		{name: "raw-output0", usage: "like -r, with a NUL after each value", set: on(func(o *options) { o.raw0 = true })},
		{name: "compact-output", short: "c", usage: "compact output, one value a line (the default; given, lines passed on are compacted too)", set: on(func(o *options) { o.compact = true })},
		{name: "tab", usage: "pretty-print with a tab for each level", set: on(func(o *options) { o.tab = true })},
		{name: "indent", args: 1, usage: "pretty-print with `N` spaces for each level (0-7; 0 is compact)",
			set: func(o *options, vals []string, _ *string) error {
				n, err := strconv.Atoi(vals[0])
				if err != nil || n < 0 {
					return usageErr("--indent %s: not a number of spaces", quoteArg(vals[0]))
				}
				o.indent = n
				return nil
			}},
		{name: "sort-keys", short: "S", usage: "sort the keys of every object, also of lines passed on unchanged", set: on(func(o *options) { o.sortKeys = true })},
		{name: "seq", usage: "write an ASCII RS before each value (application/json-seq); accept it before input lines", set: on(func(o *options) { o.seq = true })},
		{name: "exit-status", short: "e", usage: "exit 1 when the last value is false or null, 4 when there is none", set: on(func(o *options) { o.exitStatus = true })},
		{name: "null-input", short: "n", usage: "run the filter once with null as input; read lines with input and inputs", set: on(func(o *options) { o.nullInput = true })},
		{name: "slurp", short: "s", usage: "read every line into one array and run the filter once on it (holds the whole input in memory)", set: on(func(o *options) { o.slurp = true })},
		{name: "from-file", short: "f", usage: "read the filter from the file the first argument names", set: on(func(o *options) { o.fromFile = true })},
		{name: "raw-input", short: "R", usage: "read each line as a string, not as JSON (with -s, the whole input as one string)", set: on(func(o *options) { o.rawInput = true })},
		{name: "stream", usage: "read each value as [path, leaf] events, in the order of the input", set: on(func(o *options) { o.stream = true })},
		{name: "stream-errors", usage: "as --stream (lines that are not JSON are skipped, so there is no error to stream)", set: on(func(o *options) { o.stream, o.streamErrors = true, true })},
		{name: "library-path", short: "L", args: 1, usage: "search `DIR` for modules (import, include); repeatable; default ~/.jq, $ORIGIN/../lib/jq, $ORIGIN/../lib",
			set: func(o *options, vals []string, _ *string) error { o.libPaths = append(o.libPaths, vals[0]); return nil }},
		{name: "color-output", short: "C", usage: "colour JSON output, as jq does (JQ_COLORS), even when not on a terminal", set: on(func(o *options) { o.colorFlag = "always" })},
		{name: "monochrome-output", short: "M", usage: "no colour", set: on(func(o *options) { o.colorFlag = "never" })},
		{name: "ascii-output", short: "a", usage: "escape every character past ASCII as \\uXXXX", set: on(func(o *options) { o.ascii = true })},
		{name: "arg", args: 2, usage: "NAME VALUE: set $NAME to the string VALUE (repeatable)",
			set: func(o *options, vals []string, _ *string) error { return o.addVar(vals[0], vals[1]) }},
		{name: "argjson", args: 2, usage: "NAME JSON: set $NAME to the JSON value (repeatable)",
			set: func(o *options, vals []string, _ *string) error {
				v, err := parseJSONArg(vals[1])
				if err != nil {
					return usageErr("--argjson %s: %s is not JSON: %v", vals[0], quoteArg(vals[1]), err)
				}
				return o.addVar(vals[0], v)
			}},
		{name: "slurpfile", args: 2, usage: "NAME FILE: set $NAME to an array of the JSON values in FILE",
			set: func(o *options, vals []string, _ *string) error {
				data, err := os.ReadFile(vals[1])
				if err != nil {
					return usageErr("--slurpfile %s: %v", vals[0], err)
				}
				v, err := parseJSONValues(data)
				if err != nil {
					return usageErr("--slurpfile %s: %s: %v", vals[0], vals[1], err)
				}
				return o.addVar(vals[0], v)
			}},
		{name: "rawfile", args: 2, usage: "NAME FILE: set $NAME to the contents of FILE as a string",
			set: func(o *options, vals []string, _ *string) error {
				data, err := os.ReadFile(vals[1])
				if err != nil {
					return usageErr("--rawfile %s: %v", vals[0], err)
				}
				return o.addVar(vals[0], string(data))
			}},
		{name: "args", usage: "the remaining arguments are strings, in $ARGS.positional (not input files)",
			set: func(_ *options, _ []string, mode *string) error { *mode = "args"; return nil }},
		{name: "jsonargs", usage: "the remaining arguments are JSON values, in $ARGS.positional",
			set: func(_ *options, _ []string, mode *string) error { *mode = "jsonargs"; return nil }},
		{name: "env", usage: "let the filter see the environment ($ENV, env)", set: on(func(o *options) { o.env = true })},
		{name: "strict", usage: "a line that is not JSON is an error (exit 5) instead of being skipped", set: on(func(o *options) { o.strict = true })},
		{name: "timeout", args: 1, usage: "stop evaluating a line after `DUR` (e.g. 2s) and report it as an error on that line",
			set: func(o *options, vals []string, _ *string) error {
				d, err := time.ParseDuration(vals[0])
				if err != nil || d <= 0 {
					return usageErr("--timeout %s: not a duration such as 500ms or 2s", quoteArg(vals[0]))
				}
				o.timeout = d
				return nil
			}},
		{name: "redact", usage: "hide secrets in the output: the value of $FUSERAFT_SERVE_TOKEN, bearer tokens, GitHub, AWS, Google, OpenAI, Anthropic and Slack tokens, private key blocks, in every string of every line (lines passed on keep their bytes but for what is hidden)",
			set: on(func(o *options) { o.redact = true })},
		{name: "redact-env", args: 1, usage: "with --redact (which it turns on), hide the value of environment variable `NAME` too (repeatable)",
			set: func(o *options, vals []string, _ *string) error {
				o.redact, o.redactEnv = true, append(o.redactEnv, vals[0])
				return nil
			}},
		{name: "redact-pattern", args: 1, usage: "with --redact (which it turns on), hide the matches of `REGEX` too (RE2; repeatable)",
			set: func(o *options, vals []string, _ *string) error {
				o.redact, o.redactPatterns = true, append(o.redactPatterns, vals[0])
				return nil
			}},
		{name: "pretty", short: "p", usage: "render events for a person, as fr-stream does on a terminal", set: on(func(o *options) { o.pretty = true })},
		{name: "color", args: 1, usage: "colour: `WHEN` is {values} (default auto; -C and -M win)", values: cmdutil.ColorValues,
			set: func(o *options, vals []string, _ *string) error { o.color = vals[0]; return nil }},
		{name: "timestamps", usage: "with --pretty, start lines with the time their event was read", set: on(func(o *options) { o.timestamps = true })},
	}
	flagTable = append(flagTable, limitFlags()...)
	flagTable = append(flagTable, []flagDef{
		{name: "any-version", usage: "go on (with a warning) when fuseraft speaks an unsupported protocolVersion", set: on(func(o *options) { o.anyVersion = true })},
		{name: "unbuffered", usage: "accepted for jq compatibility: output is always written as it is ready", set: on(func(*options) {})},
		{name: "completion", args: 1, usage: "print the completion script for `SHELL`: {values}", values: cmdutil.Shells,
			set: func(o *options, vals []string, _ *string) error { o.completion = vals[0]; return nil }},
		// The first of --help and --version counts, as in jq.
		{name: "help", short: "h", usage: "show help", set: on(func(o *options) { o.help = o.help || !o.version })},
		{name: "version", short: "V", hidden: []string{"v"}, usage: "print the version and the revision it was built from",
			set: on(func(o *options) { o.version = o.version || !o.help })},
	}...)
	flagByName = map[string]*flagDef{}
	for i := range flagTable {
		f := &flagTable[i]
		for _, n := range append([]string{f.name, f.short}, f.hidden...) {
			if n != "" {
				flagByName[n] = f
			}
		}
	}
}

// flagByName finds a flag by any of its names.
var flagByName map[string]*flagDef

// flagKind is how many values the flag name takes, and whether there is one.
func flagKind(name string) (int, bool) {
	f, ok := flagByName[name]
	if !ok {
		return 0, false
	}
	return f.args, true
}

// knownLong are the long names, for suggestions.
func knownLong() []string {
	var out []string
	for _, f := range flagTable {
		out = append(out, f.name)
	}
	return out
}

// parseArgs reads a jq-style command line: flags and arguments in any order, bundled short
// flags (-rc), --name=value, and -- to end the flags. The first argument is the filter (unless
// -f gives it); later ones are input files, or values after --args/--jsonargs.
func parseArgs(args []string) (*options, error) {
	p := &argReader{o: &options{indent: -1, named: map[string]any{}, color: "auto"}, args: args}
	if err := p.read(); err != nil {
		return nil, err
	}
	o := p.o
	if err := o.check(); err != nil {
		return nil, err
	}
	for i, name := range o.varNames {
		o.named[name[1:]] = o.varValues[i]
	}
	if o.positional == nil {
		o.positional = []any{}
	}
	return o, nil
}

// argReader reads a command line into options, one argument after another.
type argReader struct {
	o    *options
	mode string // "", "args", "jsonargs"
	args []string
	i    int // the argument being read
}

func (p *argReader) read() error {
	for ; p.i < len(p.args); p.i++ {
		a := p.args[p.i]
		if a == "--" {
			for _, arg := range p.args[p.i+1:] {
				if err := p.positional(arg); err != nil {
					return err
				}
			}
			return nil
		}
		if len(a) < 2 || a[0] != '-' {
			if err := p.positional(a); err != nil {
				return err
			}
			continue
		}
		names, inline, filter := flagNames(a)
		if filter {
			if err := p.positional(a); err != nil {
				return err
			}
			continue
		}
		for _, name := range names {
			if err := p.flag(a, name, inline); err != nil {
				return err
			}
		}
	}
	return nil
}

// positional takes an argument that is not a flag: the filter, first (unless -f gives it),
// then a value after --args or --jsonargs, else an input file.
func (p *argReader) positional(a string) error {
	o := p.o
	switch {
	case !o.haveQuery && o.queryFile == "":
		o.query, o.haveQuery = a, true
	case p.mode == "args":
		o.positional = append(o.positional, a)
	case p.mode == "jsonargs":
		v, err := parseJSONArg(a)
		if err != nil {
			return usageErr("--jsonargs: %s is not JSON: %v", quoteArg(a), err)
		}
		o.positional = append(o.positional, v)
	default:
		o.files = append(o.files, a)
	}
	return nil
}

// flagNames reads the flags of the argument a, which starts with a dash: one long name
// (--name, with its inline value in --name=value), or short ones bundled. -rc is -r -c. As in
// jq, an argument with something other than letters before any flag that takes a value is
// the filter (-. or -1[0]); a flag that takes a value takes the rest of the argument when
// there is any (-Ldir), else the next.
func flagNames(a string) (names []string, inline *string, filter bool) {
	if strings.HasPrefix(a, "--") {
		name := a[2:]
		if k, v, ok := strings.Cut(name, "="); ok {
			name, inline = k, &v
		}
		return []string{name}, inline, false
	}
	for k := 1; k < len(a); k++ {
		c := a[k]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return nil, nil, true
		}
		names = append(names, string(c))
		if n, _ := flagKind(string(c)); n > 0 {
			if k+1 < len(a) {
				v := strings.TrimPrefix(a[k+1:], "=")
				inline = &v
			}
			break
		}
	}
	return names, inline, false
}

// flag sets the flag name, written in the argument a, taking its values from inline or the
// arguments that follow.
func (p *argReader) flag(a, name string, inline *string) error {
	long := strings.HasPrefix(a, "--")
	n, ok := flagKind(name)
	if !ok || (len(name) == 1) != !long {
		msg := fmt.Sprintf("unknown flag `%s'", name)
		if long {
			msg = fmt.Sprintf("unknown flag `%s'", flagName(name, a))
		}
		if s := cmdutil.DidYouMean(name, knownLong()); s != "" && len(name) > 1 {
			msg += "; did you mean `--" + s + "'?"
		}
		return usageErr("%s", msg)
	}
	if n == 0 && inline != nil && long {
		return usageErr("boolean flag `--%s' cannot have an argument", name)
	}
	var vals []string
	if inline != nil && n > 0 {
		vals = append(vals, *inline)
	}
	for len(vals) < n {
		if p.i+1 >= len(p.args) {
			return usageErr("expected %s for flag `%s'", valueWords(n), flagName(name, a))
		}
		p.i++
		vals = append(vals, p.args[p.i])
	}
	return flagByName[name].set(p.o, vals, &p.mode)
}

// check refuses the options that do not go together, once all are read.
func (o *options) check() error {
	if o.fromFile {
		if !o.haveQuery {
			return usageErr("expected a query file for flag `-f'")
		}
		o.queryFile, o.query, o.haveQuery = o.query, "", false
	}
	if o.indent > 7 {
		return usageErr("--indent %d: at most 7 spaces", o.indent)
	}
	if err := cmdutil.CheckEnum("color", o.color, cmdutil.ColorValues); err != nil {
		return cmdutil.WithHint(err, "see 'fr-filter --help'")
	}
	if o.completion != "" {
		if err := cmdutil.CheckShell(o.completion); err != nil {
			return cmdutil.WithHint(err, "see 'fr-filter --help'")
		}
	}
	if o.rawInput {
		o.stream = false // as gojq: raw lines have no structure to stream
	}
	return o.checkPretty()
}

// checkPretty refuses what --pretty, which renders events for a person, does not go with.
func (o *options) checkPretty() error {
	if o.timestamps && !o.pretty {
		return usageErr("--timestamps goes with --pretty: JSON output carries no time")
	}
	if o.limits.Any() && !o.pretty {
		return usageErr("--max-turns, --max-tokens, --max-duration and --max-cost go with --pretty: they are shown to a person")
	}
	if o.limits.CostUSD > 0 && o.limits.Prices == nil {
		return usageErr("--max-cost needs --prices FILE")
	}
	if o.pretty && (o.raw || o.join || o.raw0 || o.tab || o.indent > 0 || o.seq) {
		return usageErr("--pretty renders events; it cannot be combined with -r, -j, --raw-output0, --tab, --indent or --seq")
	}
	return nil
}

func flagName(name, arg string) string {
	if strings.HasPrefix(arg, "--") {
		return "--" + name
	}
	return "-" + name
}

func valueWords(n int) string {
	if n == 2 {
		return "2 arguments"
	}
	return "argument"
}

func quoteArg(s string) string { return strconv.Quote(s) }

func (o *options) addVar(name string, v any) error {
	if !validVarName(name) {
		return usageErr("%s is not a valid variable name", quoteArg(name))
	}
	for _, n := range o.varNames {
		if n[1:] == name {
			return nil // as in jq, the first --arg of a name wins
		}
	}
	o.varNames = append(o.varNames, "$"+name)
	o.varValues = append(o.varValues, v)
	return nil
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// parseJSONArg parses exactly one JSON value, with numbers as gojq's command line reads them.
func parseJSONArg(s string) (any, error) {
	vs, err := parseJSONValues([]byte(s))
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("want one value, got %d", len(vs))
	}
	return vs[0], nil
}

// parseJSONValues parses a sequence of JSON values (a --slurpfile).
func parseJSONValues(data []byte) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	out := []any{}
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}
