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
)

// options is a parsed command line.
type options struct {
	help, version bool
	fromFile      bool // -f: the first argument names the file holding the filter

	rawInput, stream, streamErrors, ascii bool
	colorFlag                             string // "", "always" (-C) or "never" (-M)
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
}

// flagKind is how many values a flag takes.
var flagKind = map[string]int{
	"type": 1, "t": 1,
	"raw-output": 0, "r": 0, "join-output": 0, "j": 0, "raw-output0": 0,
	"compact-output": 0, "c": 0, "tab": 0, "indent": 1, "sort-keys": 0, "S": 0, "seq": 0,
	"exit-status": 0, "e": 0, "null-input": 0, "n": 0, "slurp": 0, "s": 0,
	"from-file": 0, "f": 0,
	"raw-input": 0, "R": 0, "color-output": 0, "C": 0, "monochrome-output": 0, "M": 0,
	"ascii-output": 0, "a": 0, "library-path": 1, "L": 1, "stream": 0, "stream-errors": 0,
	"arg": 2, "argjson": 2, "slurpfile": 2, "rawfile": 2,
	"args": 0, "jsonargs": 0,
	"env": 0, "strict": 0, "timeout": 1, "pretty": 0, "p": 0, "color": 1, "timestamps": 0,
	"any-version": 0, "unbuffered": 0,
	"help": 0, "h": 0, "version": 0, "V": 0, "v": 0,
}

// parseArgs reads a jq-style command line: flags and arguments in any order, bundled short
// flags (-rc), --name=value, and -- to end the flags. The first argument is the filter (unless
// -f gives it); later ones are input files, or values after --args/--jsonargs.
func parseArgs(args []string) (*options, error) {
	o := &options{indent: -1, named: map[string]any{}, color: "auto"}
	mode := "" // "", "args", "jsonargs"
	positional := func(a string) error {
		switch {
		case !o.haveQuery && o.queryFile == "":
			o.query, o.haveQuery = a, true
		case mode == "args":
			o.positional = append(o.positional, a)
		case mode == "jsonargs":
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
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			for _, p := range args[i+1:] {
				if err := positional(p); err != nil {
					return nil, err
				}
			}
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if err := positional(a); err != nil {
				return nil, err
			}
			continue
		}
		var names []string
		var inline *string
		if strings.HasPrefix(a, "--") {
			name := a[2:]
			if k, v, ok := strings.Cut(name, "="); ok {
				name, inline = k, &v
			}
			names = []string{name}
		} else {
			// -rc is -r -c. As in jq, an argument with something other than letters before
			// any flag that takes a value is the filter (-. or -1[0]); a flag that takes a
			// value takes the rest of the argument when there is any (-Ldir), else the next.
			filter := false
			for k := 1; k < len(a); k++ {
				c := a[k]
				if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
					filter = true
					break
				}
				if flagKind[string(c)] > 0 {
					if k+1 < len(a) {
						v := strings.TrimPrefix(a[k+1:], "=")
						inline = &v
					}
					names = append(names, string(c))
					break
				}
				names = append(names, string(c))
			}
			if filter {
				if err := positional(a); err != nil {
					return nil, err
				}
				continue
			}
		}
		for _, name := range names {
			n, ok := flagKind[name]
			if !ok || (len(name) == 1) != !strings.HasPrefix(a, "--") {
				if !strings.HasPrefix(a, "--") {
					return nil, usageErr("unknown flag `%s'", name)
				}
				return nil, usageErr("unknown flag `%s'", flagName(name, a))
			}
			if n == 0 && inline != nil && strings.HasPrefix(a, "--") {
				return nil, usageErr("boolean flag `--%s' cannot have an argument", name)
			}
			var vals []string
			if inline != nil && n > 0 {
				vals = append(vals, *inline)
			}
			for len(vals) < n {
				if i+1 >= len(args) {
					return nil, usageErr("expected %s for flag `%s'", valueWords(n), flagName(name, a))
				}
				i++
				vals = append(vals, args[i])
			}
			if err := o.set(name, vals, &mode); err != nil {
				return nil, err
			}
		}
	}
	if o.fromFile {
		if !o.haveQuery {
			return nil, usageErr("expected a query file for flag `-f'")
		}
		o.queryFile, o.query, o.haveQuery = o.query, "", false
	}
	if o.indent > 7 {
		return nil, usageErr("--indent %d: at most 7 spaces", o.indent)
	}
	switch o.color {
	case "auto", "always", "never":
	default:
		return nil, usageErr("--color %s: use auto, always or never", quoteArg(o.color))
	}
	if o.rawInput {
		o.stream = false // as gojq: raw lines have no structure to stream
	}
	if o.timestamps && !o.pretty {
		return nil, usageErr("--timestamps goes with --pretty: JSON output carries no time")
	}
	if o.pretty && (o.raw || o.join || o.raw0 || o.tab || o.indent > 0 || o.seq) {
		return nil, usageErr("--pretty renders events; it cannot be combined with -r, -j, --raw-output0, --tab, --indent or --seq")
	}
	for i, name := range o.varNames {
		o.named[name[1:]] = o.varValues[i]
	}
	if o.positional == nil {
		o.positional = []any{}
	}
	return o, nil
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

func (o *options) set(name string, vals []string, mode *string) error {
	switch name {
	case "help", "h":
		// The first of --help and --version counts, as in jq.
		o.help = o.help || !o.version
	case "version", "V", "v":
		o.version = o.version || !o.help
	case "type", "t":
		for _, t := range strings.Split(vals[0], ",") {
			if t = strings.TrimSpace(t); t != "" {
				o.types = append(o.types, t)
			}
		}
		if len(o.types) == 0 {
			return usageErr("--type needs at least one event type")
		}
	case "raw-output", "r":
		o.raw = true
	case "join-output", "j":
		o.join = true
	case "raw-output0":
		o.raw0 = true
	case "compact-output", "c":
		o.compact = true
	case "tab":
		o.tab = true
	case "indent":
		n, err := strconv.Atoi(vals[0])
		if err != nil || n < 0 {
			return usageErr("--indent %s: not a number of spaces", quoteArg(vals[0]))
		}
		o.indent = n
	case "sort-keys", "S":
		o.sortKeys = true
	case "seq":
		o.seq = true
	case "exit-status", "e":
		o.exitStatus = true
	case "null-input", "n":
		o.nullInput = true
	case "slurp", "s":
		o.slurp = true
	case "from-file", "f":
		o.fromFile = true
	case "raw-input", "R":
		o.rawInput = true
	case "color-output", "C":
		o.colorFlag = "always"
	case "monochrome-output", "M":
		o.colorFlag = "never"
	case "ascii-output", "a":
		o.ascii = true
	case "library-path", "L":
		o.libPaths = append(o.libPaths, vals[0])
	case "stream":
		o.stream = true
	case "stream-errors":
		o.stream, o.streamErrors = true, true
	case "arg":
		return o.addVar(vals[0], vals[1])
	case "argjson":
		v, err := parseJSONArg(vals[1])
		if err != nil {
			return usageErr("--argjson %s: %s is not JSON: %v", vals[0], quoteArg(vals[1]), err)
		}
		return o.addVar(vals[0], v)
	case "slurpfile":
		data, err := os.ReadFile(vals[1])
		if err != nil {
			return usageErr("--slurpfile %s: %v", vals[0], err)
		}
		v, err := parseJSONValues(data)
		if err != nil {
			return usageErr("--slurpfile %s: %s: %v", vals[0], vals[1], err)
		}
		return o.addVar(vals[0], v)
	case "rawfile":
		data, err := os.ReadFile(vals[1])
		if err != nil {
			return usageErr("--rawfile %s: %v", vals[0], err)
		}
		return o.addVar(vals[0], string(data))
	case "args":
		*mode = "args"
	case "jsonargs":
		*mode = "jsonargs"
	case "env":
		o.env = true
	case "strict":
		o.strict = true
	case "timeout":
		d, err := time.ParseDuration(vals[0])
		if err != nil || d <= 0 {
			return usageErr("--timeout %s: not a duration such as 500ms or 2s", quoteArg(vals[0]))
		}
		o.timeout = d
	case "pretty", "p":
		o.pretty = true
	case "timestamps":
		o.timestamps = true
	case "color":
		o.color = vals[0]
	case "any-version":
		o.anyVersion = true
	case "unbuffered":
	}
	return nil
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
