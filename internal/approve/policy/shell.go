package policy

import (
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Flag marks what makes a simple command unsafe to allow on its argv alone. An allow rule
// matches a part carrying a flag only when the rule permits that flag explicitly.
type Flag uint8

const (
	// FlagRedirect: the command writes to a file through a redirection (> f, >> f, &> f).
	FlagRedirect Flag = 1 << iota
	// FlagExpansion: a word is only known at run time ($VAR, $(cmd), globs, xargs input).
	FlagExpansion
	// FlagUnparsable: the command (or a command string it runs) could not be analysed.
	FlagUnparsable
	// FlagEnv: the command assigns a variable that changes what runs (PATH, LD_PRELOAD, ...).
	FlagEnv
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
	// DenyOnly parts are seen by deny and ask rules only: the inner command of sudo, and the
	// wrappers (env, xargs, bash -c, ...) whose inner commands are parts of their own.
	DenyOnly bool
}

func (p *Part) dyn(i int) bool { return p.Dyn != nil && p.Dyn[i] }

func (p *Part) addFlag(f Flag, why string) {
	if p.Flags == 0 {
		p.Why = why
	}
	p.Flags |= f
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
// else's choosing, and needs a rule with allow_env.
var harmlessEnv = map[string]bool{
	"GOOS": true, "GOARCH": true, "GOARM": true, "GOARM64": true, "GOAMD64": true, "GO386": true,
	"GOMIPS": true, "GOMIPS64": true, "GOPPC64": true, "GORISCV64": true, "GOWASM": true,
	"CGO_ENABLED": true, "GOMAXPROCS": true, "GOGC": true, "GOMEMLIMIT": true, "GOTRACEBACK": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true, "COLUMNS": true, "LINES": true,
	"NO_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true, "FORCE_COLOR": true, "CI": true,
	"RUST_BACKTRACE": true, "PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true,
}

// dangerousEnv reports whether assigning name may change which program runs, what it loads or
// where it reads its settings from: any name not known to be harmless.
func dangerousEnv(name string) bool {
	if harmlessEnv[name] {
		return false
	}
	if strings.HasPrefix(name, "LC_") && name != "LC_" {
		return false
	}
	return true
}

var parserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

const maxDepth = 8

// Analyze splits a shell command line into the simple commands it would run: every command of
// pipelines, lists, subshells, command and process substitutions, function bodies, and the
// command strings of `bash -c`, `sh -c`, `eval`, the commands run by env, command, exec,
// nohup, nice, timeout, xargs, find -exec and sudo. A command that does not parse is one part
// flagged FlagUnparsable.
func Analyze(cmd string) []Part {
	a := &analyzer{}
	a.source(cmd, 0, "", false, 0)
	return a.parts
}

type analyzer struct {
	parts []Part
	// stdin is the here-document or here-string of the command being analysed: a shell that
	// reads its commands from it runs them, so they are judged too.
	stdin *stdinText
}

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

type span struct {
	from, to uint
	why      string
}

func (a *analyzer) source(src string, inherit Flag, why string, denyOnly bool, depth int) {
	if depth > maxDepth {
		p := Part{Text: src, DenyOnly: denyOnly}
		p.addFlag(FlagUnparsable|inherit, "command strings nested too deeply")
		a.parts = append(a.parts, p)
		return
	}
	parser := parserPool.Get().(*syntax.Parser)
	f, err := parser.Parse(strings.NewReader(src), "")
	parserPool.Put(parser)
	if err != nil {
		// Deny and ask rules still see the words as a best guess; no allow rule does.
		p := Part{Text: strings.TrimSpace(src), DenyOnly: denyOnly, Words: strings.Fields(src)}
		if len(p.Words) > 0 {
			p.Name, p.Base = p.Words[0], path.Base(p.Words[0])
		}
		p.addFlag(FlagUnparsable, "does not parse: "+err.Error())
		if inherit != 0 {
			p.Flags |= inherit
		}
		a.parts = append(a.parts, p)
		return
	}
	var redirected []span // compound statements whose output goes to a file
	syntax.Walk(f, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok {
			if why := evaluatesArithmetic(n); why != "" {
				a.unanalysable(src, n, inherit, why, denyOnly)
			}
			return true
		}
		rf, rwhy := redirFlags(st.Redirs)
		from, to := st.Pos().Offset(), st.End().Offset()
		fl, fwhy := inherit, why
		for _, s := range redirected {
			if from >= s.from && from < s.to {
				if fl == 0 {
					fwhy = s.why
				}
				fl |= FlagRedirect
			}
		}
		if rf != 0 {
			if fl == 0 {
				fwhy = rwhy
			}
			fl |= rf
		}
		text := src
		if int(to) <= len(src) && from <= to {
			text = strings.TrimRight(src[from:to], "; &\t\r\n")
		}
		switch c := st.Cmd.(type) {
		case *syntax.CallExpr:
			saved := a.stdin
			a.stdin = hereText(st.Redirs)
			a.call(text, c, fl, fwhy, denyOnly, depth)
			a.stdin = saved
		case *syntax.DeclClause:
			a.decl(text, c, fl, fwhy, denyOnly)
		case nil:
			if fl != 0 {
				p := Part{Text: text, DenyOnly: denyOnly}
				p.addFlag(fl, fwhy)
				a.parts = append(a.parts, p)
			}
		default:
			if rf != 0 {
				redirected = append(redirected, span{from, to, rwhy})
			}
		}
		return true
	})
}

// evaluatesArithmetic says why n makes bash evaluate arithmetic on a value only known at run
// time, or "" when it does not. Arithmetic evaluation runs the command substitutions in array
// subscripts it meets, even inside a variable's value: with x='a[$(rm -rf ~)]', both (( x ))
// and [[ $x -eq 0 ]] run rm. No argv shows that, so such commands are never allowed by a rule.
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
func (a *analyzer) unanalysable(src string, n syntax.Node, inherit Flag, why string, denyOnly bool) {
	text := src
	if from, to := n.Pos().Offset(), n.End().Offset(); int(to) <= len(src) && from <= to {
		text = src[from:to]
	}
	p := Part{Text: text, DenyOnly: denyOnly}
	p.addFlag(FlagUnparsable|inherit, why)
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

func (a *analyzer) decl(text string, d *syntax.DeclClause, fl Flag, why string, denyOnly bool) {
	p := Part{Text: text, Words: []string{d.Variant.Value}, Name: d.Variant.Value, Base: d.Variant.Value, DenyOnly: denyOnly}
	if fl != 0 {
		p.addFlag(fl, why)
	}
	for _, as := range d.Args {
		var w string
		dyn := false
		wwhy := ""
		if as.Name != nil {
			w = as.Name.Value
			if !as.Naked && dangerousEnv(as.Name.Value) {
				p.addFlag(FlagEnv, "assigns "+as.Name.Value)
			}
			if as.Value != nil {
				v, d, y := wordLit(as.Value)
				w += "=" + v
				dyn, wwhy = d, y
			}
		} else if as.Value != nil {
			w, dyn, wwhy = wordLit(as.Value)
		}
		p.pushWord(w, dyn, wwhy)
	}
	p.checkNames()
	a.parts = append(a.parts, p)
}

// checkNames flags a builtin given a variable name whose subscript bash would evaluate.
func (p *Part) checkNames() {
	if !nameBuiltins[p.Base] {
		return
	}
	for i, w := range p.Words {
		if !p.dyn(i) && subscriptedName(w) {
			p.addFlag(FlagUnparsable, "names "+w+", whose subscript "+p.Base+" evaluates as arithmetic")
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

func (a *analyzer) call(text string, c *syntax.CallExpr, fl Flag, why string, denyOnly bool, depth int) {
	var envFlag Flag
	envWhy := ""
	for _, as := range c.Assigns {
		if as.Name != nil && dangerousEnv(as.Name.Value) {
			envFlag, envWhy = FlagEnv, "assigns "+as.Name.Value
			break
		}
	}
	if len(c.Args) == 0 {
		if fl|envFlag != 0 {
			p := Part{Text: text, DenyOnly: denyOnly}
			if fl != 0 {
				p.addFlag(fl, why)
			}
			if envFlag != 0 {
				p.addFlag(envFlag, envWhy)
			}
			a.parts = append(a.parts, p)
		}
		return
	}
	w := words{}
	for _, arg := range c.Args {
		s, dyn, wwhy := wordLit(arg)
		w.push(s, dyn, wwhy)
	}
	if envFlag != 0 {
		if fl == 0 {
			why = envWhy
		}
		fl |= envFlag
	}
	a.command(text, w, fl, why, denyOnly, depth)
}

// words is an argv under construction.
type words struct {
	s   []string
	dyn []bool
	why []string
}

func (w *words) push(s string, dyn bool, why string) {
	w.s = append(w.s, s)
	w.dyn = append(w.dyn, dyn)
	w.why = append(w.why, why)
}

func (w words) from(i int) words {
	return words{s: w.s[i:], dyn: w.dyn[i:], why: w.why[i:]}
}

func (w words) lit(i int) (string, bool) {
	if i >= len(w.s) || w.dyn[i] {
		return "", false
	}
	return w.s[i], true
}

func (a *analyzer) part(text string, w words, fl Flag, why string, denyOnly bool) *Part {
	p := Part{Text: text, DenyOnly: denyOnly}
	if fl != 0 {
		p.addFlag(fl, why)
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
	a.parts = append(a.parts, p)
	return &a.parts[len(a.parts)-1]
}

// command adds the parts of one argv, seeing through the wrappers that run another command.
func (a *analyzer) command(text string, w words, fl Flag, why string, denyOnly bool, depth int) {
	if len(w.s) == 0 {
		return
	}
	name, ok := w.lit(0)
	if !ok {
		a.part(text, w, fl, why, denyOnly)
		return
	}
	base := path.Base(name)
	if depth > maxDepth*4 {
		p := a.part(text, w, fl, why, denyOnly)
		p.addFlag(FlagUnparsable, "wrappers nested too deeply")
		return
	}
	wrapper := func(inner int, innerFl Flag, innerWhy string) {
		a.part(text, w, fl, why, true)
		if inner < len(w.s) {
			f, y := fl, why
			if innerFl != 0 {
				if f == 0 {
					y = innerWhy
				}
				f |= innerFl
			}
			a.command(text, w.from(inner), f, y, denyOnly, depth+1)
		}
	}
	switch base {
	case "env":
		i := 1
		var ef Flag
		ewhy := ""
		for ; i < len(w.s); i++ {
			s, ok := w.lit(i)
			if !ok {
				break
			}
			if s == "--" {
				i++
				break
			}
			if strings.HasPrefix(s, "-") {
				switch {
				case s == "-C" || s == "--chdir" || strings.HasPrefix(s, "--chdir=") || (strings.HasPrefix(s, "-C") && len(s) > 2):
					if s == "-C" || s == "--chdir" {
						i++
					}
					// like cd: the command's relative paths are not what they look like
					ef, ewhy = ef|FlagUnparsable, "runs in another directory (env -C), where its relative paths point elsewhere"
				case s == "-u" || s == "--unset":
					i++
				case s == "-S" || strings.HasPrefix(s, "--split-string") || (strings.HasPrefix(s, "-S") && len(s) > 2):
					p := a.part(text, w, fl, why, denyOnly)
					p.addFlag(FlagUnparsable, "env -S splits a command string")
					return
				}
				continue
			}
			if eq := strings.IndexByte(s, '='); eq > 0 {
				if dangerousEnv(s[:eq]) {
					ef, ewhy = FlagEnv, "assigns "+s[:eq]
				}
				continue
			}
			break
		}
		if i >= len(w.s) {
			a.part(text, w, fl|ef, firstWhy(fl, why, ewhy), denyOnly)
			return
		}
		wrapper(i, ef, ewhy)
	case "command", "builtin":
		i := 1
		for ; i < len(w.s); i++ {
			s, ok := w.lit(i)
			if !ok || !strings.HasPrefix(s, "-") {
				break
			}
			if s == "-v" || s == "-V" { // only looks the name up
				a.part(text, w, fl, why, denyOnly)
				return
			}
			if s == "--" {
				i++
				break
			}
		}
		if i >= len(w.s) {
			a.part(text, w, fl, why, denyOnly)
			return
		}
		wrapper(i, 0, "")
	case "exec", "nohup", "time", "setsid", "nice", "stdbuf", "timeout", "chronic", "ionice":
		i := skipOptions(base, w)
		if base == "timeout" && i < len(w.s) {
			i++ // the duration
		}
		if i >= len(w.s) {
			a.part(text, w, fl, why, denyOnly)
			return
		}
		var wf Flag
		wwhy := ""
		if base == "time" {
			if out, ok := timeOutput(w.s[:i], w.dyn[:i]); ok {
				wf, wwhy = FlagRedirect, "writes time's report to "+out
			}
		}
		wrapper(i, wf, wwhy)
	case "xargs":
		i := skipOptions(base, w)
		if i >= len(w.s) {
			a.part(text, w, fl, why, true)
			inner := words{}
			inner.push("echo", false, "")
			inner.push("", true, "xargs appends arguments read from its input")
			a.command(text, inner, fl, why, denyOnly, depth+1)
			return
		}
		inner := w.from(i)
		inner = words{s: append([]string{}, inner.s...), dyn: append([]bool{}, inner.dyn...), why: append([]string{}, inner.why...)}
		if rep := xargsReplace(w.s[:i], w.dyn[:i]); rep != "" {
			// -I {}: the input replaces {} in the words instead of being appended
			for j := range inner.s {
				if !inner.dyn[j] && strings.Contains(inner.s[j], rep) {
					inner.s[j], inner.dyn[j], inner.why[j] = "", true, "has "+rep+" replaced with xargs's input"
				}
			}
		} else {
			inner.push("", true, "xargs appends arguments read from its input")
		}
		a.part(text, w, fl, why, true)
		a.command(text, inner, fl, why, denyOnly, depth+1)
	case "sudo", "doas", "run0", "pkexec":
		// Privilege is never granted by a rule about the inner command: the argv as written
		// (sudo ...) must be allowed, and the inner command is still seen by deny and ask rules.
		a.part(text, w, fl, why, denyOnly)
		i := skipOptions(base, w)
		if i < len(w.s) {
			a.command(text, w.from(i), fl, why, true, depth+1)
		}
	case "eval", "watch":
		i := 1
		if base == "watch" {
			i = skipOptions(base, w)
		}
		str, ok := joinLit(w, i)
		if !ok {
			p := a.part(text, w, fl, why, denyOnly)
			p.addFlag(FlagUnparsable, base+" of a string computed at run time")
			return
		}
		a.part(text, w, fl, why, true)
		a.source(str, fl, why, denyOnly, depth+1)
	case "trap":
		// trap ACTION SIGNAL...: the action runs later, as if eval'd
		act, ok := w.lit(1)
		if len(w.s) < 3 || (ok && (act == "-" || act == "" || strings.HasPrefix(act, "-"))) {
			a.part(text, w, fl, why, denyOnly)
			return
		}
		if !ok {
			p := a.part(text, w, fl, why, denyOnly)
			p.addFlag(FlagUnparsable, "trap of an action computed at run time")
			return
		}
		a.part(text, w, fl, why, denyOnly)
		a.source(act, fl, why, denyOnly, depth+1)
	case "alias":
		// alias NAME=VALUE: the value runs wherever NAME is used (with expand_aliases)
		a.part(text, w, fl, why, denyOnly)
		for i := 1; i < len(w.s); i++ {
			s, ok := w.lit(i)
			if !ok {
				p := a.part(text, w, fl, why, denyOnly)
				p.addFlag(FlagUnparsable, "alias of a value computed at run time")
				return
			}
			if eq := strings.IndexByte(s, '='); eq > 0 {
				a.source(s[eq+1:], fl, why, denyOnly, depth+1)
			}
		}
	case "busybox", "toybox":
		if len(w.s) < 2 {
			a.part(text, w, fl, why, denyOnly)
			return
		}
		wrapper(1, 0, "")
	case "su":
		// su [user] -c STRING: like sudo, allowed only as written; the string is still judged
		// by deny and ask rules
		a.part(text, w, fl, why, denyOnly)
		for i := 1; i+1 < len(w.s); i++ {
			if s, ok := w.lit(i); ok && (s == "-c" || s == "--command") {
				if str, ok := w.lit(i + 1); ok {
					a.source(str, fl, why, true, depth+1)
				}
			}
		}
	case "ssh":
		// the remote command is judged by deny and ask rules; allow rules see ssh as written
		a.part(text, w, fl, why, denyOnly)
		i := skipOptions(base, w)
		if i+1 < len(w.s) {
			if str, ok := joinLit(w, i+1); ok {
				a.source(str, fl, why, true, depth+1)
			}
		}
	case "find":
		a.find(text, w, fl, why, denyOnly, depth)
	default:
		if shells[base] {
			if opt, unsafe := shellStartup(w); unsafe {
				// startup files run before the command string, unseen
				p := a.part(text, w, fl, why, denyOnly)
				p.addFlag(FlagUnparsable, "runs startup files fr-approve does not see ("+base+" "+opt+")")
				if str, at, ok := shellString(w); ok && at >= 0 {
					a.source(str, fl, why, true, depth+1)
				}
				return
			}
			if str, at, ok := shellString(w); ok {
				if at < 0 {
					p := a.part(text, w, fl, why, denyOnly)
					p.addFlag(FlagUnparsable, base+" -c runs a command string computed at run time")
					return
				}
				a.part(text, w, fl, why, true)
				a.source(str, fl, why, denyOnly, depth+1)
				return
			}
			if in := a.stdin; in != nil && readsStdin(w) {
				if in.dyn {
					p := a.part(text, w, fl, why, denyOnly)
					p.addFlag(FlagUnparsable, base+" runs a here-document computed at run time")
					return
				}
				a.part(text, w, fl, why, true)
				a.stdin = nil
				a.source(in.text, fl, why, denyOnly, depth+1)
				return
			}
		}
		a.part(text, w, fl, why, denyOnly)
	}
}

// joinLit joins the words from i on with spaces, as eval and ssh do; false if one is computed.
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

func firstWhy(fl Flag, why, other string) string {
	if fl != 0 {
		return why
	}
	return other
}

// optionsWithValue lists, per wrapper, the short options that take the next word as a value.
var optionsWithValue = map[string]string{
	"exec":    "a",
	"time":    "fo",
	"nice":    "n",
	"stdbuf":  "ioe",
	"timeout": "sk",
	"ionice":  "cnp",
	"xargs":   "adEeIiLlnPs",
	"sudo":    "CDghpRrTtUu",
	"doas":    "Cu",
	"run0":    "u",
	"watch":   "n",
	"ssh":     "BbcDEeFIiJLlmOoPpQRSWw",
}

// timeOutput finds the file GNU or BSD time writes its report to (-o FILE, --output=FILE);
// a file named at run time is reported as such.
func timeOutput(ws []string, dyn []bool) (string, bool) {
	for i := 1; i < len(ws); i++ {
		s := ws[i]
		if dyn[i] {
			continue
		}
		switch {
		case s == "-o" || s == "--output":
			if i+1 < len(ws) {
				if dyn[i+1] {
					return "a file named at run time", true
				}
				return ws[i+1], true
			}
			return "a file", true
		case strings.HasPrefix(s, "--output="):
			return strings.TrimPrefix(s, "--output="), true
		case strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--"):
			// a cluster such as -ao FILE or -oFILE
			if j := strings.IndexAny(s[1:], "of"); j >= 0 && s[1+j] == 'o' {
				if rest := s[2+j:]; rest != "" {
					return rest, true
				}
				if i+1 < len(ws) {
					return ws[i+1], true
				}
				return "a file", true
			}
		}
	}
	return "", false
}

// skipOptions returns the index of the first word after the options of a wrapper.
func skipOptions(cmd string, w words) int {
	withValue := optionsWithValue[cmd]
	for i := 1; i < len(w.s); i++ {
		s, ok := w.lit(i)
		if !ok {
			return i
		}
		if s == "--" {
			return i + 1
		}
		if !strings.HasPrefix(s, "-") || s == "-" {
			if cmd == "nice" || cmd == "timeout" {
				return i
			}
			return i
		}
		if strings.HasPrefix(s, "--") {
			if !strings.Contains(s, "=") && longTakesValue(cmd, s) {
				i++
			}
			continue
		}
		if cmd == "nice" && isDigits(s[1:]) { // nice -10 cmd
			continue
		}
		// -abc: a value-taking option ends the cluster; its value is the rest or the next word
		c := s[1:]
		for j := 0; j < len(c); j++ {
			if strings.IndexByte(withValue, c[j]) >= 0 {
				if j == len(c)-1 {
					if cmd == "xargs" && (c[j] == 'i' || c[j] == 'l' || c[j] == 'e') {
						break // optional value, attached only
					}
					i++
				}
				break
			}
		}
	}
	return len(w.s)
}

func longTakesValue(cmd, opt string) bool {
	switch cmd {
	case "xargs":
		switch opt {
		case "--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var":
			return true
		}
	case "sudo":
		switch opt {
		case "--user", "--group", "--host", "--prompt", "--role", "--type", "--other-user", "--chdir", "--close-from", "--command-timeout":
			return true
		}
	case "timeout":
		return opt == "--signal" || opt == "--kill-after"
	case "time":
		return opt == "--output" || opt == "--format"
	case "nice":
		return opt == "--adjustment"
	case "ionice":
		return opt == "--class" || opt == "--classdata" || opt == "--pid"
	}
	return false
}

// xargsReplace returns the replace string of xargs -I R, -i[R] or --replace[=R], or "".
func xargsReplace(ws []string, dyn []bool) string {
	for i := 1; i < len(ws); i++ {
		if dyn[i] {
			continue
		}
		s := ws[i]
		switch {
		case s == "-I" && i+1 < len(ws):
			return ws[i+1]
		case strings.HasPrefix(s, "-I") && len(s) > 2:
			return s[2:]
		case s == "-i" || s == "--replace":
			return "{}"
		case strings.HasPrefix(s, "-i") && len(s) > 2 && s[1] == 'i':
			return s[2:]
		case strings.HasPrefix(s, "--replace="):
			return strings.TrimPrefix(s, "--replace=")
		}
	}
	return ""
}

// shellString finds the command string of `sh -c STRING`. at is -1 when the string is
// computed at run time; ok is false when the shell runs a script file or its input instead.
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

func (a *analyzer) find(text string, w words, fl Flag, why string, denyOnly bool, depth int) {
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
				a.command(text, inner, fl, why, denyOnly, depth+1)
			}
			i = j
			continue
		}
		own.push(w.s[i], w.dyn[i], w.why[i])
	}
	a.part(text, own, fl, why, denyOnly)
}

// wordLit returns the value of a word when it is known before running the command; dyn is true
// (and why says why) when any of it is computed at run time.
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
