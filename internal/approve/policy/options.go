package policy

import (
	"strings"
)

// riskKind is what a program's option does that an allow rule must say it means.
type riskKind uint8

const (
	riskRuns    riskKind = iota + 1 // runs another program, or code named on the command line
	riskChdir                       // runs in another directory, or reads its build from elsewhere
	riskWrites                      // writes, moves or deletes files it names
	riskFollows                     // follows symbolic links, out of the tree
)

func (k riskKind) String() string {
	switch k {
	case riskRuns:
		return "runs other programs"
	case riskChdir:
		return "changes directory"
	case riskWrites:
		return "writes files"
	case riskFollows:
		return "follows symbolic links"
	}
	return ""
}

// riskyOpt is one option that runs other programs, changes directory or writes files.
type riskyOpt struct {
	names  string   // spellings, space-separated: -C --directory (getopt); -o (go: also --o, -o=v); -name* is a prefix
	kind   riskKind // what it does
	global bool     // only before the subcommand (git -C, -c, -p)
	sub    string   // only after these subcommands, space-separated ("" any)
	spells []string // names, split
}

func init() {
	for _, s := range programOptions {
		for i := range s.opts {
			s.opts[i].spells = strings.Fields(s.opts[i].names)
		}
	}
}

// optStyle is how a program reads its options.
type optStyle uint8

const (
	// styleGetopt: GNU getopt_long: -abc clusters, -fVALUE or -f VALUE, --name, --name=v or
	// --name v, any unambiguous abbreviation of a long name, options anywhere before --.
	styleGetopt optStyle = iota
	// styleGo: Go's flag package: -name, --name, -name=v, -name v; no clusters, no
	// abbreviations. Every word of the line is read (go test takes flags after the packages,
	// and the test binary's -test.* after -args); -test.name is -name.
	styleGo
	// styleWords: whole words, anywhere (find's -fprint, -delete).
	styleWords
)

// progSpec is a row of programOptions: how a program reads its options and which of them run
// other programs, change directory or write files.
type progSpec struct {
	style optStyle
	// values are the short options that take a value (getopt): the rest of the cluster or the
	// next word is the value, never more options.
	values string
	opts   []riskyOpt
	// safeLong are long names that begin like a risky one but are options of their own (git
	// --text is not an abbreviation of --textconv).
	safeLong string
	// subcmd: the first operand is a subcommand; options before it are global (git).
	subcmd bool
	// assigns: NAME=VALUE operands set variables of the program (make CC=./x, SHELL=..., MAKEFLAGS=...).
	assigns bool
	// writesOperand: the operand at this position (1-based) is a file the program writes (uniq IN OUT).
	writesOperand int
	// atFile: @FILE reads more arguments from FILE (pytest).
	atFile bool
	// oldStyle: the first argument is a cluster of short options even without a - (tar xf a.tar).
	oldStyle bool
	// afterDashDash: the words after -- are read too (cargo test -- --logfile: the test binary's).
	afterDashDash bool
}

// programOptions is the one table of the program options that run other programs, change
// directory or write files. An allow rule never matches a command using one of them unless its
// pattern names that word, or its allow_options lists the option; lint reads it too.
var programOptions = map[string]*progSpec{
	"make": {values: "CEfIoW", assigns: true, opts: []riskyOpt{
		{names: "-C --directory", kind: riskChdir},
		{names: "-f --file --makefile", kind: riskRuns},
		{names: "-I --include-dir", kind: riskRuns},
		{names: "-E --eval", kind: riskRuns},
	}},
	"git": {subcmd: true, values: "CcSGnLeo", safeLong: "text", opts: []riskyOpt{
		{names: "-C", kind: riskChdir, global: true},
		{names: "-c --config-env", kind: riskRuns, global: true},
		{names: "--exec-path --git-dir --work-tree --namespace --super-prefix --attr-source", kind: riskRuns, global: true},
		{names: "-p --paginate", kind: riskRuns, global: true},
		{names: "--ext-diff --textconv", kind: riskRuns},
		{names: "--output --output-directory", kind: riskWrites},
		{names: "--upload-pack --receive-pack --exec", kind: riskRuns},
		{names: "-O --open-files-in-pager", kind: riskRuns, sub: "grep"},
		{names: "-o", kind: riskWrites, sub: "format-patch archive"},
	}},
	"go": {style: styleGo, opts: []riskyOpt{
		{names: "-exec -toolexec -vettool -overlay -modfile -ldflags -gcflags -asmflags -gccgoflags -compiler", kind: riskRuns},
		{names: "-C", kind: riskChdir},
		{names: "-o -pkgdir -coverprofile -cpuprofile -memprofile -blockprofile -mutexprofile -trace -outputdir -testlogfile -gocoverdir -fuzzcachedir -debug-actiongraph -debug-trace -debug-runtime-trace", kind: riskWrites},
		{names: "-w -u", kind: riskWrites, sub: "env"},
	}},
	"gofmt":       {style: styleGo, opts: []riskyOpt{{names: "-w -r", kind: riskWrites}, {names: "-cpuprofile", kind: riskWrites}}},
	"staticcheck": {style: styleGo, opts: []riskyOpt{{names: "-debug.*", kind: riskWrites}}},
	"find": {style: styleWords, opts: []riskyOpt{
		{names: "-fprint -fprint0 -fprintf -fls -delete", kind: riskWrites},
		{names: "-L -H -follow", kind: riskFollows},
	}},
	"sort": {values: "kStTo", opts: []riskyOpt{
		{names: "-o --output -T --temporary-directory", kind: riskWrites},
		{names: "--compress-program", kind: riskRuns},
	}},
	"uniq": {values: "fsw", writesOperand: 2},
	"tree": {values: "LPIoHT", opts: []riskyOpt{{names: "-o -R", kind: riskWrites}}},
	"tar": {values: "fCbgHIKLNTVX", oldStyle: true, opts: []riskyOpt{
		{names: "--to-command -I --use-compress-program --checkpoint-action -F --info-script --new-volume-script --rsh-command --rmt-command", kind: riskRuns},
		{names: "-C --directory", kind: riskChdir},
		{names: "-x --extract --get -c --create -r --append -u --update -A --catenate --delete -f --file", kind: riskWrites},
	}},
	"rg": {values: "ABCEefgjMmrTtd", opts: []riskyOpt{
		{names: "--pre --pre-glob -z --search-zip --hostname-bin", kind: riskRuns},
	}},
	"file": {values: "emFfP", opts: []riskyOpt{{names: "-C --compile", kind: riskWrites}}},
	"cargo": {values: "pjZFC", afterDashDash: true, opts: []riskyOpt{
		{names: "--config -Z", kind: riskRuns},
		{names: "-C --manifest-path", kind: riskChdir},
		{names: "--target-dir --artifact-dir --out-dir --logfile", kind: riskWrites},
	}},
	"npm": {values: "wC", opts: []riskyOpt{
		{names: "-C --prefix -w --workspace --workspaces", kind: riskChdir},
		{names: "--script-shell --shell --userconfig --globalconfig --node-options --call", kind: riskRuns},
		{names: "--cache", kind: riskWrites},
	}},
	"pytest": pytestSpec, "python -m pytest": pytestSpec, "python3 -m pytest": pytestSpec,
}

var pytestSpec = &progSpec{values: "kmrWnpco", atFile: true, opts: []riskyOpt{
	{names: "-p -c --config-file -o --override-ini --inifile --rootdir --confcutdir --pdbcls", kind: riskRuns},
	{names: "--basetemp --junitxml --junit-xml --result-log --report-log --debug --log-file --pastebin", kind: riskWrites},
}}

// riskyUse is a word of a command line that uses a risky option.
type riskyUse struct {
	at    int       // the word
	opt   *riskyOpt // nil: an assignment, an operand or @FILE
	spell string    // the option as the table spells it, or the word
	kind  riskKind
}

// spec returns the row for a part and the index of its first argument.
func specFor(p *Part) (*progSpec, int) {
	if len(p.Words) == 0 || p.dyn(0) {
		return nil, 0
	}
	if s := programOptions[p.Name]; s != nil {
		return s, 1
	}
	if len(p.Words) >= 3 && !p.dyn(1) && !p.dyn(2) {
		if s := programOptions[p.Name+" "+p.Words[1]+" "+p.Words[2]]; s != nil {
			return s, 3
		}
	}
	return nil, 0
}

// riskyUses lists the words of p that use an option of programOptions (computed once).
func (p *Part) riskyUses() []riskyUse {
	if p.riskyDone {
		return p.risky
	}
	p.riskyDone = true
	s, start := specFor(p)
	if s == nil {
		return nil
	}
	switch s.style {
	case styleGo:
		p.risky = s.goUses(p, start)
	case styleWords:
		p.risky = s.wordUses(p, start)
	default:
		p.risky = s.getoptUses(p, start)
	}
	return p.risky
}

// applies: global options only before the subcommand, others only after their subcommands.
func (o *riskyOpt) applies(sub string, global bool) bool {
	if o.global && !global {
		return false
	}
	return o.sub == "" || hasField(o.sub, sub)
}

// hasField reports whether s is one of the space-separated words of list.
func hasField(list, s string) bool {
	for list != "" {
		var f string
		f, list, _ = strings.Cut(list, " ")
		if f == s {
			return true
		}
	}
	return false
}

// goName is a Go flag's name: -name, --name, -name=v; -test.name is name.
func goName(w string) (string, bool) {
	if len(w) < 2 || w[0] != '-' || w == "--" {
		return "", false
	}
	n := strings.TrimPrefix(strings.TrimPrefix(w, "-"), "-")
	n, _, _ = strings.Cut(n, "=")
	return strings.TrimPrefix(n, "test."), n != ""
}

func (s *progSpec) goUses(p *Part, start int) []riskyUse {
	var out []riskyUse
	sub := ""
	for i := start; i < len(p.Words); i++ {
		if p.dyn(i) {
			continue
		}
		name, ok := goName(p.Words[i])
		if !ok {
			if sub == "" {
				sub = p.Words[i]
			}
			continue
		}
		for k := range s.opts {
			o := &s.opts[k]
			if o.sub != "" && !hasField(o.sub, sub) {
				continue
			}
			for _, f := range o.spells {
				f = strings.TrimPrefix(f, "-")
				if f == name || strings.HasSuffix(f, "*") && strings.HasPrefix(name, strings.TrimSuffix(f, "*")) {
					out = append(out, riskyUse{at: i, opt: o, spell: "-" + f, kind: o.kind})
				}
			}
		}
	}
	return out
}

func (s *progSpec) wordUses(p *Part, start int) []riskyUse {
	var out []riskyUse
	for i := start; i < len(p.Words); i++ {
		for k := range s.opts {
			o := &s.opts[k]
			if !p.dyn(i) && hasField(o.names, p.Words[i]) {
				out = append(out, riskyUse{at: i, opt: o, spell: p.Words[i], kind: o.kind})
			}
		}
	}
	return out
}

// getoptUses reads the words as getopt_long does, conservatively: a letter of a cluster the
// table does not know may be an option; an abbreviation of a risky long name is that option.
func (s *progSpec) getoptUses(p *Part, start int) []riskyUse {
	var out []riskyUse
	sub, global, operands, dashed := "", s.subcmd, 0, false
	for i := start; i < len(p.Words); i++ {
		if p.dyn(i) {
			continue
		}
		w := p.Words[i]
		switch {
		case dashed || w == "-" || !strings.HasPrefix(w, "-"):
			if w == "--" && s.afterDashDash {
				continue
			}
			if i == start && s.oldStyle && !dashed {
				i = s.shortUses(p, i, "-"+w, sub, global, &out)
				continue
			}
			operands++
			switch {
			case global:
				sub, global = w, false
			case s.assigns && strings.Contains(w, "=") && !strings.HasPrefix(w, "="):
				out = append(out, riskyUse{at: i, spell: w[:strings.IndexByte(w, '=')+1], kind: riskRuns})
			case s.writesOperand == operands:
				out = append(out, riskyUse{at: i, spell: w, kind: riskWrites})
			case s.atFile && strings.HasPrefix(w, "@"):
				out = append(out, riskyUse{at: i, spell: "@", kind: riskRuns})
			}
		case w == "--":
			dashed = !s.afterDashDash
		case strings.HasPrefix(w, "--"):
			i = s.longUses(p, i, w, sub, global, &out)
		default:
			i = s.shortUses(p, i, w, sub, global, &out)
		}
	}
	return out
}

func (s *progSpec) longUses(p *Part, i int, w, sub string, global bool, out *[]riskyUse) int {
	name, _, hasEq := strings.Cut(w[2:], "=")
	if name == "" || hasField(s.safeLong, name) {
		return i
	}
	for k := range s.opts {
		o := &s.opts[k]
		if !o.applies(sub, global) {
			continue
		}
		for _, f := range o.spells {
			if strings.HasPrefix(f, "--") && strings.HasPrefix(f[2:], name) {
				*out = append(*out, riskyUse{at: i, opt: o, spell: f, kind: o.kind})
				if !hasEq && i+1 < len(p.Words) && !strings.HasPrefix(p.Words[i+1], "-") {
					return i + 1 // its value
				}
				return i
			}
		}
	}
	return i
}

func (s *progSpec) shortUses(p *Part, i int, w, sub string, global bool, out *[]riskyUse) int {
	for j := 1; j < len(w); j++ {
		c := w[j]
		for k := range s.opts {
			o := &s.opts[k]
			if o.applies(sub, global) && hasField(o.names, "-"+string(c)) {
				*out = append(*out, riskyUse{at: i, opt: o, spell: "-" + string(c), kind: o.kind})
			}
		}
		if strings.IndexByte(s.values, c) >= 0 {
			if j == len(w)-1 && i+1 < len(p.Words) && !strings.HasPrefix(p.Words[i+1], "-") {
				return i + 1 // the next word is its value
			}
			break
		}
	}
	return i
}

// optionAllowed reports whether spelling (as a rule's allow_options writes it) names the
// option of use.
func (s *progSpec) optionAllowed(u riskyUse, spellings []string) bool {
	for _, sp := range spellings {
		switch {
		case u.opt == nil:
			if sp == u.spell {
				return true
			}
		case s.style == styleGo:
			if n, ok := goName(sp); ok && "-"+n == u.spell {
				return true
			}
		case hasField(u.opt.names, sp):
			return true
		}
	}
	return false
}
