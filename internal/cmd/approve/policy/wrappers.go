package policy

import (
	"strings"
)

// How a wrapper's inner command is given.
type innerKind uint8

const (
	innerArgv   innerKind = iota // the words after the options (and operands)
	innerJoined                  // the words after the options, joined with spaces and run by a shell
	innerXargs                   // an argv completed with words read from the input
	innerFlock                   // FILE then an argv, or FILE -c STRING
	innerNone                    // runs nothing of its own but what its options say (su -c)
)

// effect is what an option of a wrapper does besides being read.
type effect uint8

const (
	effNone    effect = iota
	effChdir          // the inner command runs in another directory (env -C DIR)
	effUnset          // removes a variable from the environment (env -u NAME)
	effSplit          // the value is split into the inner command (env -S STRING)
	effOutput         // the wrapper writes the value as a file (time -o FILE)
	effReplace        // xargs -I R: R in the words is replaced with input
	effLookup         // command -v: the name is looked up, not run
	effArgv           // watch -x: the command is an argv, not a shell string
	effString         // the value is a shell command string (su -c, flock -c)
	effArgFile        // the value is a file whose contents become arguments (xargs -a)
)

// wrapSpec describes a command the analysis sees through, as its getopt_long reads it.
type wrapSpec struct {
	short    string            // getopt short options: x, x: (value), x:: (optional attached value)
	long     string            // long options, space-separated: name, name= (value), name:: (optional =value)
	effects  map[string]effect // by short letter or long name
	operands int               // words between the options and the inner command (timeout's DURATION)
	numeric  bool              // -N is an option (nice -10)
	dashOpt  bool              // a lone - is an option (env: -i)
	assigns  bool              // NAME=VALUE words before the command are assignments (env)
	permute  bool              // options may follow the operands (GNU getopt without +)
	runsAs   bool              // another user or host runs the inner command: allow rules never see through it
	inner    innerKind
}

var wrapperTable = map[string]*wrapSpec{
	"env": {short: "a:C:iS:u:v0", dashOpt: true, assigns: true,
		long:    "argv0= chdir= ignore-environment split-string= unset= debug null default-signal:: ignore-signal:: block-signal:: list-signal-handling help version",
		effects: map[string]effect{"C": effChdir, "chdir": effChdir, "u": effUnset, "unset": effUnset, "S": effSplit, "split-string": effSplit}},
	"command": {short: "pvV", effects: map[string]effect{"v": effLookup, "V": effLookup}},
	"builtin": {},
	"exec":    {short: "cla:"},
	"nohup":   {long: "help version"},
	"nice":    {short: "n:", long: "adjustment= help version", numeric: true},
	"timeout": {short: "k:s:v", long: "kill-after= signal= foreground preserve-status verbose help version", operands: 1},
	"stdbuf":  {short: "i:o:e:", long: "input= output= error= help version"},
	"setsid":  {short: "cfw", long: "ctty fork wait help version"},
	"chronic": {short: "ev"},
	"ionice":  {short: "c:n:p:P:tu:", long: "class= classdata= pid= pgid= ignore uid= help version"},
	"time": {short: "ao:f:pqvV", long: "append output= format= portability quiet verbose help version",
		effects: map[string]effect{"o": effOutput, "output": effOutput}},
	"busybox": {},
	"toybox":  {},
	"eval":    {inner: innerJoined},
	"watch": {short: "bcCd::eghn:ptvwxq:r:s:", long: "beep color no-color differences:: errexit chgexit exec help interval= no-linewrap no-title no-wrap precise version equexit= shotsdir=",
		effects: map[string]effect{"x": effArgv, "exec": effArgv}, inner: innerJoined},
	"xargs": {short: "0a:d:E:e::I:i::L:l::n:oprP:s:tx", inner: innerXargs,
		long:    "null arg-file= delimiter= eof:: replace:: max-lines:: max-args= open-tty interactive max-procs= no-run-if-empty max-chars= process-slot-var= show-limits verbose exit help version",
		effects: map[string]effect{"I": effReplace, "i": effReplace, "replace": effReplace, "a": effArgFile, "arg-file": effArgFile}},
	"flock": {short: "sexnoFuw:E:hVc:", long: "shared exclusive unlock nonblock nb timeout= wait= conflict-exit-code= close no-fork verbose help version command=",
		operands: 1, inner: innerFlock, effects: map[string]effect{"c": effString, "command": effString}},
	"sudo": {runsAs: true, short: "ABbEeHiKkLlnPSsVvhC:D:g:h::p:R:r:T:t:U:u:",
		long: "askpass background bell preserve-env:: edit group= set-home help host= login remove-timestamp reset-timestamp list non-interactive preserve-groups prompt= chroot= chdir= role= stdin shell type= command-timeout= other-user= user= validate version close-from="},
	"doas":   {runsAs: true, short: "a:C:Lnsu:"},
	"run0":   {runsAs: true, short: "u:g:D:", long: "user= group= nice= chdir= setenv= background= machine= unit= property= description= slice= slice-inherit pty pipe shell-prompt-prefix= area= via-shell no-ask-password help version"},
	"pkexec": {runsAs: true, long: "user= disable-internal-agent keep-cwd help version"},
	"su": {runsAs: true, permute: true, inner: innerNone, short: "c:flmpPs:g:G:w:",
		long:    "command= session-command= fast login preserve-environment pty shell= group= supp-group= whitelist-environment= help version",
		effects: map[string]effect{"c": effString, "command": effString, "session-command": effString}},
	"ssh": {runsAs: true, inner: innerJoined, operands: 1, short: "46AaCfGgKkMNnqsTtVvXxYyB:b:c:D:E:e:F:I:i:J:L:l:m:O:o:P:p:Q:R:S:W:w:"},
}

// optUse is one option found on a wrapper's command line.
type optUse struct {
	name  string // the short letter or the full long name
	value string
	has   bool // a value was given
	dyn   bool // the value is computed at run time
	eff   effect
}

// wrapParse is a wrapper's command line as getopt_long reads it.
type wrapParse struct {
	opts      []optUse
	assigns   []string // NAME of each NAME=VALUE (env)
	operands  []int    // indexes of the operands
	cmd       int      // index of the inner command; len(words) when there is none
	unknown   string   // the first option the table does not know, for people
	unknownAt int
}

func (s *wrapSpec) shortArg(c byte) (argKind, bool) {
	i := strings.IndexByte(s.short, c)
	if i < 0 || c == ':' {
		return 0, false
	}
	switch {
	case strings.HasPrefix(s.short[i+1:], "::"):
		return optArg, true
	case strings.HasPrefix(s.short[i+1:], ":"):
		return reqArg, true
	}
	return noArg, true
}

type argKind uint8

const (
	noArg argKind = iota
	reqArg
	optArg
)

// longOpt resolves a long option name, or an unambiguous abbreviation of one, as getopt_long
// does; ok is false for an unknown or ambiguous name.
func (s *wrapSpec) longOpt(name string) (full string, k argKind, ok bool) {
	if name == "" {
		return "", 0, false
	}
	n := 0
	for _, f := range strings.Fields(s.long) {
		base := strings.TrimRight(f, "=:")
		kind := noArg
		switch {
		case strings.HasSuffix(f, "::"):
			kind = optArg
		case strings.HasSuffix(f, "="):
			kind = reqArg
		}
		if base == name {
			return base, kind, true
		}
		if strings.HasPrefix(base, name) {
			n++
			full, k = base, kind
		}
	}
	return full, k, n == 1
}

// parse reads w (w.s[0] is the wrapper) as the wrapper's getopt_long does.
func (s *wrapSpec) parse(w words) wrapParse {
	p := wrapParse{cmd: len(w.s)}
	fail := func(i int, why string) {
		if p.unknown == "" {
			p.unknown, p.unknownAt = why, i
		}
	}
	i := 1
	for i < len(w.s) {
		str, ok := w.lit(i)
		if out := w.outAt(i); !ok && out != nil && !out.dyn && !strings.HasPrefix(strings.TrimSpace(out.text), "-") {
			break // eval "$(echo cmd)": what the substitution writes, which is no option
		}
		switch {
		case !ok:
			fail(i, "a word computed at run time where an option may be")
			i++
			continue
		case str == "--":
			i++
			goto operands
		case str == "-" && s.dashOpt:
			p.opts = append(p.opts, optUse{name: "-"})
			i++
			continue
		case strings.HasPrefix(str, "--"):
			i = s.parseLong(w, i, str, &p, fail)
			continue
		case len(str) > 1 && str[0] == '-':
			i = s.parseShort(w, i, str, &p, fail)
			continue
		}
		if s.assigns && ok {
			if eq := strings.IndexByte(str, '='); eq > 0 && isName(str[:eq]) {
				p.assigns = append(p.assigns, str[:eq])
				i++
				continue
			}
		}
		if s.permute && len(p.operands) < s.operands+1 {
			p.operands = append(p.operands, i)
			i++
			continue
		}
		break
	}
operands:
	for len(p.operands) < s.operands && i < len(w.s) {
		p.operands = append(p.operands, i)
		i++
	}
	if s.assigns {
		for i < len(w.s) {
			str, ok := w.lit(i)
			eq := strings.IndexByte(str, '=')
			if !ok || eq <= 0 || !isName(str[:eq]) {
				break
			}
			p.assigns = append(p.assigns, str[:eq])
			i++
		}
	}
	p.cmd = i
	return p
}

func (s *wrapSpec) parseLong(w words, i int, str string, p *wrapParse, fail func(int, string)) int {
	name, val, hasEq := strings.Cut(str[2:], "=")
	full, k, ok := s.longOpt(name)
	if !ok {
		fail(i, "an option it does not know or cannot tell apart ("+str+")")
		return i + 1
	}
	u := optUse{name: full, eff: s.effects[full]}
	switch {
	case hasEq && k == noArg:
		fail(i, "a value for an option that takes none ("+str+")")
	case hasEq:
		u.value, u.has = val, true
	case k == reqArg:
		i++
		if i < len(w.s) {
			u.value, u.has = w.s[i], true
			u.dyn = w.dyn[i]
		}
	}
	p.opts = append(p.opts, u)
	return i + 1
}

func (s *wrapSpec) parseShort(w words, i int, str string, p *wrapParse, fail func(int, string)) int {
	c := str[1:]
	if s.numeric && isDigits(c) {
		p.opts = append(p.opts, optUse{name: "n", value: c, has: true})
		return i + 1
	}
	for j := 0; j < len(c); j++ {
		k, ok := s.shortArg(c[j])
		if !ok {
			fail(i, "an option it does not know (-"+string(c[j])+" in "+str+")")
			return i + 1
		}
		name := string(c[j])
		u := optUse{name: name, eff: s.effects[name]}
		switch k {
		case reqArg:
			if j+1 < len(c) {
				u.value, u.has = c[j+1:], true
			} else if i+1 < len(w.s) {
				i++
				u.value, u.has, u.dyn = w.s[i], true, w.dyn[i]
			}
			p.opts = append(p.opts, u)
			return i + 1
		case optArg:
			u.value, u.has = c[j+1:], j+1 < len(c)
			p.opts = append(p.opts, u)
			return i + 1
		}
		p.opts = append(p.opts, u)
	}
	return i + 1
}

func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// wrap adds the parts of a wrapper's command line: the wrapper itself (seen by deny and ask
// rules only, unless it runs nothing or is not understood) and the command it runs.
func (a *analyzer) wrap(c *cctx, spec *wrapSpec, w words, base string) {
	p := spec.parse(w)
	if p.unknown != "" {
		a.unknownWrapper(c, w, base, p)
		return
	}
	in := *c
	in.depth++
	for _, o := range p.opts {
		a.optEffect(&in, o, base)
		switch o.eff {
		case effLookup:
			a.part(c, w, false)
			return
		case effSplit:
			pt := a.part(c, w, false)
			pt.addFlag(FlagOpaque, base+" -S splits a string into a command")
			a.splitString(&in, o.value, w, p.cmd)
			return
		case effString:
			if !o.dyn {
				str := o.value
				if p.cmd < len(w.s) {
					if rest, ok := joinLit(w, p.cmd); ok {
						str += " " + rest
					}
				}
				a.part(c, w, spec.runsAs && c.denyOnly)
				in.denyOnly = in.denyOnly || spec.runsAs
				a.source(str, &in)
				if spec.runsAs {
					a.last().DenyOnly = c.denyOnly
				}
				return
			}
			pt := a.part(c, w, false)
			pt.addFlag(FlagOpaque, base+" runs a command string computed at run time")
			return
		}
	}
	var argv []string // the inner command's first words, when literal (for goTargetHarmless)
	for i := p.cmd; i < len(w.s) && i < p.cmd+2; i++ {
		s, ok := w.lit(i)
		if !ok {
			break
		}
		argv = append(argv, s)
	}
	for _, name := range p.assigns {
		if dangerousEnv(name) && !goTargetHarmless(name, argv) {
			in.flag(FlagEnv, "assigns "+name)
		}
	}
	if spec.runsAs {
		// privilege is never granted by a rule about the inner command: the argv as written
		// must be allowed, and the inner command is still seen by deny and ask rules
		a.part(c, w, false).Flags |= in.fl &^ c.fl
		in.denyOnly = true
	}
	a.inner(c, &in, spec, w, p, base)
}

// inner adds the parts of the command a wrapper runs.
func (a *analyzer) inner(c, in *cctx, spec *wrapSpec, w words, p wrapParse, base string) {
	own := !spec.runsAs
	switch spec.inner {
	case innerNone:
		if own {
			a.part(c, w, true)
		}
	case innerJoined:
		argv := false
		for _, o := range p.opts {
			argv = argv || o.eff == effArgv
		}
		if argv {
			a.argvInner(c, in, w, p.cmd, own)
			return
		}
		if p.cmd >= len(w.s) {
			a.part(c, w, false)
			return
		}
		str, ok := joinLit(w, p.cmd)
		if !ok {
			if str, ok := joinOut(w, p.cmd); ok {
				// eval "$(echo ...)": what the substitution writes runs
				if own {
					a.part(c, w, true)
				}
				a.source(str, in)
				return
			}
			pt := a.part(c, w, false)
			pt.addFlag(FlagOpaque, base+" of a string computed at run time")
			return
		}
		if own {
			a.part(c, w, true)
		}
		a.source(str, in)
	case innerXargs:
		a.xargs(c, in, w, p, own)
	case innerFlock:
		if p.cmd < len(w.s) {
			if s, ok := w.lit(p.cmd); ok && (s == "-c" || s == "--command") && p.cmd+1 < len(w.s) {
				if str, ok := w.lit(p.cmd + 1); ok {
					a.part(c, w, true)
					a.source(str, in)
					return
				}
				pt := a.part(c, w, false)
				pt.addFlag(FlagOpaque, base+" -c runs a command string computed at run time")
				return
			}
		}
		a.argvInner(c, in, w, p.cmd, own)
	default:
		a.argvInner(c, in, w, p.cmd, own)
	}
}

func (a *analyzer) argvInner(c, in *cctx, w words, at int, own bool) {
	if at >= len(w.s) {
		if own {
			pt := a.part(c, w, false)
			pt.Flags |= in.fl &^ c.fl
			if pt.Why == "" {
				pt.Why = in.why
			}
		}
		return
	}
	if own {
		a.part(c, w, true)
	}
	a.command(in, w.from(at))
}

// optEffect applies what an option does to the inner command's context.
func (a *analyzer) optEffect(in *cctx, o optUse, base string) {
	switch o.eff {
	case effChdir:
		in.chdir = true
		in.flag(FlagOpaque, "runs in another directory ("+base+" "+o.name+"), where its relative paths point elsewhere")
	case effUnset:
		if o.dyn || dangerousEnv(o.value) {
			in.flag(FlagEnv, "removes "+o.value+" from the environment")
		}
	case effOutput:
		out := o.value
		if o.dyn {
			out = "a file named at run time"
		}
		in.flag(FlagRedirect, "writes "+base+"'s report to "+out)
		in.outputs = append(in.outputs, pathWord{s: o.value, dyn: o.dyn})
	case effArgFile:
		in.inputs = append(in.inputs, pathWord{s: o.value, dyn: o.dyn})
	}
}

// unknownWrapper handles a wrapper given an option the table does not know: no rule allows
// it, and deny and ask rules see every command it might run.
func (a *analyzer) unknownWrapper(c *cctx, w words, base string, p wrapParse) {
	pt := a.part(c, w, false)
	pt.addFlag(FlagOpaque, base+" is given "+p.unknown)
	in := *c
	in.denyOnly = true
	in.depth++
	tries := 0
	for j := p.unknownAt + 1; j < len(w.s) && tries < 8; j++ {
		if s, ok := w.lit(j); ok && strings.HasPrefix(s, "-") {
			continue
		}
		tries++
		a.command(&in, w.from(j))
		if s, ok := w.lit(j); ok && strings.ContainsAny(s, " ;|&") {
			a.source(s, &in)
		}
	}
}

// splitString judges the string of env -S as a command (deny and ask rules only).
func (a *analyzer) splitString(in *cctx, str string, w words, rest int) {
	if r, ok := joinLit(w, rest); ok && rest < len(w.s) {
		str += " " + r
	}
	in.denyOnly = true
	a.source(str, in)
}

func (a *analyzer) xargs(c, in *cctx, w words, p wrapParse, own bool) {
	rep := ""
	for _, o := range p.opts {
		if o.eff == effReplace {
			rep = "{}"
			if o.has {
				rep = o.value
			}
		}
	}
	if own {
		a.part(c, w, true)
	}
	inner := words{}
	if p.cmd >= len(w.s) {
		inner.push("echo", false, "")
	} else {
		inner = w.from(p.cmd)
		inner = words{s: append([]string{}, inner.s...), dyn: append([]bool{}, inner.dyn...), why: append([]string{}, inner.why...)}
	}
	if rep != "" {
		// -I {}: the input replaces {} in the words instead of being appended
		for j := range inner.s {
			if !inner.dyn[j] && strings.Contains(inner.s[j], rep) {
				inner.s[j], inner.dyn[j], inner.why[j] = "", true, "has "+rep+" replaced with xargs's input"
			}
		}
	} else {
		inner.push("", true, "xargs appends arguments read from its input")
	}
	a.command(in, inner)
}

// joinOut joins the words from i like joinLit, with what each substitution among them writes
// in its place; false when a word is computed otherwise.
func joinOut(w words, i int) (string, bool) {
	var b strings.Builder
	for j := i; j < len(w.s); j++ {
		s, ok := w.lit(j)
		if !ok {
			out := w.outAt(j)
			if out == nil || out.dyn {
				return "", false
			}
			s = out.text
		}
		if j > i {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	return b.String(), true
}
