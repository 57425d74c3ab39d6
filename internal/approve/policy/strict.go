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
	add := func(n syntax.Node, c Construct) {
		out = append(out, cspan{n.Pos().Offset(), n.End().Offset(), c})
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background || n.Disown {
				add(n, CBackground)
			}
			if n.Coprocess {
				add(n, CCoproc)
			}
		case *syntax.Redirect:
			switch n.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				add(n, CHeredoc)
			case syntax.WordHdoc:
				add(n, CHerestring)
			}
			if n.N != nil && strings.HasPrefix(n.N.Value, "{") {
				add(n, CFdVariable)
			}
			if n.Word != nil {
				if t, dyn, _ := wordLit(n.Word); !dyn && isNetPath(t) {
					add(n, CNetRedirect)
				}
			}
		case *syntax.ForClause:
			if n.Select {
				add(n, CSelect)
			} else if _, ok := n.Loop.(*syntax.CStyleLoop); ok {
				add(n, CArithmetic)
			} else {
				add(n, CFor)
			}
		case *syntax.WhileClause:
			add(n, CWhile)
		case *syntax.IfClause:
			add(n, CIf)
		case *syntax.CaseClause:
			add(n, CCase)
		case *syntax.FuncDecl:
			add(n, CFunction)
		case *syntax.Subshell:
			add(n, CSubshell)
		case *syntax.Block:
			add(n, CGroup)
		case *syntax.CmdSubst:
			add(n, CCommandSubst)
		case *syntax.ProcSubst:
			add(n, CProcessSubst)
		case *syntax.ParamExp:
			if plainParam(n) {
				add(n, CParameter)
			} else {
				add(n, CParamOperator)
			}
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
			add(n, CArithmetic)
		case *syntax.TestClause:
			add(n, CTest)
		case *syntax.SglQuoted:
			if n.Dollar {
				add(n, CAnsiQuote)
			}
		case *syntax.DblQuoted:
			if n.Dollar {
				add(n, CLocaleQuote)
			}
		case *syntax.ExtGlob:
			add(n, CGlob)
		case *syntax.BraceExp:
			add(n, CBrace)
		case *syntax.Lit:
			if g := litGlob(n.Value); g != 0 {
				add(n, g)
			}
		case *syntax.CoprocClause:
			add(n, CCoproc)
		case *syntax.DeclClause:
			add(n, CDeclare)
		case *syntax.TestDecl:
			add(n, CFunction)
		case *syntax.Assign:
			if n.Array != nil || n.Append || n.Index != nil {
				add(n, CArray)
			}
		}
		return true
	})
	return out
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
