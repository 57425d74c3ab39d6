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
		gojq.WithModuleLoader(gojq.NewModuleLoader(paths)),
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
	r.prefilter = typePrefilter(q)
	r.identity = isIdentity(q)
	if hasInitModule(paths) {
		r.prefilter = nil // ~/.jq may define its own select
	}
	return code, nil
}

// defaultLibPaths are where import and include look without -L, as in jq. A file ~/.jq is
// read before the filter.
var defaultLibPaths = []string{"~/.jq", "$ORIGIN/../lib/jq", "$ORIGIN/../lib"}

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

// typePrefilter returns the event types a filter of the shape
//
//	select(.type == "A" or .type == "B" ... [and MORE]) [| REST]
//
// lets through, or nil when the filter has another shape. On an object whose type is none of
// them such a filter outputs nothing and cannot fail: the select's condition is false before
// anything else is evaluated (and/or short-circuit, .type of an object never fails). So those
// lines can be dropped without decoding. Anything else (definitions, suffixes, bindings, a
// non-object line) runs the filter.
func typePrefilter(q *gojq.Query) []string {
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
	return typeTest(cond)
}

func plainQuery(q *gojq.Query) bool {
	return q != nil && q.Meta == nil && len(q.Imports) == 0 && len(q.FuncDefs) == 0 && len(q.Patterns) == 0
}

// typeTest returns the types for which q (a disjunction of .type == "X") can be true.
func typeTest(q *gojq.Query) []string {
	if !plainQuery(q) {
		return nil
	}
	switch q.Op {
	case gojq.OpOr:
		l, r := typeTest(q.Left), typeTest(q.Right)
		if l == nil || r == nil {
			return nil
		}
		return append(l, r...)
	case gojq.OpEq:
		if isTypeIndex(q.Left) {
			if s, ok := stringLiteral(q.Right); ok {
				return []string{s}
			}
		}
		if isTypeIndex(q.Right) {
			if s, ok := stringLiteral(q.Left); ok {
				return []string{s}
			}
		}
		return nil
	case 0:
		if t := q.Term; t != nil && t.Type == gojq.TermTypeQuery && len(t.SuffixList) == 0 {
			return typeTest(t.Query)
		}
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
	ix := t.Index
	if ix.Start != nil || ix.End != nil || ix.IsSlice {
		return false
	}
	if ix.Name == "type" {
		return true
	}
	return ix.Name == "" && ix.Str != nil && len(ix.Str.Queries) == 0 && ix.Str.Str == "type"
}

func stringLiteral(q *gojq.Query) (string, bool) {
	t := termOf(q)
	if t == nil || t.Type != gojq.TermTypeString || t.Str == nil || len(t.Str.Queries) > 0 {
		return "", false
	}
	return t.Str.Str, true
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
