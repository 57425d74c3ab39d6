// Package jq is fr's one wrapper of gojq: a program is parsed and compiled here, and an error
// in it is shown in one format, the program's line with a caret under the bad token (as
// gojq's command line shows it), whichever command it was given to (fr-filter, fr-ls --jq).
package jq

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/itchyny/gojq"
)

// Parse parses the program query (read from the file fname, "" for an argument); a syntax
// error is an *Error.
func Parse(query, fname string) (*gojq.Query, error) {
	q, err := gojq.Parse(query)
	if err != nil {
		return nil, &Error{fname: fname, query: query, err: err}
	}
	return q, nil
}

// Compile compiles q, parsed from query, with opts. An undefined function or variable is an
// *Error with a caret under its first use; other errors are "compile error: ...".
func Compile(q *gojq.Query, query, fname string, opts ...gojq.CompilerOption) (*gojq.Code, error) {
	code, err := gojq.Compile(q, opts...)
	if err != nil {
		return nil, compileError(query, fname, err)
	}
	return code, nil
}

// ParseAndCompile is Parse then Compile.
func ParseAndCompile(query, fname string, opts ...gojq.CompilerOption) (*gojq.Query, *gojq.Code, error) {
	q, err := Parse(query, fname)
	if err != nil {
		return nil, nil, err
	}
	code, err := Compile(q, query, fname, opts...)
	return q, code, err
}

// Error is a jq program that does not parse or compile, shown with the program and a caret
// under the bad token, as gojq's command line shows it. fname names the file the program came
// from ("" for an argument).
type Error struct {
	fname, query string
	err          error
	// compile is set for a query that parses but does not compile; offset is then the 1-based
	// byte offset of the undefined name in query.
	compile bool
	offset  int
}

func (e *Error) Error() string {
	offset, kind := e.offset, "compile error"
	if !e.compile {
		kind = "invalid query"
		var pe *gojq.ParseError
		if errors.As(e.err, &pe) {
			offset = pe.Offset - len(pe.Token) + 1
		}
	}
	line, lineNo, col := lineAt(e.query, offset)
	if e.fname != "" || strings.ContainsAny(e.query, "\r\n") {
		name := e.fname
		if name == "" {
			name = "<arg>"
		}
		num := fmt.Sprint(lineNo)
		return fmt.Sprintf("%s: %s:%d\n    %s | %s\n    %*c  %s",
			kind, name, lineNo, num, line, col+len(num)+4, '^', e.err)
	}
	return fmt.Sprintf("%s: %s\n    %s\n    %*c  %s", kind, e.query, line, col+1, '^', e.err)
}

// compileError reports a filter that parses but does not compile. An undefined function or
// variable is shown as a syntax error is, with a caret under the first place the query uses
// it; other errors (and a name not found in the text) are reported without one.
func compileError(query, fname string, err error) error {
	msg := err.Error()
	at := -1
	if name, ok := strings.CutPrefix(msg, "function not defined: "); ok {
		if i := strings.LastIndexByte(name, '/'); i > 0 {
			at = findFunc(query, name[:i], name[i+1:] != "0")
		}
	} else if name, ok := strings.CutPrefix(msg, "variable not defined: "); ok && strings.HasPrefix(name, "$") {
		at = findToken(query, name, 0)
	}
	if at < 0 {
		return fmt.Errorf("compile error: %w", err)
	}
	return &Error{fname: fname, query: query, err: err, compile: true, offset: at + 1}
}

func isIdentByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// findToken returns the index of the first whole-token occurrence of name in query at or after
// from: not inside a longer name, not a field (.name) or a variable ($name) when name is a
// function's, or -1.
func findToken(query, name string, from int) int {
	for from <= len(query) {
		i := strings.Index(query[from:], name)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(name)
		before := byte(' ')
		if i > 0 {
			before = query[i-1]
		}
		whole := !isIdentByte(before) && (end == len(query) || !isIdentByte(query[end]))
		if name[0] != '$' && (before == '.' || before == '$' || before == '@') {
			whole = false
		}
		if whole {
			return i
		}
		from = i + 1
	}
	return -1
}

// findFunc returns the index of the first call of the function name in query: a whole token,
// followed by "(" when it takes arguments, and not the name of a definition; or -1.
func findFunc(query, name string, args bool) int {
	for from := 0; ; {
		i := findToken(query, name, from)
		if i < 0 {
			return -1
		}
		from = i + 1
		rest := strings.TrimLeft(query[i+len(name):], " \t\r\n")
		if args != strings.HasPrefix(rest, "(") {
			continue
		}
		if strings.HasSuffix(strings.TrimRight(query[:i], " \t\r\n"), "def") {
			continue
		}
		return i
	}
}

// lineAt finds the line holding the 1-based byte offset, its number and the caret's column.
func lineAt(s string, offset int) (line string, num, col int) {
	start := 0
	num = 1
	for {
		i := strings.IndexByte(s[start:], '\n')
		if i < 0 || offset <= start+i+1 {
			end := len(s)
			if i >= 0 {
				end = start + i
			}
			line = strings.TrimSuffix(s[start:end], "\r")
			break
		}
		start += i + 1
		num++
	}
	off := min(max(offset-1-start, 0), len(line))
	for off > 0 && off < len(line) && !utf8.RuneStart(line[off]) {
		off--
	}
	return line, num, utf8.RuneCountInString(line[:off])
}
