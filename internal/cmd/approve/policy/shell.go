package policy

import (
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Flag marks what makes a simple command unsafe to allow on its argv alone. An allow rule
// matches a part carrying a flag only when the rule permits that flag explicitly; FlagOpaque
// is never permitted.
type Flag uint8

const (
	// FlagRedirect: the command writes to a file through a redirection (> f, >> f, &> f).
	FlagRedirect Flag = 1 << iota
	// FlagExpansion: a word is only known at run time ($VAR, $(cmd), globs, xargs input).
	FlagExpansion
	// FlagUnparsable: the command does not parse; its words are a best guess.
	FlagUnparsable
	// FlagEnv: the command assigns a variable that changes what runs (PATH, LD_PRELOAD, ...).
	FlagEnv
	// FlagOpaque: the command's effect is not shown by its words (arithmetic on run-time
	// values, a command string computed at run time, a wrapper option the analysis does not
	// know, another working directory, ...). No rule allows it.
	FlagOpaque
)

// Part is one simple command found in a shell command line, with its argv as far as it is
// known before running it.
type Part struct {
	Text  string   // the command as written (the statement's source text)
	Words []string // argv; a computed word is ""
	Dyn   []bool   // Dyn[i]: Words[i] is computed at run time (nil when none is)
	// Name is argv[0] as allow rules see it: the word itself, or its base name when it is an
	// absolute path in a system directory (/bin/rm is rm; ./rm is not).
	Name string
	// Base is the base name of argv[0], which deny and ask rules also match (./rm is rm).
	Base  string
	Flags Flag
	Why   string // what set the first flag, for people
	// Constructs are the shell features outside the plain subset that the command is in or
	// uses; an allow rule must name each of them (allow_constructs).
	Constructs Construct
	// DenyOnly parts are seen by deny and ask rules only: the inner command of sudo, and the
	// wrappers (env, xargs, bash -c, ...) whose inner commands are parts of their own.
	DenyOnly bool
	// Inputs and Outputs are the files the command reads and writes through redirections
	// (and time -o, xargs -a), for path rules.
	Inputs, Outputs []pathWord
	// Chdir: the command may run in another directory than the root (after cd, env -C, find
	// -execdir), so its relative paths are not known.
	Chdir bool

	opt       optRead // the words as the program reads its options (Part.options)
	riskyDone bool
	// what allow rules without paths: or protect: find of its paths (pathsInside), once
	pathsDone, pathsOK bool
	pathsWhy           string
	pathsNamed         uint64
}

// pathWord is a word that names a file; dyn when it is computed at run time.
type pathWord struct {
	s   string
	dyn bool
}

func (p *Part) dyn(i int) bool { return p.Dyn != nil && p.Dyn[i] }

func (p *Part) addFlag(f Flag, why string) {
	if p.Flags == 0 {
		p.Why = why
	}
	p.Flags |= f
}

// StopReason says, for people, what keeps an allow rule without permissions from matching
// the part ("" when nothing does): the first construct or flag.
func (p *Part) StopReason() string {
	if p.Constructs != 0 {
		name, what := p.Constructs.first()
		return "uses " + what + " [" + name + "]"
	}
	return p.Why
}

var systemDirs = map[string]bool{
	"/bin": true, "/usr/bin": true, "/usr/local/bin": true, "/sbin": true, "/usr/sbin": true,
	"/usr/local/sbin": true, "/opt/homebrew/bin": true, "/run/current-system/sw/bin": true,
}

var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
	"mksh": true, "ash": true, "yash": true, "posh": true}

// harmlessEnv lists the variables a command may be given without FlagEnv: they choose a
// target, a locale or how output looks, not which program runs, what it loads, where it reads
// its configuration or where it downloads from. Any other assignment (PATH, LD_PRELOAD, HOME,
// GOFLAGS, GOPROXY, GIT_DIR, CGO_CFLAGS, ...) can make an allowed argv run code of someone
// else's choosing, and needs a rule with allow_env. REPLY, MAPFILE, OPTARG and OPTIND are the
// shell's own, set by read, mapfile and getopts when no name is given.
//
// GOOS and GOARCH are not among them: go test and go run (and go generate, go tool) run a
// binary built for another target through go_$GOOS_$GOARCH_exec, found in PATH, so they are
// harmless only before a go command that runs nothing it builds (goTargetHarmless).
var harmlessEnv = map[string]bool{
	"GOARM": true, "GOARM64": true, "GOAMD64": true, "GO386": true,
	"GOMIPS": true, "GOMIPS64": true, "GOPPC64": true, "GORISCV64": true, "GOWASM": true,
	"CGO_ENABLED": true, "GOMAXPROCS": true, "GOGC": true, "GOMEMLIMIT": true, "GOTRACEBACK": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true, "COLUMNS": true, "LINES": true,
	"NO_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true, "FORCE_COLOR": true, "CI": true,
	"RUST_BACKTRACE": true, "PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true,
	"REPLY": true, "MAPFILE": true, "OPTARG": true, "OPTIND": true,
}

// goSafeSub are the go subcommands that run nothing they build, so GOOS and GOARCH only choose
// what they build or list.
var goSafeSub = map[string]bool{"build": true, "vet": true, "list": true, "env": true, "version": true,
	"mod": true, "doc": true, "fmt": true, "clean": true, "work": true, "install": true}

// goTargetHarmless reports whether assigning name for the command argv (literal words) is
// harmless: GOOS or GOARCH before go build, go vet, go list and the like.
func goTargetHarmless(name string, argv []string) bool {
	if name != "GOOS" && name != "GOARCH" || len(argv) < 2 {
		return false
	}
	if argv[0] != "go" && !(strings.HasSuffix(argv[0], "/go") && systemDirs[path.Dir(path.Clean(argv[0]))]) {
		return false
	}
	return goSafeSub[argv[1]]
}

// dangerousEnv reports whether assigning name may change which program runs, what it loads or
// where it reads its settings from: any name not known to be harmless.
func dangerousEnv(name string) bool {
	if harmlessEnv[name] {
		return false
	}
	if strings.HasPrefix(name, "LC_") && name != "LC_" && isName(name) {
		return false
	}
	return true
}

var parserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

const (
	maxDepth = 8
	maxParts = 4000
)

// Analyze splits a shell command line into the simple commands it would run: every command of
// pipelines, lists, loops, subshells, command and process substitutions, function bodies, and
// the command strings of `bash -c`, `sh -c`, `eval`, `trap`, `watch`, the commands run by the
// wrappers of wrapperTable, find -exec, and what a shell or `.` reads from a here-document or
// an echo piped to it. A command that does not parse is one part flagged FlagUnparsable.
// Each part carries the constructs outside the plain subset it is in or uses.
func Analyze(cmd string) []Part {
	a := &analyzer{}
	a.source(cmd, &cctx{})
	raw := rawConstructs(cmd)
	if raw&CLineContinuation != 0 {
		// bash does not always join a backslash-newline where the parser does (in a comment,
		// in a here-document's delimiter): deny and ask rules see the text both ways
		for _, alt := range []string{strings.ReplaceAll(cmd, "\\\n", "\n"), strings.ReplaceAll(cmd, "\\\n", "")} {
			a.source(alt, &cctx{denyOnly: true, depth: 1})
		}
	}
	a.functionParts()
	if raw != 0 {
		for i := range a.parts {
			a.parts[i].Constructs |= raw
		}
		if len(a.parts) == 0 {
			a.parts = append(a.parts, Part{Text: cmd, Constructs: raw})
		}
	}
	return a.parts
}

// functionParts adds, for deny and ask rules, a part `function NAME` for each function
// defined, and `function NAME --calls-itself` for one whose body calls it again, directly or
// through other functions of the line (a fork bomb :(){ :|:& };: is one).
func (a *analyzer) functionParts() {
	for _, f := range a.funcs {
		p := Part{Text: "function " + f.name, Words: []string{"function", f.name}, Name: "function", Base: "function", DenyOnly: true}
		if a.reaches(f.calls, f.name, map[string]bool{}) {
			p.Words = append(p.Words, "--calls-itself")
		}
		a.parts = append(a.parts, p)
	}
}

// reaches reports whether calling the names of calls may call target.
func (a *analyzer) reaches(calls map[string]bool, target string, seen map[string]bool) bool {
	if calls[target] {
		return true
	}
	for _, f := range a.funcs {
		if calls[f.name] && !seen[f.name] {
			seen[f.name] = true
			if a.reaches(f.calls, target, seen) {
				return true
			}
		}
	}
	return false
}

type analyzer struct {
	parts []Part
	// stdin is the here-document or here-string of the command being analysed: a shell that
	// reads its commands from it runs them, so they are judged too.
	stdin *stdinText
	// moved: a cd, pushd or popd was seen; later commands run in a directory not known.
	moved bool
	// envWhy: a variable that changes what runs was assigned for the commands after it
	// (HOME=x; for HOME in ...; read HOME; export HOME=x).
	envWhy string
	// funcs are the functions defined, in order, with the names their bodies call.
	funcs []funcDef
	// execIns, execOuts and execFds: what an exec with redirections alone opened for the
	// commands after it (exec 3</etc/shadow; cat <&3).
	execIns, execOuts []pathWord
	execFds           uint64
}

type funcDef struct {
	name  string
	calls map[string]bool
}

// cctx is the context a command is found in.
type cctx struct {
	text     string
	fl       Flag
	why      string
	denyOnly bool
	depth    int
	chdir    bool
	inputs   []pathWord
	outputs  []pathWord
}

func (c *cctx) flag(f Flag, why string) {
	if c.fl == 0 {
		c.why = why
	}
	c.fl |= f
}

func (c *cctx) addInput(p pathWord) { c.inputs = append(c.inputs[:len(c.inputs):len(c.inputs)], p) }
func (c *cctx) addOutput(p pathWord) {
	c.outputs = append(c.outputs[:len(c.outputs):len(c.outputs)], p)
}

func (a *analyzer) last() *Part { return &a.parts[len(a.parts)-1] }

type stdinText struct {
	text string
	dyn  bool
}

func hereText(rs []*syntax.Redirect) *stdinText {
	for _, r := range rs {
		var w *syntax.Word
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			w = r.Hdoc
		case syntax.WordHdoc:
			w = r.Word
		case syntax.RdrIn:
			if r.Word != nil {
				if out := substOutput(r.Word); out != nil {
					return out // sh < <(echo ...)
				}
			}
			return &stdinText{dyn: true} // a file's contents
		default:
			continue
		}
		if w == nil {
			return &stdinText{}
		}
		t, dyn, _ := wordLit(w)
		return &stdinText{text: t, dyn: dyn}
	}
	return nil
}

// pipeText is what the left side of a pipe writes, when it is echo or printf of literal words.
func pipeText(st *syntax.Stmt) *stdinText {
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) < 1 {
		return &stdinText{dyn: true}
	}
	name := c.Args[0].Lit()
	if name == "cat" && len(c.Args) == 1 {
		if t := hereText(st.Redirs); t != nil {
			return t
		}
	}
	if name != "echo" && name != "printf" {
		return &stdinText{dyn: true}
	}
	var b strings.Builder
	for i, arg := range c.Args[1:] {
		s, dyn, _ := wordLit(arg)
		if dyn {
			return &stdinText{dyn: true}
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.ReplaceAll(s, `\n`, "\n"))
	}
	return &stdinText{text: b.String()}
}

type span struct {
	from, to uint
	why      string
	paths    []pathWord
	in       bool
	fds      uint64 // the descriptors its redirections open
}

func (a *analyzer) source(src string, c *cctx) {
	if c.depth > maxDepth || len(a.parts) > maxParts {
		p := Part{Text: src, DenyOnly: c.denyOnly}
		p.addFlag(FlagOpaque|c.fl, "command strings nested too deeply")
		a.parts = append(a.parts, p)
		return
	}
	if a.plainSource(src, c) {
		return
	}
	parser := parserPool.Get().(*syntax.Parser)
	f, err := parser.Parse(strings.NewReader(src), "")
	parserPool.Put(parser)
	if err != nil {
		a.unparsable(src, c, err)
		return
	}
	w := &stmtWalk{a: a, src: src, c: c, cons: constructsOf(f), piped: map[*syntax.Stmt]*stdinText{}}
	syntax.Walk(f, w.visit)
}

// stmtWalk is one walk of a parsed source by analyzer.source.
type stmtWalk struct {
	a     *analyzer
	src   string
	c     *cctx
	cons  []cspan
	piped map[*syntax.Stmt]*stdinText
	// redirected are compound statements whose output goes to a file, or input comes from one
	redirected []span
}

func (w *stmtWalk) visit(n syntax.Node) bool {
	a := w.a
	st, ok := n.(*syntax.Stmt)
	if !ok {
		a.node(w.src, n, w.c, w.piped)
		return true
	}
	from, to := st.Pos().Offset(), st.End().Offset()
	sc, ins, outs := w.stmtContext(st, from, to)
	start := len(a.parts)
	w.command(st, &sc, ins, outs, from, to)
	if len(w.cons) > 0 {
		sc := constructsAt(w.cons, from, to)
		for i := start; i < len(a.parts); i++ {
			a.parts[i].Constructs |= sc
		}
	}
	return true
}

// stmtContext is the context of the statement st (from to to in the source): the
// redirections of the compound statements around it and its own, and its text.
func (w *stmtWalk) stmtContext(st *syntax.Stmt, from, to uint) (sc cctx, ins, outs []pathWord) {
	a, src := w.a, w.src
	sc = *w.c
	opened := a.execFds | redirFds(st.Redirs)
	for _, s := range w.redirected {
		if from >= s.from && from < s.to {
			opened |= s.fds
			if s.in {
				for _, p := range s.paths {
					sc.addInput(p)
				}
				continue
			}
			sc.flag(FlagRedirect, s.why)
			for _, p := range s.paths {
				sc.addOutput(p)
			}
		}
	}
	if rf, rwhy := redirFlags(st.Redirs); rf != 0 {
		sc.flag(rf, rwhy)
	}
	ins, outs = redirPaths(st.Redirs, opened)
	if _, isCall := st.Cmd.(*syntax.CallExpr); isCall && strings.IndexByte(src, '<') >= 0 {
		// $(<file) in a word: bash reads the file into the word
		sins, souts := substReads(st, opened)
		ins, outs = append(ins, sins...), append(outs, souts...)
	}
	for _, p := range ins {
		sc.addInput(p)
	}
	for _, p := range outs {
		sc.addOutput(p)
	}
	sc.text = src
	if int(to) <= len(src) && from <= to {
		sc.text = strings.TrimRight(src[from:to], "; &\t\r\n")
	}
	return sc, ins, outs
}

// command adds the parts of the statement st's command, or notes the redirections of a
// compound one for the statements inside it.
func (w *stmtWalk) command(st *syntax.Stmt, sc *cctx, ins, outs []pathWord, from, to uint) {
	a, c := w.a, w.c
	switch cmd := st.Cmd.(type) {
	case *syntax.CallExpr:
		saved := a.stdin
		a.stdin = hereText(st.Redirs)
		if a.stdin == nil {
			a.stdin = w.piped[st]
		}
		a.call(sc, cmd)
		a.stdin = saved
		if len(cmd.Args) == 1 && cmd.Args[0].Lit() == "exec" && len(st.Redirs) > 0 {
			// exec with redirections alone: the descriptors stay open for the commands after it
			a.execIns = append(a.execIns[:len(a.execIns):len(a.execIns)], ins...)
			a.execOuts = append(a.execOuts[:len(a.execOuts):len(a.execOuts)], outs...)
			a.execFds |= redirFds(st.Redirs)
		}
	case *syntax.DeclClause:
		a.decl(sc, cmd)
	case *syntax.TestClause:
		// runs nothing, but is outside the plain subset: a part a rule can name
		p := Part{Text: sc.text, Words: []string{"[["}, Name: "[[", Base: "[[", DenyOnly: c.denyOnly}
		if sc.fl != 0 {
			p.addFlag(sc.fl, sc.why)
		}
		a.finish(&p, sc)
		a.parts = append(a.parts, p)
	case nil:
		if sc.fl != 0 {
			p := Part{Text: sc.text, DenyOnly: c.denyOnly}
			p.addFlag(sc.fl, sc.why)
			a.parts = append(a.parts, p)
		}
		if len(ins) > 0 {
			// < FILE alone, as in $(<FILE): bash's cat, seen by deny and ask rules as one
			p := Part{Text: sc.text, Words: []string{"cat"}, Name: "cat", Base: "cat", DenyOnly: true}
			p.Inputs, p.Outputs, p.Chdir = sc.inputs, sc.outputs, sc.chdir || a.moved
			a.parts = append(a.parts, p)
		}
	default:
		fds := redirFds(st.Redirs)
		if rf, rwhy := redirFlags(st.Redirs); rf != 0 || len(outs) > 0 {
			w.redirected = append(w.redirected, span{from: from, to: to, why: rwhy, paths: outs, fds: fds})
		}
		if len(ins) > 0 || fds != 0 {
			w.redirected = append(w.redirected, span{from: from, to: to, paths: ins, in: true, fds: fds})
		}
	}
}

// node looks at a node other than a statement: loops that assign, arithmetic, pipes that feed
// a shell, quoted text that a later evaluation may run.
func (a *analyzer) node(src string, n syntax.Node, c *cctx, piped map[*syntax.Stmt]*stdinText) {
	switch n := n.(type) {
	case *syntax.BinaryCmd:
		if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
			piped[n.Y] = pipeText(n.X)
		}
	case *syntax.FuncDecl:
		if n.Name == nil {
			// () x: the parser reads an anonymous function, which bash refuses
			a.unanalysable(src, n, c, "defines a function without a name, which bash does not read as the parser does")
			return
		}
		def := funcDef{name: n.Name.Value, calls: map[string]bool{}}
		syntax.Walk(n.Body, func(m syntax.Node) bool {
			if ce, ok := m.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
				if name, dyn, _ := wordLit(ce.Args[0]); !dyn {
					def.calls[name] = true
				}
			}
			return true
		})
		a.funcs = append(a.funcs, def)
	case *syntax.ForClause:
		if wi, ok := n.Loop.(*syntax.WordIter); ok && dangerousEnv(wi.Name.Value) && a.envWhy == "" {
			a.envWhy = "assigns " + wi.Name.Value + " (a loop variable)"
		}
	case *syntax.SglQuoted:
		// ${x@P}, eval and the like may run the text later: deny and ask rules see it
		if strings.Contains(n.Value, "$(") || strings.Contains(n.Value, "`") {
			in := *c
			in.denyOnly, in.depth, in.text = true, c.depth+1, n.Value
			a.source(n.Value, &in)
		}
	}
	if why := evaluatesArithmetic(n); why != "" {
		a.unanalysable(src, n, c, why)
	}
}

// unparsable adds the part of a command that does not parse: deny and ask rules still see its
// words as a best guess; only a rule with allow_unparsable allows it, and only when no word
// could start another command.
func (a *analyzer) unparsable(src string, c *cctx, err error) {
	p := Part{Text: strings.TrimSpace(src), DenyOnly: c.denyOnly, Words: strings.Fields(src)}
	if len(p.Words) > 0 {
		p.Name, p.Base = p.Words[0], path.Base(p.Words[0])
	}
	p.addFlag(FlagUnparsable, "does not parse: "+err.Error())
	if strings.ContainsAny(src, ";&|`$<>\n\r\\") {
		p.addFlag(FlagOpaque, "does not parse, and may hold more than one command")
	}
	p.Flags |= c.fl
	p.Chdir = c.chdir || a.moved
	a.parts = append(a.parts, p)
	// every word that could begin a command is a command for deny and ask rules
	in := *c
	in.denyOnly = true
	in.depth = c.depth + 1
	for _, f := range strings.FieldsFunc(src, func(r rune) bool { return strings.ContainsRune(";&|()`\n{}", r) }) {
		if ws := strings.Fields(strings.TrimPrefix(strings.TrimSpace(f), "$")); len(ws) > 0 && f != src && len(a.parts) < maxParts {
			w := words{}
			for _, s := range ws {
				w.push(strings.Trim(s, `'"`), false, "")
			}
			in.text = strings.TrimSpace(f)
			a.command(&in, w)
		}
	}
}
func evaluatesArithmetic(n syntax.Node) string {
	switch n := n.(type) {
	case *syntax.ArithmCmd, *syntax.LetClause, *syntax.CStyleLoop:
		return "evaluates arithmetic, where a variable's value a[$(cmd)] runs cmd"
	case *syntax.ArithmExp:
		return "uses an arithmetic expansion, where a variable's value a[$(cmd)] runs cmd"
	case *syntax.BinaryTest:
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			return "compares with [[ " + n.Op.String() + " ]], which evaluates its operands as arithmetic"
		}
	case *syntax.UnaryTest:
		if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
			return "tests [[ " + n.Op.String() + " ]], which evaluates an array subscript as arithmetic"
		}
	case *syntax.ParamExp:
		switch {
		case n.Excl && n.Index == nil && n.Names == 0:
			return "uses an indirect expansion, which evaluates the array subscript it may name"
		case n.Index != nil && !plainIndex(n.Index):
			return "uses an array subscript, which is evaluated as arithmetic"
		case n.Slice != nil && !(plainIndex(n.Slice.Offset) && plainIndex(n.Slice.Length)):
			return "uses a substring offset, which is evaluated as arithmetic"
		}
	case *syntax.Assign:
		if n.Index != nil && !plainIndex(n.Index) {
			return "uses an array subscript, which is evaluated as arithmetic"
		}
	}
	return ""
}

// plainIndex reports whether an array subscript or offset is a number, @ or * (or absent).
func plainIndex(x syntax.ArithmExpr) bool {
	if x == nil {
		return true
	}
	w, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	s := w.Lit()
	return s == "@" || s == "*" || isDigits(s)
}

// unanalysable adds a part no allow rule matches, for a construct whose effect no argv shows.
func (a *analyzer) unanalysable(src string, n syntax.Node, c *cctx, why string) {
	text := src
	if from, to := n.Pos().Offset(), n.End().Offset(); int(to) <= len(src) && from <= to {
		text = src[from:to]
	}
	p := Part{Text: text, DenyOnly: c.denyOnly}
	p.addFlag(FlagOpaque|c.fl, why)
	a.parts = append(a.parts, p)
}

// nameBuiltins take variable names as arguments; bash evaluates the subscript of a name
// written a[...] as arithmetic, so test -v 'a[$(rm -rf ~)]' runs rm.
var nameBuiltins = map[string]bool{"test": true, "[": true, "printf": true, "read": true,
	"unset": true, "declare": true, "typeset": true, "local": true, "export": true,
	"readonly": true, "wait": true, "mapfile": true, "readarray": true, "getopts": true}

// subscriptedName reports whether s is written NAME[SUBSCRIPT]... with a subscript that is
// not a plain number, @ or *.
func subscriptedName(s string) bool {
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || i > 0 && s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == 0 || i >= len(s) || s[i] != '[' {
		return false
	}
	end := strings.IndexByte(s[i:], ']')
	if end < 0 {
		end = len(s) - i
	}
	sub := s[i+1 : i+end]
	return !(sub == "@" || sub == "*" || isDigits(sub))
}

func redirFlags(rs []*syntax.Redirect) (Flag, string) {
	for _, r := range rs {
		if r.Word != nil && r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc && r.Op != syntax.WordHdoc {
			if t, dyn, _ := wordLit(r.Word); !dyn && (strings.HasPrefix(t, "/dev/tcp/") || strings.HasPrefix(t, "/dev/udp/")) {
				return FlagRedirect, "opens a network connection through " + t
			}
		}
		switch r.Op {
		case syntax.RdrIn:
			if _, dyn, _ := wordLit(r.Word); dyn {
				// a file named at run time may be /dev/tcp/host/port
				return FlagExpansion, "reads a file named at run time"
			}
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
			syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
			t, dyn, _ := wordLit(r.Word)
			if dyn {
				return FlagRedirect, "redirects output to a file named at run time"
			}
			switch t {
			case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
				continue
			}
			return FlagRedirect, "writes to " + t + " with " + r.Op.String()
		case syntax.DplOut, syntax.DplIn:
			t, dyn, _ := wordLit(r.Word)
			if !dyn && (t == "-" || isDigits(t)) {
				continue
			}
			if r.Op == syntax.DplOut {
				return FlagRedirect, "writes to " + t + " with >&"
			}
		}
	}
	return 0, ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkNames flags a builtin given a variable name whose subscript bash would evaluate.
func (p *Part) checkNames() {
	if !nameBuiltins[p.Base] {
		return
	}
	for i, w := range p.Words {
		if !p.dyn(i) && subscriptedName(w) {
			p.addFlag(FlagOpaque, "names "+w+", whose subscript "+p.Base+" evaluates as arithmetic")
			return
		}
	}
}

func (p *Part) pushWord(w string, dyn bool, why string) {
	if dyn {
		if p.Dyn == nil {
			p.Dyn = make([]bool, len(p.Words), len(p.Words)+4)
		}
		p.addFlag(FlagExpansion, why)
		w = ""
	}
	p.Words = append(p.Words, w)
	if p.Dyn != nil {
		p.Dyn = append(p.Dyn, dyn)
	}
}

// redirFds are the descriptors (0 to 63) a statement's redirections open or copy to.
func redirFds(rs []*syntax.Redirect) uint64 {
	var fds uint64
	for _, r := range rs {
		n := 1
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			n = 0
		}
		if r.N != nil {
			if !isDigits(r.N.Value) || len(r.N.Value) > 2 {
				continue
			}
			n = int(r.N.Value[0] - '0')
			if len(r.N.Value) == 2 {
				n = n*10 + int(r.N.Value[1]-'0')
			}
		}
		if n < 64 {
			fds |= 1 << n
		}
	}
	return fds
}

// substReads lists the files that the substitutions in a statement's words read or write
// with redirections alone ($(<file), $(>file)): bash opens them for the word.
func substReads(st *syntax.Stmt, opened uint64) (ins, outs []pathWord) {
	syntax.Walk(st.Cmd, func(n syntax.Node) bool {
		var stmts []*syntax.Stmt
		switch x := n.(type) {
		case *syntax.CmdSubst:
			stmts = x.Stmts
		case *syntax.ProcSubst:
			stmts = x.Stmts
		default:
			return true
		}
		for _, s := range stmts {
			if s.Cmd == nil {
				i, o := redirPaths(s.Redirs, opened|redirFds(s.Redirs))
				ins, outs = append(ins, i...), append(outs, o...)
			}
		}
		return true
	})
	return ins, outs
}

// redirPaths lists the files a statement's redirections read and write. A copy of a
// descriptor above 2 that none of opened is (<&3, >&3 with no 3< before) reads or writes
// whatever the shell was given as it: /dev/fd/N, outside the root.
func redirPaths(rs []*syntax.Redirect, opened uint64) (ins, outs []pathWord) {
	for _, r := range rs {
		if r.Word == nil {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			continue
		}
		t, dyn, _ := wordLit(r.Word)
		pw := pathWord{s: t, dyn: dyn}
		switch r.Op {
		case syntax.RdrIn:
			ins = append(ins, pw)
		case syntax.RdrInOut:
			ins = append(ins, pw)
			outs = append(outs, pw)
		case syntax.DplIn, syntax.DplOut:
			if dyn || !(t == "-" || isDigits(t)) {
				outs = append(outs, pw)
				continue
			}
			if t == "-" || t == "0" || t == "1" || t == "2" {
				continue
			}
			if n := len(t); n <= 2 && (n == 1 && opened&(1<<(t[0]-'0')) != 0 || n == 2 && opened&(1<<((t[0]-'0')*10+t[1]-'0')) != 0) {
				continue
			}
			fd := pathWord{s: "/dev/fd/" + t}
			if r.Op == syntax.DplIn {
				ins = append(ins, fd)
			} else {
				outs = append(outs, fd)
			}
		default:
			outs = append(outs, pw)
		}
	}
	return ins, outs
}

func (a *analyzer) call(c *cctx, ce *syntax.CallExpr) {
	var argv []string // the command's first words, when literal (for goTargetHarmless)
	for i := 0; i < len(ce.Args) && i < 2; i++ {
		s, dyn, _ := wordLit(ce.Args[i])
		if dyn {
			break
		}
		argv = append(argv, s)
	}
	for _, as := range ce.Assigns {
		if as.Name != nil && dangerousEnv(as.Name.Value) && !goTargetHarmless(as.Name.Value, argv) {
			why := "assigns " + as.Name.Value
			c.flag(FlagEnv, why)
			if len(ce.Args) == 0 && a.envWhy == "" {
				a.envWhy = why // NAME=x alone: the later commands of the line see it
			}
			break
		}
	}
	if len(ce.Args) == 0 {
		if c.fl != 0 {
			p := Part{Text: c.text, DenyOnly: c.denyOnly}
			p.addFlag(c.fl, c.why)
			p.Inputs, p.Outputs, p.Chdir = c.inputs, c.outputs, c.chdir || a.moved
			a.parts = append(a.parts, p)
		}
		return
	}
	w := words{}
	for i, arg := range ce.Args {
		s, dyn, wwhy := wordLit(arg)
		w.push(s, dyn, wwhy)
		if dyn {
			if out := substOutput(arg); out != nil {
				w.setOut(i, out)
			}
		}
	}
	a.command(c, w)
}

func (a *analyzer) decl(c *cctx, d *syntax.DeclClause) {
	p := Part{Text: c.text, Words: []string{d.Variant.Value}, Name: d.Variant.Value, Base: d.Variant.Value, DenyOnly: c.denyOnly}
	if c.fl != 0 {
		p.addFlag(c.fl, c.why)
	}
	for _, as := range d.Args {
		var w string
		dyn := false
		wwhy := ""
		if as.Name != nil {
			w = as.Name.Value
			if dangerousEnv(as.Name.Value) {
				// export NAME=x, and also export -n NAME, declare -n NAME, local NAME
				p.addFlag(FlagEnv, "assigns "+as.Name.Value)
				if a.envWhy == "" {
					a.envWhy = "assigns " + as.Name.Value + " (" + d.Variant.Value + ")"
				}
			}
			if as.Value != nil {
				v, d, y := wordLit(as.Value)
				w += "=" + v
				dyn, wwhy = d, y
			}
		} else if as.Value != nil {
			w, dyn, wwhy = wordLit(as.Value)
			// export "PA"TH=x: the builtin reads NAME=VALUE after quote removal, as bash does
			if name, _, ok := strings.Cut(w, "="); ok && !strings.HasPrefix(w, "-") && (dyn || dangerousEnv(strings.TrimSuffix(name, "+"))) {
				p.addFlag(FlagEnv, "assigns "+name+" ("+d.Variant.Value+")")
				if a.envWhy == "" {
					a.envWhy = "assigns " + name + " (" + d.Variant.Value + ")"
				}
			}
		}
		p.pushWord(w, dyn, wwhy)
	}
	p.checkNames()
	a.finish(&p, c)
	a.parts = append(a.parts, p)
}

// words is an argv under construction.
type words struct {
	s   []string
	dyn []bool
	why []string
	// out[i], when out is not nil: what the command or process substitution that is the whole
	// of word i writes (echo or printf of literal words), for `. <(...)`, `bash <(...)` and
	// `eval "$(...)"`, which run it
	out []*stdinText
}

func (w *words) push(s string, dyn bool, why string) {
	w.s = append(w.s, s)
	w.dyn = append(w.dyn, dyn)
	w.why = append(w.why, why)
	if w.out != nil {
		w.out = append(w.out, nil)
	}
}

func (w *words) setOut(i int, t *stdinText) {
	if w.out == nil {
		w.out = make([]*stdinText, len(w.s))
	}
	w.out[i] = t
}

// outAt is what word i, a substitution, writes; nil when it is no substitution.
func (w words) outAt(i int) *stdinText {
	if w.out == nil || i >= len(w.out) {
		return nil
	}
	return w.out[i]
}

func (w words) from(i int) words {
	n := words{s: w.s[i:], dyn: w.dyn[i:], why: w.why[i:]}
	if w.out != nil {
		n.out = w.out[i:]
	}
	return n
}

// substOutput is what a word that is only a command substitution $(...) (also in double
// quotes) or an input process substitution <(...) writes; nil for any other word.
func substOutput(w *syntax.Word) *stdinText {
	if len(w.Parts) != 1 {
		return nil
	}
	part := w.Parts[0]
	if dq, ok := part.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
		part = dq.Parts[0]
	}
	var stmts []*syntax.Stmt
	switch x := part.(type) {
	case *syntax.CmdSubst:
		stmts = x.Stmts
	case *syntax.ProcSubst:
		if x.Op != syntax.CmdIn {
			return nil
		}
		stmts = x.Stmts
	default:
		return nil
	}
	if len(stmts) != 1 {
		return &stdinText{dyn: true}
	}
	return pipeText(stmts[0])
}

func (w words) lit(i int) (string, bool) {
	if i >= len(w.s) || w.dyn[i] {
		return "", false
	}
	return w.s[i], true
}

// part adds the part of argv w in context c; denyOnly makes it seen by deny and ask rules only.
func (a *analyzer) part(c *cctx, w words, denyOnly bool) *Part {
	p := Part{Text: c.text, DenyOnly: c.denyOnly || denyOnly}
	if len(w.s) > 0 {
		p.Words = make([]string, 0, len(w.s))
	}
	if c.fl != 0 {
		p.addFlag(c.fl, c.why)
	}
	for i := range w.s {
		p.pushWord(w.s[i], w.dyn[i], w.why[i])
	}
	if len(w.s) > 0 && !w.dyn[0] {
		name := w.s[0]
		p.Base = path.Base(name)
		p.Name = name
		if strings.Contains(name, "/") && systemDirs[path.Dir(path.Clean(name))] {
			p.Name = p.Base
		}
		if !strings.Contains(name, "/") {
			p.Base = name
		}
	}
	p.checkNames()
	a.finish(&p, c)
	a.parts = append(a.parts, p)
	return a.last()
}

// finish adds what the line before the part changed (the directory, a variable), and what
// the part itself assigns or changes for the commands after it.
func (a *analyzer) finish(p *Part, c *cctx) {
	p.Inputs, p.Outputs = c.inputs, c.outputs
	if len(a.execIns) > 0 {
		p.Inputs = append(p.Inputs[:len(p.Inputs):len(p.Inputs)], a.execIns...)
	}
	if len(a.execOuts) > 0 {
		p.Outputs = append(p.Outputs[:len(p.Outputs):len(p.Outputs)], a.execOuts...)
		p.addFlag(FlagRedirect, "writes where an earlier exec redirected its output")
	}
	p.Chdir = c.chdir || a.moved
	if a.envWhy != "" {
		p.addFlag(FlagEnv, a.envWhy)
	}
	switch p.Base {
	case "cd", "pushd", "popd":
		a.moved = true
	}
	if p.DenyOnly {
		return
	}
	for _, name := range assignedNames(p) {
		if dangerousEnv(name) {
			why := "assigns " + name + " (" + p.Base + ")"
			p.addFlag(FlagEnv, why)
			if a.envWhy == "" {
				a.envWhy = why
			}
			return
		}
	}
}

// assignedNames lists the variables a builtin sets: read, printf -v, mapfile, readarray,
// getopts and unset ("" for a name computed at run time).
func assignedNames(p *Part) []string {
	var names []string
	args := p.Words
	switch p.Base {
	case "read", "mapfile", "readarray":
		val := "dinNptuCcO" // options that take a value
		if p.Base == "read" {
			val = "dinNptu"
		}
		def := "REPLY"
		if p.Base != "read" {
			def = "MAPFILE"
		}
		for i := 1; i < len(args); i++ {
			s := args[i]
			if p.dyn(i) {
				return []string{""}
			}
			if s == "--" {
				names = append(names, args[i+1:]...)
				break
			}
			if strings.HasPrefix(s, "-") && len(s) > 1 {
				for j := 1; j < len(s); j++ {
					if s[j] == 'a' && p.Base == "read" { // read -a NAME
						if j+1 < len(s) {
							names = append(names, s[j+1:])
						} else if i+1 < len(args) {
							i++
							names = append(names, args[i])
						}
						break
					}
					if strings.IndexByte(val, s[j]) >= 0 {
						if j+1 == len(s) {
							i++
						}
						break
					}
				}
				continue
			}
			names = append(names, s)
		}
		if len(names) == 0 {
			names = append(names, def)
		}
	case "printf":
		for i := 1; i+1 < len(args); i++ {
			if args[i] == "-v" {
				names = append(names, args[i+1])
			} else if strings.HasPrefix(args[i], "-v") {
				names = append(names, args[i][2:])
			}
			if !strings.HasPrefix(args[i], "-") {
				break
			}
		}
	case "getopts":
		if len(args) > 2 {
			names = append(names, args[2])
		}
		names = append(names, "OPTARG", "OPTIND")
	case "unset":
		for i := 1; i < len(args); i++ {
			if !strings.HasPrefix(args[i], "-") {
				names = append(names, args[i])
			}
		}
	}
	for i, n := range names {
		if j := strings.IndexByte(n, '['); j > 0 {
			names[i] = n[:j]
		}
	}
	return names
}

// specials are the commands seen through that are not wrappers of an argv.
var specials map[string]func(a *analyzer, c *cctx, w words, base string)

func init() {
	specials = map[string]func(a *analyzer, c *cctx, w words, base string){
		"trap":   (*analyzer).trap,
		"alias":  (*analyzer).alias,
		".":      (*analyzer).dot,
		"source": (*analyzer).dot,
		"find":   (*analyzer).find,
	}
}

// command adds the parts of one argv, seeing through the wrappers that run another command.
func (a *analyzer) command(c *cctx, w words) {
	if len(w.s) == 0 {
		return
	}
	name, ok := w.lit(0)
	if !ok {
		a.part(c, w, false)
		return
	}
	if c.depth > maxDepth*4 || len(a.parts) > maxParts {
		p := a.part(c, w, false)
		p.addFlag(FlagOpaque, "wrappers nested too deeply")
		return
	}
	base := path.Base(name)
	switch {
	case name == "--":
		// time -p -- cmd: bash's time takes --, which the parser reads as the command
		p := a.part(c, w, false)
		p.addFlag(FlagOpaque, "runs a command named --")
		a.command(c, w.from(1))
	case wrapperTable[base] != nil:
		a.wrap(c, wrapperTable[base], w, base)
	case specials[base] != nil:
		specials[base](a, c, w, base)
	case shells[base]:
		a.shell(c, w, base)
	default:
		a.part(c, w, false)
	}
}

// trap [-lp] [--] ACTION SIGNAL...: the action runs later, as if eval'd.
func (a *analyzer) trap(c *cctx, w words, base string) {
	i := 1
	for i < len(w.s) {
		s, ok := w.lit(i)
		if !ok || s == "-" || !strings.HasPrefix(s, "-") {
			break
		}
		i++
		if s == "--" {
			break
		}
	}
	act, ok := w.lit(i)
	if i >= len(w.s) || (ok && (act == "-" || act == "")) {
		a.part(c, w, false)
		return
	}
	if !ok {
		p := a.part(c, w, false)
		p.addFlag(FlagOpaque, "trap of an action computed at run time")
		return
	}
	a.part(c, w, false)
	in := *c
	in.depth++
	a.source(act, &in)
}

// alias NAME=VALUE: the value runs wherever NAME is used (with expand_aliases).
func (a *analyzer) alias(c *cctx, w words, base string) {
	a.part(c, w, false)
	in := *c
	in.depth++
	for i := 1; i < len(w.s); i++ {
		s, ok := w.lit(i)
		if !ok {
			p := a.part(c, w, false)
			p.addFlag(FlagOpaque, "alias of a value computed at run time")
			return
		}
		if eq := strings.IndexByte(s, '='); eq > 0 {
			a.source(s[eq+1:], &in)
		}
	}
}

// stdinFiles name the standard input.
var stdinFiles = map[string]bool{"/dev/stdin": true, "/dev/fd/0": true, "/proc/self/fd/0": true, "-": true}

// dot: `. FILE` and `source FILE` run the commands in FILE; from the standard input they are
// the here-document or the echo piped in, when known.
func (a *analyzer) dot(c *cctx, w words, base string) {
	i := 1
	if s, ok := w.lit(i); ok && s == "--" {
		i++
	}
	p := a.part(c, w, false)
	file, ok := w.lit(i)
	switch {
	case i >= len(w.s):
	case !ok && w.outAt(i) != nil && !w.outAt(i).dyn:
		// . <(echo ...): the commands are what the substitution writes
		p.DenyOnly = true
		sub := *c
		sub.depth++
		a.source(w.outAt(i).text, &sub)
	case !ok:
		p.addFlag(FlagOpaque, base+" runs the commands of a file named at run time")
	case stdinFiles[path.Clean(file)] || stdinFiles[file]:
		in := a.stdin
		if in == nil || in.dyn {
			p.addFlag(FlagOpaque, base+" runs commands read from its input")
			return
		}
		p.DenyOnly = true
		a.stdin = nil
		sub := *c
		sub.depth++
		a.source(in.text, &sub)
	}
}

// shell: sh -c STRING runs STRING; sh reading its input runs the here-document or the echo
// piped to it.
func (a *analyzer) shell(c *cctx, w words, base string) {
	in := *c
	in.depth++
	if opt, unsafe := shellStartup(w); unsafe {
		// startup files run before the command string, unseen
		p := a.part(c, w, false)
		p.addFlag(FlagOpaque, "runs startup files fr-approve does not see ("+base+" "+opt+")")
		if str, at, ok := shellString(w); ok && at >= 0 {
			in.denyOnly = true
			a.source(str, &in)
		}
		return
	}
	if str, at, ok := shellString(w); ok {
		if at < 0 {
			p := a.part(c, w, false)
			p.addFlag(FlagOpaque, base+" -c runs a command string computed at run time")
			return
		}
		a.part(c, w, true)
		a.source(str, &in)
		return
	}
	if st := a.stdin; st != nil && readsStdin(w) {
		if st.dyn {
			p := a.part(c, w, false)
			p.addFlag(FlagOpaque, base+" runs commands read from its input")
			return
		}
		a.part(c, w, true)
		a.stdin = nil
		a.source(st.text, &in)
		return
	}
	if i := scriptOperand(w); i > 0 && w.outAt(i) != nil {
		// bash <(echo ...): the script is what the substitution writes
		if out := w.outAt(i); !out.dyn {
			a.part(c, w, true)
			a.source(out.text, &in)
			return
		}
		p := a.part(c, w, false)
		p.addFlag(FlagOpaque, base+" runs the output of a command")
		return
	}
	a.part(c, w, false)
}

// scriptOperand is the index of the script a shell's argv names (0 when it names none).
func scriptOperand(w words) int {
	for i := 1; i < len(w.s); i++ {
		s, ok := w.lit(i)
		if !ok || !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+") {
			return i
		}
		if s == "--" {
			if i+1 < len(w.s) {
				return i + 1
			}
			return 0
		}
	}
	return 0
}

// find: the commands of -exec, -execdir, -ok and -okdir are parts of their own; -execdir and
// -okdir run them in each file's directory.
func (a *analyzer) find(c *cctx, w words, base string) {
	own := words{}
	own.push(w.s[0], w.dyn[0], w.why[0])
	for i := 1; i < len(w.s); i++ {
		s, ok := w.lit(i)
		if ok && (s == "-exec" || s == "-execdir" || s == "-ok" || s == "-okdir") {
			inner := words{}
			j := i + 1
			for ; j < len(w.s); j++ {
				t, ok := w.lit(j)
				if ok && (t == ";" || t == "+") {
					break
				}
				if ok && strings.Contains(t, "{}") {
					inner.push("", true, "find substitutes file names for {}")
					continue
				}
				inner.push(w.s[j], w.dyn[j], w.why[j])
			}
			if len(inner.s) > 0 {
				in := *c
				in.depth++
				if strings.HasSuffix(s, "dir") {
					in.chdir = true
					in.flag(FlagOpaque, "runs in each file's directory (find "+s+"), where its relative paths point elsewhere")
				}
				a.command(&in, inner)
			}
			i = j
			continue
		}
		own.push(w.s[i], w.dyn[i], w.why[i])
	}
	a.part(c, own, false)
}
func joinLit(w words, i int) (string, bool) {
	var b strings.Builder
	for j := i; j < len(w.s); j++ {
		s, ok := w.lit(j)
		if !ok {
			return "", false
		}
		if j > i {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	return b.String(), true
}

func shellString(w words) (str string, at int, ok bool) {
	sawC := false
	for i := 1; i < len(w.s); i++ {
		s, lit := w.lit(i)
		if !lit {
			if sawC {
				return "", -1, true
			}
			return "", 0, false
		}
		if s == "--" || s == "-" {
			continue
		}
		if (strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+")) && len(s) > 1 {
			if strings.HasPrefix(s, "--") {
				if s == "--rcfile" || s == "--init-file" {
					i++
				}
				continue
			}
			if strings.ContainsRune(s[1:], 'c') {
				sawC = true
			}
			if strings.ContainsAny(s[1:], "oO") {
				i++
			}
			continue
		}
		if sawC {
			return s, i, true
		}
		return "", 0, false
	}
	return "", 0, false
}

// shellStartup finds a shell option that makes it read startup files (--rcfile, --init-file,
// -i, -l, --login) or one fr-approve does not know, before the script or command string.
func shellStartup(w words) (string, bool) {
	for i := 1; i < len(w.s); i++ {
		s, lit := w.lit(i)
		if !lit {
			return "", false // judged as a computed word
		}
		if s == "--" || s == "-" || !(strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+")) {
			return "", false
		}
		if strings.HasPrefix(s, "--") {
			switch s {
			case "--norc", "--noprofile", "--posix", "--noediting", "--restricted":
				continue
			}
			return s, true
		}
		for _, c := range s[1:] {
			if !strings.ContainsRune("ceuxvnfaCEThmpsboO", c) {
				return s, true
			}
		}
		if strings.ContainsAny(s[1:], "oO") {
			i++ // the option's name
		}
	}
	return "", false
}

// readsStdin reports whether a shell's argv names no script, so it runs what it reads.
func readsStdin(w words) bool {
	for i := 1; i < len(w.s); i++ {
		s, ok := w.lit(i)
		if !ok {
			return false
		}
		if s == "-s" || s == "--" || s == "-" {
			return true
		}
		if !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+") {
			return false
		}
	}
	return true
}

func wordLit(w *syntax.Word) (s string, dyn bool, why string) {
	if w == nil {
		return "", true, "an empty word"
	}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v, glob := unescapeUnquoted(p.Value)
			if glob && !dyn {
				dyn, why = true, "a glob ("+p.Value+") expands at run time"
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			if p.Dollar {
				if !dyn {
					dyn, why = true, "$'...' quoting is decoded at run time"
				}
				continue
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescapeDouble(l.Value))
					continue
				}
				if !dyn {
					dyn, why = true, dynWhy(q)
				}
			}
		default:
			if !dyn {
				dyn, why = true, dynWhy(part)
			}
		}
	}
	return b.String(), dyn, why
}

func dynWhy(p syntax.WordPart) string {
	switch p := p.(type) {
	case *syntax.ParamExp:
		if p.Param != nil {
			return "expands $" + p.Param.Value
		}
		return "expands a parameter"
	case *syntax.CmdSubst:
		return "uses the output of a command substitution"
	case *syntax.ArithmExp:
		return "uses an arithmetic expansion"
	case *syntax.ProcSubst:
		return "uses a process substitution"
	case *syntax.ExtGlob:
		return "an extended glob expands at run time"
	case *syntax.BraceExp:
		return "a brace expansion"
	}
	return "a word computed at run time"
}

// unescapeUnquoted removes the backslashes of an unquoted word and reports whether it holds
// an unescaped glob or brace expansion.
func unescapeUnquoted(v string) (string, bool) {
	glob := false
	if !strings.ContainsAny(v, `\*?[{`) {
		return v, false
	}
	var b strings.Builder
	brace := -1
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '\\':
			if i+1 < len(v) {
				i++
				if v[i] != '\n' {
					b.WriteByte(v[i])
				}
			}
			continue
		case '*', '?':
			glob = true
		case '[':
			// a bracket expression needs its closing ]; a lone [ (the test command) is literal
			if strings.IndexByte(v[i+1:], ']') >= 0 {
				glob = true
			}
		case '{':
			brace = i
		case ',':
			if brace >= 0 {
				glob = true
			}
		case '.':
			if brace >= 0 && i+1 < len(v) && v[i+1] == '.' {
				glob = true
			}
		}
		b.WriteByte(c)
	}
	return b.String(), glob
}

func unescapeDouble(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
