package filter

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/itchyny/gojq"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/jq"
)

// compile parses and compiles the filter with fr-filter's functions and variables.
func compile(o *options, query, fname string, r *runner) (*gojq.Code, error) {
	q, err := jq.Parse(query, fname)
	if err != nil {
		return nil, fileHint(cmdutil.Errorf(exitCompile, "%s", err), o, fname)
	}
	environ := func() []string { return nil }
	if o.env {
		environ = r.environ
	}
	names := append(append([]string{}, o.varNames...), "$ARGS")
	paths := o.libPaths
	if len(paths) == 0 {
		paths = defaultLibPaths
	}
	code, err := jq.Compile(q, query, fname,
		gojq.WithModuleLoader(&lazyLoader{paths: paths}),
		gojq.WithEnvironLoader(environ),
		gojq.WithVariables(names),
		gojq.WithFunction("debug", 0, 0, r.funcDebug),
		gojq.WithFunction("stderr", 0, 0, r.funcStderr),
		gojq.WithFunction("input_filename", 0, 0, r.funcInputFilename),
		gojq.WithFunction("input_line_number", 0, 0, r.funcInputLineNumber),
		gojq.WithInputIter(r),
	)
	if err != nil {
		return nil, fileHint(cmdutil.Errorf(exitCompile, "%s", err), o, fname)
	}
	r.prefilter = typePrefilter(q, o.lookupVar)
	r.identity = isIdentity(q)
	if hasInitModule(paths) {
		r.prefilter = nil // ~/.jq may define its own select
	}
	return code, nil
}

// defaultLibPaths are where import and include look without -L, as in jq. A file ~/.jq is
// read before the filter.
var defaultLibPaths = []string{"~/.jq", "$ORIGIN/../lib/jq", "$ORIGIN/../lib"}

// lazyLoader is gojq's module loader, made on first use: making it resolves every search path
// (the executable's own, through its symbolic links), which a filter without import, include
// or ~/.jq does not need.
type lazyLoader struct {
	paths  []string
	loader gojq.ModuleLoader
}

func (l *lazyLoader) get() gojq.ModuleLoader {
	if l.loader == nil {
		l.loader = gojq.NewModuleLoader(l.paths)
	}
	return l.loader
}

// LoadInitModules reads ~/.jq (or a .jq that -L names) when there is one.
func (l *lazyLoader) LoadInitModules() ([]*gojq.Query, error) {
	if !mayHaveInitModule(l.paths) {
		return nil, nil
	}
	return l.get().(interface {
		LoadInitModules() ([]*gojq.Query, error)
	}).LoadInitModules()
}

func (l *lazyLoader) LoadModuleWithMeta(name string, meta map[string]any) (*gojq.Query, error) {
	return l.get().(interface {
		LoadModuleWithMeta(string, map[string]any) (*gojq.Query, error)
	}).LoadModuleWithMeta(name, meta)
}

func (l *lazyLoader) LoadJSONWithMeta(name string, meta map[string]any) (any, error) {
	return l.get().(interface {
		LoadJSONWithMeta(string, map[string]any) (any, error)
	}).LoadJSONWithMeta(name, meta)
}

// mayHaveInitModule reports whether a search path names a .jq that exists, or that cannot be
// looked at (gojq's loader then reports why).
func mayHaveInitModule(paths []string) bool {
	for _, p := range paths {
		if filepath.Base(p) != ".jq" {
			continue
		}
		if strings.HasPrefix(p, "$ORIGIN") {
			return true
		}
		if strings.HasPrefix(p, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				return true
			}
			p = filepath.Join(home, p[2:])
		}
		if _, err := os.Stat(p); err == nil || !os.IsNotExist(err) {
			return true
		}
	}
	return false
}

func hasInitModule(paths []string) bool {
	for _, p := range paths {
		if p == "~/.jq" || filepath.Base(p) == ".jq" {
			if strings.HasPrefix(p, "~/") {
				home, err := os.UserHomeDir()
				if err != nil {
					continue
				}
				p = filepath.Join(home, p[2:])
			}
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return true
			}
		}
	}
	return false
}

// isIdentity reports whether the filter is '.' (so every line is passed on as it is).
func isIdentity(q *gojq.Query) bool {
	return q.Meta == nil && len(q.Imports) == 0 && len(q.FuncDefs) == 0 && q.Op == 0 &&
		q.Left == nil && q.Right == nil && len(q.Patterns) == 0 && q.Term != nil &&
		q.Term.Type == gojq.TermTypeIdentity && len(q.Term.SuffixList) == 0
}

// lookupVar returns the value of a variable the command line binds ($name from --arg,
// --argjson, --slurpfile, --rawfile, and $ARGS), as the compiled filter sees it.
func (o *options) lookupVar(name string) (any, bool) {
	if name == "$ARGS" { // given to the compiler last, so it wins over an --arg ARGS
		return map[string]any{"named": o.named, "positional": o.positional}, true
	}
	for i := len(o.varNames) - 1; i >= 0; i-- {
		if o.varNames[i] == name {
			return o.varValues[i], true
		}
	}
	return nil, false
}

// typePrefilter returns the event types a filter of the shape
//
//	select(COND [and MORE]) [| REST]
//
// lets through, or nil when the filter has another shape. COND is a disjunction (or) of
// .type == S, S == .type, .type | IN(S, ...) and IN(.type; S, ...), where each S is a string
// literal or a variable the command line binds to a string ($t from --arg t X, $ARGS.named.t,
// $obj.key from --argjson obj '{"key":"X"}'). On an object whose type is none of them such a
// filter outputs nothing and cannot fail: the select's condition is false before anything
// else is evaluated (and/or short-circuit, .type of an object never fails). So those lines can
// be dropped without decoding. Anything else (definitions, suffixes, bindings, a variable
// that is not a string, a non-object line) runs the filter.
//
// vars looks up a variable bound outside the filter; nil knows none.
func typePrefilter(q *gojq.Query, vars func(string) (any, bool)) []string {
	for {
		if q == nil || q.Meta != nil || len(q.Imports) > 0 || len(q.FuncDefs) > 0 || len(q.Patterns) > 0 {
			return nil
		}
		if q.Op != gojq.OpPipe {
			break
		}
		q = q.Left
	}
	t := q.Term
	if q.Op != 0 || t == nil || t.Type != gojq.TermTypeFunc || len(t.SuffixList) > 0 ||
		t.Func.Name != "select" || len(t.Func.Args) != 1 {
		return nil
	}
	cond := t.Func.Args[0]
	for plainQuery(cond) && cond.Op == gojq.OpAnd {
		cond = cond.Left
	}
	if vars == nil {
		vars = func(string) (any, bool) { return nil, false }
	}
	return typeTest(cond, vars)
}

func plainQuery(q *gojq.Query) bool {
	return q != nil && q.Meta == nil && len(q.Imports) == 0 && len(q.FuncDefs) == 0 && len(q.Patterns) == 0
}

// typeTest returns the types for which q (a disjunction of type tests) can be true.
func typeTest(q *gojq.Query, vars func(string) (any, bool)) []string {
	if !plainQuery(q) {
		return nil
	}
	switch q.Op {
	case gojq.OpOr:
		l, r := typeTest(q.Left, vars), typeTest(q.Right, vars)
		if l == nil || r == nil {
			return nil
		}
		return append(l, r...)
	case gojq.OpEq:
		if isTypeIndex(q.Left) {
			if s, ok := stringValue(q.Right, vars); ok {
				return []string{s}
			}
		}
		if isTypeIndex(q.Right) {
			if s, ok := stringValue(q.Left, vars); ok {
				return []string{s}
			}
		}
		return nil
	case gojq.OpPipe: // .type | IN(S, ...)
		if isTypeIndex(q.Left) {
			if f := funcOf(q.Right, "IN", 1); f != nil {
				return stringValues(f.Args[0], vars)
			}
		}
		return nil
	case 0:
		if f := funcOf(q, "IN", 2); f != nil && isTypeIndex(f.Args[0]) { // IN(.type; S, ...)
			return stringValues(f.Args[1], vars)
		}
		if t := q.Term; t != nil && t.Type == gojq.TermTypeQuery && len(t.SuffixList) == 0 {
			return typeTest(t.Query, vars)
		}
	}
	return nil
}

// funcOf returns the call in q when q is a bare call of name with n arguments.
func funcOf(q *gojq.Query, name string, n int) *gojq.Func {
	t := termOf(q)
	if t == nil || t.Type != gojq.TermTypeFunc || t.Func.Name != name || len(t.Func.Args) != n {
		return nil
	}
	return t.Func
}

// stringValues returns the strings of S, S, ... (a comma list of string values), or nil.
func stringValues(q *gojq.Query, vars func(string) (any, bool)) []string {
	if plainQuery(q) && q.Op == gojq.OpComma {
		l, r := stringValues(q.Left, vars), stringValues(q.Right, vars)
		if l == nil || r == nil {
			return nil
		}
		return append(l, r...)
	}
	if s, ok := stringValue(q, vars); ok {
		return []string{s}
	}
	return nil
}

func termOf(q *gojq.Query) *gojq.Term {
	if !plainQuery(q) || q.Op != 0 || q.Term == nil || len(q.Term.SuffixList) > 0 {
		return nil
	}
	return q.Term
}

func isTypeIndex(q *gojq.Query) bool {
	t := termOf(q)
	if t == nil || t.Type != gojq.TermTypeIndex || t.Index == nil {
		return false
	}
	name, ok := indexName(t.Index)
	return ok && name == "type"
}

// indexName returns the key of .name or ."name" (no interpolation, no slice).
func indexName(ix *gojq.Index) (string, bool) {
	if ix.Start != nil || ix.End != nil || ix.IsSlice {
		return "", false
	}
	if ix.Name != "" {
		return ix.Name, true
	}
	if ix.Str != nil && len(ix.Str.Queries) == 0 {
		return ix.Str.Str, true
	}
	return "", false
}

// stringValue returns the string q always evaluates to: a string literal, or a variable bound
// outside the filter (optionally indexed by keys: $ARGS.named.t) whose value is a string.
func stringValue(q *gojq.Query, vars func(string) (any, bool)) (string, bool) {
	if !plainQuery(q) || q.Op != 0 || q.Term == nil {
		return "", false
	}
	t := q.Term
	switch {
	case t.Type == gojq.TermTypeString && t.Str != nil && len(t.Str.Queries) == 0 && len(t.SuffixList) == 0:
		return t.Str.Str, true
	case t.Type == gojq.TermTypeFunc && len(t.Func.Args) == 0 && strings.HasPrefix(t.Func.Name, "$"):
		v, ok := vars(t.Func.Name)
		if !ok {
			return "", false
		}
		for _, sf := range t.SuffixList {
			if sf.Iter || sf.Optional || sf.Index == nil {
				return "", false
			}
			key, ok := indexName(sf.Index)
			m, isMap := v.(map[string]any)
			if !ok || !isMap {
				return "", false // indexing anything but an object by a key fails or is null
			}
			v = m[key]
		}
		s, ok := v.(string)
		return s, ok
	}
	return "", false
}

// fileHint adds a hint when the filter that failed is the name of a file: as in jq, the first
// argument is always the filter, and "fr-filter --type token session.jsonl" is an easy slip.
func fileHint(err *cmdutil.Error, o *options, fname string) error {
	if fname == "" && o.haveQuery {
		if st, e := os.Stat(o.query); e == nil && !st.IsDir() {
			return cmdutil.WithHint(err, fmt.Sprintf("the first argument is the filter; to read %s, put a filter before it (e.g. '.')", o.query))
		}
	}
	return err
}
