package policy

import (
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Construct is a shell feature outside the plain subset an allow rule matches. The subset is:
// simple commands whose words are literal after quote removal ('..', "..", \x with no $ or `
// inside), joined by &&, ||, ;, |, |& and newlines, each optionally negated with !, with
// assignments of literal values before the command name and the redirections
// allow_redirects permits (< f, n>&m, >/dev/null and the like need no permission). A command
// using any construct below is allowed only by a rule that names every one of them in
// allow_constructs; each simple command it runs must still be allowed on its own. The
// constructs of the second group (never*) cannot be named: no rule allows them.
type Construct uint64

const (
	CHeredoc Construct = 1 << iota
	CHerestring
	CFor
	CSelect
	CWhile
	CIf
	CCase
	CFunction
	CSubshell
	CGroup
	CCommandSubst
	CProcessSubst
	CParameter
	CTest
	CAnsiQuote
	CLocaleQuote
	CGlob
	CBrace
	CCoproc
	CBackground
	CDeclare
	CArray
	// never allowed
	CLineContinuation
	CInvalidUTF8
	CControlChar
	CParamOperator
	CArithmetic
	CFdVariable
	CNetRedirect
)

// neverConstructs cannot be opted in to.
const neverConstructs = CLineContinuation | CInvalidUTF8 | CControlChar | CParamOperator | CArithmetic | CFdVariable | CNetRedirect

// expansionConstructs are what allow_expansions (an older, documented key) opts in to.
const expansionConstructs = CCommandSubst | CProcessSubst | CParameter | CGlob | CBrace | CAnsiQuote | CLocaleQuote

var constructNames = []struct {
	c    Construct
	name string
	what string
}{
	{CHeredoc, "heredoc", "a here-document (<<)"},
	{CHerestring, "herestring", "a here-string (<<<)"},
	{CFor, "for", "a for loop, whose variable is an assignment"},
	{CSelect, "select", "a select loop, whose variable is an assignment"},
	{CWhile, "while", "a while or until loop"},
	{CIf, "if", "an if statement"},
	{CCase, "case", "a case statement"},
	{CFunction, "function", "a function definition"},
	{CSubshell, "subshell", "a subshell ( )"},
	{CGroup, "group", "a group { }"},
	{CCommandSubst, "command-substitution", "a command substitution $( ) or ` `"},
	{CProcessSubst, "process-substitution", "a process substitution <( ) or >( )"},
	{CParameter, "parameter", "a parameter expansion ($x, ${x})"},
	{CTest, "test", "a [[ ]] test"},
	{CAnsiQuote, "ansi-c-quote", "$'...' quoting"},
	{CLocaleQuote, "locale-quote", "$\"...\" quoting"},
	{CGlob, "glob", "a glob (* ? [..] or an extended glob)"},
	{CBrace, "brace", "a brace expansion {a,b} or {1..3}"},
	{CCoproc, "coproc", "a coprocess"},
	{CBackground, "background", "a command run in the background (&)"},
	{CDeclare, "declare", "declare, typeset, local, export, readonly or nameref"},
	{CArray, "array", "an array assignment a=( ) or a+=x"},
	{CLineContinuation, "line-continuation", "a backslash-newline, which bash and the parser may join differently"},
	{CInvalidUTF8, "invalid-utf8", "bytes that are not valid UTF-8"},
	{CControlChar, "control-character", "a control character (NUL, CR, ESC, ...)"},
	{CParamOperator, "parameter-operator", "a parameter expansion with an operator (${x@P}, ${x:=v}, ${!x}, ${x/a/b}, ...)"},
	{CArithmetic, "arithmetic", "arithmetic ((( )), $(( )), let, for (( )))"},
	{CFdVariable, "fd-variable", "a redirection that assigns a file descriptor to a variable ({fd}>f)"},
	{CNetRedirect, "network-redirect", "a redirection to /dev/tcp or /dev/udp"},
}

// ConstructByName returns the construct of a name allow_constructs accepts.
func ConstructByName(name string) (Construct, bool) {
	for _, c := range constructNames {
		if c.name == name {
			return c.c, c.c&neverConstructs == 0
		}
	}
	return 0, false
}

// ConstructNames lists the names allow_constructs accepts, and those no rule can name.
func ConstructNames() (optIn, never []string) {
	for _, c := range constructNames {
		if c.c&neverConstructs != 0 {
			never = append(never, c.name)
		} else {
			optIn = append(optIn, c.name)
		}
	}
	return optIn, never
}

// Names lists the names of the constructs in c.
func (c Construct) Names() []string {
	var out []string
	for _, n := range constructNames {
		if c&n.c != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

func (c Construct) first() (name, what string) {
	for _, n := range constructNames {
		if c&n.c != 0 {
			return n.name, n.what
		}
	}
	return "", ""
}

// cspan is a construct found in a source, over the bytes it covers.
type cspan struct {
	from, to uint
	c        Construct
}

// rawConstructs finds what makes the text itself unsafe to read: backslash-newlines, bytes
// that are not UTF-8, control characters. They apply to the whole command.
func rawConstructs(src string) Construct {
	var c Construct
	if strings.Contains(src, "\\\n") || strings.Contains(src, "\\\r") {
		c |= CLineContinuation
	}
	// U+FFFD is what a decoder puts where the prompt had bytes that are not UTF-8
	if !utf8.ValidString(src) || strings.ContainsRune(src, utf8.RuneError) {
		c |= CInvalidUTF8
	}
	for i := 0; i < len(src); i++ {
		if b := src[i]; (b < 0x20 && b != '\t' && b != '\n') || b == 0x7f {
			c |= CControlChar
			break
		}
	}
	return c
}

// constructsOf lists the constructs in a parsed source, each over the bytes it covers.
func constructsOf(f *syntax.File) []cspan {
	var out []cspan
	quoted := map[*syntax.Lit]bool{} // literal text in "..." or a here-document is not expanded
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DblQuoted:
			markLits(quoted, n.Parts)
		case *syntax.Redirect:
			if n.Hdoc != nil {
				markLits(quoted, n.Hdoc.Parts)
			}
		case *syntax.Lit:
			if quoted[n] {
				return true
			}
		}
		c := commandConstruct(n) | wordConstruct(n)
		if c != 0 {
			out = append(out, cspan{n.Pos().Offset(), n.End().Offset(), c})
		}
		return true
	})
	return out
}

func markLits(m map[*syntax.Lit]bool, parts []syntax.WordPart) {
	for _, p := range parts {
		if l, ok := p.(*syntax.Lit); ok {
			m[l] = true
		}
	}
}

// commandConstruct is the construct a statement, a compound command or a redirection is.
func commandConstruct(n syntax.Node) Construct {
	switch n := n.(type) {
	case *syntax.Stmt:
		var c Construct
		if n.Background || n.Disown {
			c |= CBackground
		}
		if n.Coprocess {
			c |= CCoproc
		}
		return c
	case *syntax.Redirect:
		return redirectConstruct(n)
	case *syntax.ForClause:
		if n.Select {
			return CSelect
		}
		if _, ok := n.Loop.(*syntax.CStyleLoop); ok {
			return CArithmetic
		}
		return CFor
	case *syntax.WhileClause:
		return CWhile
	case *syntax.IfClause:
		return CIf
	case *syntax.CaseClause:
		return CCase
	case *syntax.FuncDecl, *syntax.TestDecl:
		return CFunction
	case *syntax.Subshell:
		return CSubshell
	case *syntax.Block:
		return CGroup
	case *syntax.ArithmCmd, *syntax.LetClause:
		return CArithmetic
	case *syntax.TestClause:
		return CTest
	case *syntax.CoprocClause:
		return CCoproc
	case *syntax.DeclClause:
		return CDeclare
	}
	return 0
}

func redirectConstruct(n *syntax.Redirect) Construct {
	var c Construct
	switch n.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		c |= CHeredoc
	case syntax.WordHdoc:
		c |= CHerestring
	}
	if n.N != nil && strings.HasPrefix(n.N.Value, "{") {
		c |= CFdVariable
	}
	if n.Word != nil {
		if t, dyn, _ := wordLit(n.Word); !dyn && isNetPath(t) {
			c |= CNetRedirect
		}
	}
	return c
}

// wordConstruct is the construct a part of a word (or an assignment) is.
func wordConstruct(n syntax.Node) Construct {
	switch n := n.(type) {
	case *syntax.CmdSubst:
		return CCommandSubst
	case *syntax.ProcSubst:
		return CProcessSubst
	case *syntax.ParamExp:
		if plainParam(n) {
			return CParameter
		}
		return CParamOperator
	case *syntax.ArithmExp:
		return CArithmetic
	case *syntax.SglQuoted:
		if n.Dollar {
			return CAnsiQuote
		}
	case *syntax.DblQuoted:
		if n.Dollar {
			return CLocaleQuote
		}
	case *syntax.ExtGlob:
		return CGlob
	case *syntax.BraceExp:
		return CBrace
	case *syntax.Lit:
		return litGlob(n.Value)
	case *syntax.Assign:
		if n.Array != nil || n.Append || n.Index != nil {
			return CArray
		}
	}
	return 0
}

// plainParam reports whether a parameter expansion only expands a name ($x, ${x}, $1, $@).
func plainParam(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Flags == nil && !p.Excl && !p.Length && !p.Width && !p.IsSet &&
		p.NestedParam == nil && p.Index == nil && len(p.Modifiers) == 0 && p.Slice == nil &&
		p.Repl == nil && p.Names == 0 && p.Exp == nil
}

// litGlob reports the glob or brace characters of an unquoted literal that bash would expand.
func litGlob(v string) Construct {
	if !strings.ContainsAny(v, "*?[{") {
		return 0
	}
	var c Construct
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '*', '?':
			c |= CGlob
		case '[':
			if strings.IndexByte(v[i+1:], ']') >= 0 {
				c |= CGlob
			}
		case '{':
			if j := strings.IndexByte(v[i+1:], '}'); j >= 0 {
				in := v[i+1 : i+1+j]
				if strings.Contains(in, ",") || strings.Contains(in, "..") {
					c |= CBrace
				}
			}
		}
	}
	return c
}

func isNetPath(t string) bool {
	t = "/" + strings.TrimLeft(t, "/")
	return strings.HasPrefix(t, "/dev/tcp/") || strings.HasPrefix(t, "/dev/udp/")
}

// constructsAt returns the constructs whose span overlaps [from, to).
func constructsAt(cs []cspan, from, to uint) Construct {
	var c Construct
	for _, s := range cs {
		if s.from < to && from < s.to || s.from == from {
			c |= s.c
		}
	}
	return c
}
