package policy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fuseraft/fr/pkg/wire"
)

// Finding is one lint message about a policy, at a line.
type Finding struct {
	Line int
	Rule string
	Msg  string
}

// Lint looks for rules that can never decide and allow rules broader than they look.
func Lint(p *Policy) []Finding {
	var out []Finding
	add := func(line int, rule, format string, args ...any) {
		out = append(out, Finding{Line: line, Rule: rule, Msg: fmt.Sprintf(format, args...)})
	}
	for _, r := range p.Rules {
		for _, s := range p.Rules {
			if s == r || !covers(s, r) {
				continue
			}
			if s.Decision > r.Decision {
				add(r.Line, r.Name, "rule %q can never decide: the stricter rule %q (line %d, %s) matches whenever it does",
					r.Name, s.Name, s.Line, s.Decision)
				break
			}
			if s.Decision == r.Decision && s.index < r.index {
				add(r.Line, r.Name, "rule %q can never decide: rule %q (line %d) comes first with the same decision and matches whenever it does",
					r.Name, s.Name, s.Line)
				break
			}
		}
		if r.Kind != "" && !isKnownKind(r.Kind) {
			add(r.Line, r.Name, "rule %q names kind %q, which fr-approve does not know: a typo? (a kind fuseraft adds later is fine to name)", r.Name, r.Kind)
		}
		if r.Decision == Allow {
			lintAllow(r, add)
		}
	}
	for _, q := range p.Questions {
		if q.Answer == "text" && strings.TrimSpace(q.Text) == "" {
			add(q.Line, q.Name, "question rule %q answers with empty text; use skip: true to skip", q.Name)
		}
	}
	lintProbes(p, add)
	lintConditions(p, add)
	lintAcceptedOptions(p, add)
	lintUnknownOptions(p, add)
	if len(p.Tests) == 0 {
		add(0, "", "the policy has no tests: add a few under tests: and run 'fr-approve test'")
	}
	return out
}

// runsAnything names commands that, with the right arguments, run arbitrary code or change
// anything; an allow pattern of the bare name accepts those arguments too.
var runsAnything = map[string]string{
	"git": "git push --force or git reset --hard", "go": "go run or go generate",
	"npm": "npm exec or npm run", "npx": "npx any-package", "yarn": "yarn run", "pnpm": "pnpm exec",
	"make": "make deploy (any target)", "find": "find / (any directory)", "sed": "sed -i or sed e",
	"awk": "awk 'BEGIN{system(...)}'", "tar": "tar tf of any archive", "docker": "docker run --privileged",
	"kubectl": "kubectl delete", "ssh": "ssh host cmd", "python": "python -c", "python3": "python3 -c",
	"node": "node -e", "perl": "perl -e", "ruby": "ruby -e", "cargo": "cargo run", "pip": "pip install",
	"curl": "curl -o or curl | sh", "wget": "wget -O", "rsync": "rsync --delete", "cp": "cp over any file",
	"mv": "mv over any file", "chmod": "chmod -R 777 /", "dd": "dd of=/dev/sda", "gh": "gh repo delete",
	"sh": "sh script.sh or sh reading any script", "bash": "bash script.sh or bash reading any script",
	"zsh": "zsh script.sh", "terraform": "terraform destroy", "helm": "helm uninstall", "aws": "aws s3 rm", "gcloud": "gcloud ... delete",
}

// probes are commands that look like an allowed command's harmless use but run a program of
// the caller's choosing or write outside the project. A policy that allows `go test` by
// prefix allows `go test -toolexec=./x` too, unless a deny rule says otherwise.
var probes = []struct{ cmd, why string }{
	{"go test -exec=./x ./...", "go test -exec runs the test binary through another program"},
	{"go test -toolexec=./x ./...", "-toolexec runs every compiler and linker step through another program"},
	{"go build -toolexec=./x ./...", "-toolexec runs every compiler and linker step through another program"},
	{"go vet -vettool=./x ./...", "go vet -vettool runs another program as the analyser"},
	{"go build -ldflags=-extld=./x ./...", "-ldflags=-extld runs another program as the linker"},
	{"go build -o /etc/x ./...", "go build -o writes the binary anywhere"},
	{"go test -coverprofile=/etc/x ./...", "go test's profile flags write files anywhere"},
	{"go test ./... -args -test.testlogfile=/etc/x", "the test binary's -test. flags write files anywhere"},
	{"go build -o .git/hooks/pre-commit ./...", "go build -o writes into .git, where a hook runs at the next commit"},
	{"go test -coverprofile=.github/workflows/ci.yml ./...", "go test's profile flags overwrite CI configuration"},
	{"go test -c -o Makefile ./...", "go test -c -o overwrites any file in the module"},
	{"go build -C /tmp -o x .", "go -C runs in another directory, and -o then writes there"},
	{"go test -C .. ./...", "go -C runs in another directory"},
	{"gofmt -l -w /etc/x.go", "gofmt -w rewrites the files it lists"},
	{"gofmt -d -w /etc/x.go", "gofmt -w rewrites the files it diffs"},
	{"gofmt -l -cpuprofile /etc/x .", "gofmt -cpuprofile writes a file anywhere"},
	{"go env -w GOFLAGS=-toolexec=./x", "go env -w changes the settings of every later go command"},
	{"git diff --output=/etc/x", "git diff --output writes a file anywhere"},
	{"git log --output=/etc/x", "git log --output writes a file anywhere"},
	{"git show --output=/etc/x", "git show --output writes a file anywhere"},
	{"find . -name x -fprint /etc/x", "find -fprint writes a file anywhere"},
	{"find . -type f -fprint /etc/x", "find -fprint writes a file anywhere"},
	{"find . -path x -fprint /etc/x", "find -fprint writes a file anywhere"},
	{"sort -o /etc/x f", "sort -o writes a file anywhere"},
	{"sort --compress-program=./x f", "sort --compress-program runs another program"},
	{"uniq f /etc/x", "uniq writes its second operand"},
	{"tree -o /etc/x", "tree -o writes a file anywhere"},
	{"sed -i s/a/b/ /etc/x", "sed -i edits files in place"},
	{"sed -n 'e id' f", "sed's e command runs a shell command"},
	{"awk 'BEGIN{system(\"id\")}'", "awk's system() runs a shell command"},
	{"tar -xf a.tar --to-command=./x", "tar --to-command runs a program"},
	{"staticcheck -debug.cpuprofile=/etc/x ./...", "staticcheck's -debug flags write files anywhere"},
	{"rg --pre ./x x .", "rg --pre runs a program on every file it searches"},
	{"rg --pre=./x x .", "rg --pre runs a program on every file it searches"},
	{"rg -z x .", "rg -z runs decompression programs on compressed files"},
	{"rg --search-zip x .", "rg --search-zip runs decompression programs on compressed files"},
	{"rg --hostname-bin=./x x .", "rg --hostname-bin runs a program"},
	{"file -C -m /etc/x", "file -C writes a compiled magic file"},
	{"file --comp -m /etc/x", "file takes any unambiguous prefix of --compile"},
	{"sort --compress=./x -S 1 -T . f", "sort takes any unambiguous prefix of --compress-program"},
	{"sort --outp=/etc/x f", "sort takes any unambiguous prefix of --output, which writes a file anywhere"},
	{"go env -w=true GOFLAGS=-toolexec=./x", "go env -w=true is go env -w"},
	{"go env --w=true GOFLAGS=-toolexec=./x", "go env --w is go env -w"},
	{"tree -a -R -H . -L 1", "tree -R with -H writes 00Tree.html into every directory"},
	{"cargo test --config target.x86_64-unknown-linux-gnu.runner=./x", "cargo --config sets a runner that runs the test binaries"},
	{"cargo build --config build.rustc-wrapper=./x", "cargo --config sets a program that wraps rustc"},
	{"cargo build --target-dir=/etc/x", "cargo --target-dir writes anywhere"},
	{"cargo build -Z unstable-options --artifact-dir=/etc/x", "cargo -Z turns on unstable flags that write anywhere"},
	{"pytest --basetemp=.git", "pytest empties the --basetemp directory"},
	{"python -m pytest --basetemp=/etc/x", "pytest empties the --basetemp directory"},
	{"python3 -m pytest --basetemp=/etc/x", "pytest empties the --basetemp directory"},
	{"pytest --junitxml=/etc/x", "pytest --junitxml writes a file anywhere"},
	{"pytest -p x", "pytest -p imports any module as a plugin"},
	{"git branch --list --no-list -D main", "--no-list turns git branch --list back into deleting a branch"},
	{"cat /proc/self/environ", "reads the environment, and what a command prints is sent to the model"},
	{"cat ~/.ssh/id_rsa", "reads a private key, and what a command prints is sent to the model"},
	{"head ~/.aws/credentials", "reads credentials, and what a command prints is sent to the model"},
	{"grep -r TOKEN /etc", "reads system configuration, and what a command prints is sent to the model"},
	{"cat < ~/.ssh/id_rsa", "reads a private key through a redirection, and what a command prints is sent to the model"},
	{"grep -rsI AKIA /", "reads the whole file system from its root, and what a command prints is sent to the model"},
	{"git blame --contents /etc/shadow go.mod", "git blame --contents reads any file"},
	{"git diff --no-index /etc/shadow go.mod", "git diff --no-index compares any two files"},
	{"du --files0-from=/etc/x", "du --files0-from reads the names of files from any file"},
	{"go build -debug-actiongraph=/etc/x ./...", "go build -debug-actiongraph writes a file anywhere"},
	{"go build -debug-trace=/etc/x ./...", "go build -debug-trace writes a file anywhere"},
	{"go build -debug-runtime-trace=/etc/x ./...", "go build -debug-runtime-trace writes a file anywhere"},
}

// lintAcceptedOptions warns about the options of programOptions an allow rule accepts, by
// naming them in a pattern or in allow_options: their values are not judged unless a deny or
// ask rule with paths: inside_root covers the program (for an option that writes).
func lintAcceptedOptions(p *Policy, add func(int, string, string, ...any)) {
	guarded := map[string]bool{} // programs whose words a paths: inside_root deny or ask rule judges
	for _, r := range p.Rules {
		if r.Decision == Allow || r.Shell == nil || !r.Shell.InsideRoot || r.When != nil {
			continue
		}
		for _, c := range r.Shell.Commands {
			if w := c.Words[0]; w != nil && w.literal {
				guarded[w.Src] = true
			}
		}
		if len(r.Shell.Commands) == 0 {
			guarded["*"] = true
		}
	}
	for _, r := range p.Rules {
		if r.Decision != Allow || r.Shell == nil {
			continue
		}
		seen := map[string]bool{}
		for _, c := range r.Shell.Commands {
			line := c.Line
			if line == 0 {
				line = r.Line
			}
			for _, u := range acceptedOptions(c, r.Shell.Options) {
				prog := c.Words[0].Src
				key := prog + " " + u.spell
				if seen[key] || u.kind == riskWrites && (guarded[prog] || guarded["*"]) {
					continue
				}
				seen[key] = true
				advice := "spell out its value in the pattern, or leave it out"
				if u.kind == riskWrites {
					advice = "add a deny or ask rule with paths: inside_root for " + prog + ", or spell out its value in the pattern"
				}
				add(line, r.Name, "allow rule %q accepts %s %s, which %s, with any value; %s", r.Name, prog, u.spell, u.kind, advice)
			}
		}
	}
}

// lintUnknownOptions points at allow patterns of programs (or subcommands) whose options the
// table does not know: since options are an allow-list, such a pattern allows the program only
// with the options a word of a pattern or allow_options names, where it used to allow any. A
// pattern that spells out every word ($ at its end) is left alone.
func lintUnknownOptions(p *Policy, add func(int, string, string, ...any)) {
	for _, r := range p.Rules {
		if r.Decision != Allow || r.Shell == nil {
			continue
		}
		seen := map[string]bool{}
		for _, c := range r.Shell.Commands {
			prog, ok := unknownOptionsOf(c)
			if !ok || seen[prog] {
				continue
			}
			seen[prog] = true
			line := c.Line
			if line == 0 {
				line = r.Line
			}
			add(line, r.Name, "allow pattern %q: fr-approve does not know the options of %s, so it is allowed only with the options a word of the pattern or allow_options names (options are an allow-list; any used to pass)", c.Src, prog)
		}
	}
}

// unknownOptionsOf returns the program (with its subcommand) of a pattern whose options the
// table does not know, ok=false when it knows them or the pattern spells out every word.
func unknownOptionsOf(c *CmdPattern) (string, bool) {
	w0 := c.Words[0]
	if w0 == nil || !w0.literal {
		return "", false
	}
	spelled := c.Anchored
	var words []string
	for _, w := range c.Words[1:] {
		if w == nil || !w.literal {
			spelled = false
			break
		}
		words = append(words, w.Src)
	}
	if spelled {
		return "", false
	}
	probe := &Part{Name: w0.Src, Words: append([]string{w0.Src}, words...)}
	spec, start := specFor(probe)
	if spec == nil {
		return w0.Src, true
	}
	if sub, known := spec.knowsSub(probe.Words[start:]); !known {
		return w0.Src + " " + sub, true
	} else if sub == "" && spec.subcmd {
		return "", false // the pattern names no subcommand: the others are refused by the table
	}
	return "", false
}

// acceptedOptions lists the options of programOptions a pattern names with a word whose
// value is not spelled out, and those allow_options lists that the pattern's program has.
func acceptedOptions(c *CmdPattern, options []string) []riskyUse {
	w0 := c.Words[0]
	if w0 == nil || !w0.literal {
		return nil
	}
	probe := &Part{Name: w0.Src, Words: []string{w0.Src}}
	for _, w := range c.Words[1:] {
		if w == nil || !w.literal {
			probe.Words = append(probe.Words, "")
			continue
		}
		probe.Words = append(probe.Words, w.Src)
	}
	spec, _ := specFor(probe)
	if spec == nil {
		return nil
	}
	var out []riskyUse
	for _, u := range probe.riskyUses() {
		// -o bin/x: the value is spelled out in the next word or after =
		spelled := strings.Contains(probe.Words[u.at], "=") || u.at+1 < len(probe.Words) && probe.Words[u.at+1] != "" && u.opt != nil && len(probe.Words[u.at]) == len(u.spell)
		if !spelled {
			out = append(out, u)
		}
	}
	for _, d := range spec.riskyDefs() {
		for _, sp := range d.names {
			if spec.optionAllowed(riskyUse{opt: d, spell: goSpell(spec, sp)}, options) {
				out = append(out, riskyUse{opt: d, spell: sp, kind: d.risk})
				if spec.style != styleGo {
					break // one spelling of the option is enough
				}
			}
		}
	}
	return out
}

func goSpell(s *progSpec, sp string) string {
	if s.style == styleGo {
		return "-" + strings.TrimLeft(sp, "-")
	}
	return sp
}

// lintProbes reports each probe the policy allows, at the allowing rule.
func lintProbes(p *Policy, add func(int, string, string, ...any)) {
	// a root that is not / and does not exist: paths outside it are outside
	d, err := NewDecider(p, "/nonexistent-lint-root/project")
	if err != nil {
		return
	}
	lines := map[string]int{}
	for _, r := range p.Rules {
		lines[r.Name] = r.Line
	}
	for _, pr := range probes {
		ev, _ := json.Marshal(map[string]string{"type": wire.TypeApproval, "kind": wire.KindShellCommand, "command": pr.cmd})
		dec := d.Decide(ev)
		if dec.Verdict != Allow || dec.Decider != ByRule {
			continue
		}
		add(lines[dec.Rule], dec.Rule, "rule %q allows %q (%s); add a deny rule for it, or narrow the pattern", dec.Rule, pr.cmd, pr.why)
	}
}

func lintAllow(r *Rule, add func(int, string, string, ...any)) {
	lintAllowScope(r, add)
	if r.Shell != nil {
		if len(r.Shell.Commands) == 0 && r.When == nil {
			add(r.Line, r.Name, "allow rule %q allows every shell command", r.Name)
		}
		for _, c := range r.Shell.Commands {
			lintAllowPattern(r, c, add)
		}
		lintAllowPermits(r, add)
		lintAllowPaths(r, add)
	}
	if r.File != nil {
		for _, g := range r.File.Paths {
			if g == "**" || g == "**/*" {
				add(r.Line, r.Name, "allow path %q matches every file in the root, .git/hooks and CI configuration included", g)
			}
			if strings.HasPrefix(g, "/") {
				add(r.Line, r.Name, "allow path %q is absolute: it only allows paths inside the root (paths outside it are never allowed)", g)
			}
		}
	}
	if r.Tool != nil {
		lintAllowTool(r, add)
	}
	if r.Route != nil && r.Route.Source.MatchAll() && r.Route.Target.MatchAll() && r.When == nil {
		add(r.Line, r.Name, "allow rule %q matches every route", r.Name)
	}
}

// lintAllowScope warns about an allow rule whose kind and matchers leave it matching everything.
func lintAllowScope(r *Rule, add func(int, string, string, ...any)) {
	switch {
	case r.Kind == "":
		if r.When == nil {
			add(r.Line, r.Name, "allow rule %q has no kind and no matcher: it allows every shell command, file write, tool action and route", r.Name)
		} else {
			add(r.Line, r.Name, "allow rule %q has no kind: it allows every known kind of prompt its when condition accepts", r.Name)
		}
	case r.Shell == nil && r.Kind == "shell_command" && r.When == nil:
		add(r.Line, r.Name, "allow rule %q allows every shell command", r.Name)
	case r.Shell == nil && r.Kind == "shell_command":
		add(r.Line, r.Name, "allow rule %q has only a when condition, over the whole command line: when it holds, every simple command in the line is allowed (a test on .command also passes \"make; rm -rf ~\"); add shell: patterns", r.Name)
	case r.File == nil && r.Kind == "file_write" && r.When == nil:
		add(r.Line, r.Name, "allow rule %q allows every file write inside the root", r.Name)
	}
}

// lintAllowPattern warns about one allow pattern broader than it looks.
func lintAllowPattern(r *Rule, c *CmdPattern, add func(int, string, string, ...any)) {
	line := c.Line
	if line == 0 {
		line = r.Line
	}
	if c.Words[0] == nil || c.Words[0].MatchAll() {
		add(line, r.Name, "allow pattern %q matches any command name", c.Src)
		return
	}
	if !c.Words[0].literal {
		add(line, r.Name, "allow pattern %q matches command names by pattern (%s); name the commands", c.Src, c.Words[0].Src)
	}
	for _, w := range c.Words[1:] {
		if w == nil {
			add(line, r.Name, "allow pattern %q: ** accepts any arguments in between, including options such as --force", c.Src)
			break
		}
		if w.MatchAll() {
			add(line, r.Name, "allow pattern %q: %s accepts any argument, including paths outside the project and options", c.Src, w.Src)
			break
		}
	}
	if len(c.Words) == 1 && !c.Anchored && c.Words[0].literal {
		if ex, ok := runsAnything[c.Words[0].Src]; ok {
			add(line, r.Name, "allow pattern %q accepts any arguments, such as %s; list the subcommands you mean, or end the pattern with $", c.Src, ex)
		}
	}
}

// lintAllowPaths points at an allow rule whose meaning changed when paths became judged by
// default: one without a paths: (or protect:) key whose commands may name files, which it
// used to allow wherever they pointed.
func lintAllowPaths(r *Rule, add func(int, string, string, ...any)) {
	sm := r.Shell
	if sm.Anywhere {
		add(r.Line, r.Name, "allow rule %q sets paths: anywhere: the files its commands name are not judged (~/.ssh, /etc, /proc included); list the places instead (paths: [inside_root, /tmp/**])", r.Name)
	}
	if sm.PathsKey {
		return
	}
	example := ""
	switch {
	case sm.Permit&FlagExpansion != 0 || sm.Constructs&expansionConstructs != 0:
		example = "a computed word or a glob"
	case sm.Permit&FlagRedirect != 0:
		example = "a redirection to a file outside the root"
	}
	fewest := 0
	for _, c := range sm.Commands {
		if example != "" && (fewest == 0 || len(c.Words) >= fewest) {
			continue
		}
		if c.Words[0] == nil || !c.Words[0].literal || nonFileWords[c.Words[0].Src] && len(c.Words) == 1 {
			continue
		}
		literal := true
		for _, w := range c.Words[1:] {
			if w == nil || !w.literal {
				literal = false
			}
		}
		if !c.Anchored || !literal {
			fewest = len(c.Words)
			example = fmt.Sprintf("%q", strings.TrimSuffix(c.Src, " $")+" /etc/passwd")
			if !literal || c.Anchored {
				example = fmt.Sprintf("%q with a path outside the root", c.Src)
			}
		}
	}
	if example == "" {
		return
	}
	add(r.Line, r.Name, "allow rule %q has no paths: key, and paths are now judged by default: it allows a command only when every file it names lies inside the root, no longer %s; write paths: inside_root to say so, or paths: anywhere (or a list such as [inside_root, /tmp/**]) for the old meaning", r.Name, example)
}

// lintAllowPermits names the permissions an allow rule gives.
func lintAllowPermits(r *Rule, add func(int, string, string, ...any)) {
	for _, f := range []struct {
		flag Flag
		name string
	}{{FlagRedirect, "allow_redirects (writes to any file)"}, {FlagExpansion, "allow_expansions ($VAR, $(cmd) and globs in arguments)"},
		{FlagUnparsable, "allow_unparsable (commands fr-approve cannot read)"}, {FlagEnv, "allow_env (PATH, LD_PRELOAD and the like)"}} {
		if r.Shell.Permit&f.flag != 0 {
			add(r.Line, r.Name, "allow rule %q sets %s", r.Name, f.name)
		}
	}
}

func lintAllowTool(r *Rule, add func(int, string, string, ...any)) {
	if r.Tool.Plugin.MatchAll() && r.When == nil {
		add(r.Line, r.Name, "allow rule %q matches every plugin", r.Name)
	}
	for _, ps := range []Patterns{r.Tool.Plugin, r.Tool.Action, r.Tool.Detail} {
		for _, pt := range ps {
			if pt.IsRegex && !strings.HasPrefix(pt.re.String(), "^") {
				add(r.Line, r.Name, "allow pattern %s is a regular expression without ^: it matches anywhere in the text", pt.Src)
			}
		}
	}
}

// covers reports whether rule s surely matches every prompt rule r matches (a conservative
// check: false when unsure).
func covers(s, r *Rule) bool {
	if s.When != nil || s.Limit != nil {
		return false
	}
	if s.Kind != "" && s.Kind != r.Kind {
		return false
	}
	if s.Kind == "" && r.Kind != "" && !isKnownKind(r.Kind) && s.Decision == Allow {
		return false // a wildcard allow does not reach unknown kinds
	}
	switch {
	case s.Shell != nil:
		return r.Shell != nil && coversShell(s.Decision, s.Shell, r.Shell)
	case s.File != nil:
		return r.File != nil && coversFile(s.File, r.File)
	case s.Tool != nil:
		return r.Tool != nil && coversPatterns(s.Tool.Plugin, r.Tool.Plugin) && coversPatterns(s.Tool.Action, r.Tool.Action) && coversPatterns(s.Tool.Detail, r.Tool.Detail)
	case s.Route != nil:
		return r.Route != nil && coversPatterns(s.Route.Source, r.Route.Source) && coversPatterns(s.Route.Target, r.Route.Target) && coversPatterns(s.Route.Keyword, r.Route.Keyword)
	}
	// s has no typed matcher: it matches every prompt of its kind (or every known kind)
	return true
}

// coversShell: a shell matcher s (of a rule deciding dec) matches every command r does.
func coversShell(dec Verdict, s, r *ShellMatcher) bool {
	if dec == Allow && (r.Permit&^s.Permit != 0 || len(r.Options) > 0) {
		return false
	}
	if s.InsideRoot {
		return false // it matches only some of the commands its patterns name
	}
	if len(s.Commands) == 0 {
		return true
	}
	if len(r.Commands) == 0 {
		return false
	}
	for _, rc := range r.Commands {
		if !anyCoversCmd(s.Commands, rc) {
			return false
		}
	}
	return true
}

func anyCoversCmd(scs []*CmdPattern, rc *CmdPattern) bool {
	for _, sc := range scs {
		if coversCmd(sc, rc) {
			return true
		}
	}
	return false
}

// coversFile: a file matcher s without bounds matches every path r does.
func coversFile(s, r *FileMatcher) bool {
	if s.MaxSize >= 0 || s.MaxChangedLines >= 0 {
		return false
	}
	if len(s.Paths) == 0 {
		return true
	}
	if len(r.Paths) == 0 {
		return false
	}
	for _, rp := range r.Paths {
		if !anyCoversPath(s.Paths, rp) {
			return false
		}
	}
	return true
}

func anyCoversPath(sps []string, rp string) bool {
	for _, sp := range sps {
		if sp == rp || sp == "**" && !strings.HasPrefix(rp, "/") {
			return true
		}
		if !strings.ContainsAny(rp, "*?[{\\") {
			if m, _ := doublestar.Match(sp, rp); m {
				return true
			}
		}
	}
	return false
}

func isKnownKind(k string) bool {
	for _, known := range knownKinds {
		if k == known {
			return true
		}
	}
	return false
}

func coversPatterns(s, r Patterns) bool {
	if s.MatchAll() {
		return true
	}
	if len(r) == 0 {
		return false
	}
	for _, rp := range r {
		ok := false
		for _, sp := range s {
			if sp.Src == rp.Src || (rp.literal && sp.Match(rp.Src)) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// coversCmd: every argv sc accepts... the other way round: every argv rc accepts, sc accepts.
func coversCmd(sc, rc *CmdPattern) bool {
	for _, w := range sc.Words {
		if w == nil {
			return sc.Src == rc.Src
		}
	}
	for _, w := range rc.Words {
		if w == nil {
			return sc.Src == rc.Src
		}
	}
	if len(sc.Words) > len(rc.Words) {
		return false
	}
	if sc.Anchored && (!rc.Anchored || len(sc.Words) != len(rc.Words)) {
		return false
	}
	for i, sw := range sc.Words {
		rw := rc.Words[i]
		switch {
		case sw.MatchAll(), sw.Src == rw.Src:
		case rw.literal && sw.Match(rw.Src):
		default:
			return false
		}
	}
	return true
}
