package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/itchyny/gojq"
	"gopkg.in/yaml.v3"

	"github.com/fuseraft/fr/internal/jq"
	"github.com/fuseraft/fr/pkg/wire"
)

// Verdict is a decision on an approval_request. Larger is stricter.
type Verdict int

const (
	Allow Verdict = iota
	Ask
	Deny
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	}
	return "deny"
}

// ParseVerdict parses allow, ask or deny.
func ParseVerdict(s string) (Verdict, bool) {
	switch s {
	case "allow":
		return Allow, true
	case "ask":
		return Ask, true
	case "deny":
		return Deny, true
	}
	return Deny, false
}

// Policy is a loaded, compiled policy file.
type Policy struct {
	File    string
	SHA256  string // hex sha256 of the file's bytes
	Default Verdict
	// QuestionDefault is how a question no rule answers is handled: "skip" or "ask".
	QuestionDefault string
	Rules           []*Rule
	Questions       []*QuestionRule
	Tests           []*Test

	byKind   map[string][]*Rule  // rules that apply to a kind, in file order ("" lists wildcard rules)
	conds    []*condition        // the distinct when conditions of the rules
	whenKeys map[string][]string // per kind: the fields the conditions that read only fields need
	shell    shellIndex
	files    fileIndex
}

// Rule is one named rule of `rules:`.
type Rule struct {
	Name        string
	Line        int
	Decision    Verdict
	Kind        string // "" applies to every known kind (never allows an unknown one)
	Description string
	Shell       *ShellMatcher
	File        *FileMatcher
	Tool        *ToolMatcher
	Route       *RouteMatcher
	When        *gojq.Code
	WhenSrc     string
	Limit       *Limit
	index       int
	cond        *condition // When, shared with the rules that give the same source
}

// ShellMatcher matches the simple commands of a shell_command.
type ShellMatcher struct {
	Commands []*CmdPattern // none: every command
	Permit   Flag          // flags an allow rule accepts (allow_redirects, ...)
	// Constructs an allow rule accepts (allow_constructs; allow_expansions adds the expansions).
	Constructs Construct
	// InsideRoot (paths: inside_root): every word and redirection that may name a file must
	// resolve inside the root and match none of Protect. An allow rule matches only such
	// commands; a deny or ask rule matches only the others.
	InsideRoot bool
	Protect    []string
	// Anywhere (paths: anywhere, allow rules only): the paths of the commands it allows are
	// not judged. Without a paths key an allow rule judges them as paths: inside_root does.
	Anywhere bool
	// Places are the globs of a list `paths: [inside_root, /tmp/**]` other than inside_root:
	// the places outside the root (or, relative, inside it) its paths may also lie in.
	// NotRoot: the list does not name inside_root, so a path must lie in one of Places.
	Places  []string
	NotRoot bool
	// PathsKey: the rule has a paths or protect key (lint: allow rules without one changed
	// meaning when paths became judged by default).
	PathsKey bool

	protectFold []string // Protect folded (foldGlob)
	// Options (allow_options) are the options of programOptions an allow rule accepts
	// without naming them in a pattern: -o, --output, CC= (make's variable), @ (pytest @FILE).
	Options []string
}

// CmdPattern is an argv pattern: words matched one to one (each a glob or /regex/), `**` for
// any number of words, and a final `$` when the argv must end there (else it is a prefix).
type CmdPattern struct {
	Src      string
	Line     int
	Words    []*Pattern // nil entry: `**`
	Anchored bool
}

// FileMatcher matches file_write prompts.
type FileMatcher struct {
	Paths           []string // doublestar globs; relative ones against the root, /absolute ones as they are
	MaxSize         int64    // -1: no bound
	MaxChangedLines int      // -1: no bound

	pathsFold []string // Paths folded (foldGlob), which deny and ask rules match too
}

// ToolMatcher matches tool_action prompts.
type ToolMatcher struct{ Plugin, Action, Detail Patterns }

// RouteMatcher matches route_approval prompts.
type RouteMatcher struct{ Source, Target, Keyword Patterns }

// Limit caps how many prompts an allow rule may allow.
type Limit struct {
	Max int
	Per time.Duration // 0: per fuseraft session
}

func (l *Limit) String() string {
	if l.Per == 0 {
		return fmt.Sprintf("%d per session", l.Max)
	}
	return fmt.Sprintf("%d per %s", l.Max, l.Per)
}

// QuestionRule answers a question event.
type QuestionRule struct {
	Name     string
	Line     int
	Question Patterns
	When     *gojq.Code
	WhenSrc  string
	// Answer is one of "option", "text", "skip", "ask".
	Answer string
	Option *Pattern // for "option": the first option it matches is the answer
	Text   string   // for "text"
}

// Test is one entry of `tests:`.
type Test struct {
	Name   string
	Line   int
	Event  []byte
	Expect string // allow, ask, deny; for questions: answer, skip, ask
	Rule   string // expected deciding rule, if given
	Answer *string
}

// Error is one problem in a policy file, at a line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Errors is every problem found while loading a policy.
type Errors []*Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// LoadFile reads and compiles a policy file.
func LoadFile(name string) (*Policy, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return Load(data, name)
}

const maxErrors = 20

type loader struct {
	file string
	errs Errors
}

func (l *loader) errf(n *yaml.Node, format string, args ...any) {
	if len(l.errs) >= maxErrors {
		return
	}
	line := 0
	if n != nil {
		line = n.Line
	}
	l.errs = append(l.errs, &Error{File: l.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// Load compiles a policy from its YAML text; name is used in error messages. Every problem is
// reported (an Errors value), each with its line.
func Load(data []byte, name string) (*Policy, error) {
	l := &loader{file: name}
	sum := sha256.Sum256(data)
	p := &Policy{File: name, SHA256: hex.EncodeToString(sum[:]), Default: Deny, QuestionDefault: "skip"}
	root, errs := decodeDocument(data, name)
	if errs != nil {
		return nil, errs
	}
	if root.Kind != yaml.MappingNode {
		l.errf(root, "a policy is a mapping with version, default and rules")
		return nil, l.errs
	}
	seenVersion := false
	l.mapping(root, "policy", map[string]func(k, v *yaml.Node){
		"version": func(k, v *yaml.Node) {
			seenVersion = true
			if v.Kind != yaml.ScalarNode || v.Value != "1" {
				l.errf(v, "unsupported policy version %q; this build reads version 1", v.Value)
			}
		},
		"description": func(k, v *yaml.Node) { l.str(v, "description") },
		"default": func(k, v *yaml.Node) {
			switch s := l.str(v, "default"); s {
			case "deny":
				p.Default = Deny
			case "ask":
				p.Default = Ask
			case "allow":
				l.errf(v, "default: allow is not accepted; the default is deny or ask (allow what you mean with rules)")
			default:
				l.errf(v, "default must be deny or ask, not %q", s)
			}
		},
		"question_default": func(k, v *yaml.Node) {
			switch s := l.str(v, "question_default"); s {
			case "skip", "ask":
				p.QuestionDefault = s
			default:
				l.errf(v, "question_default must be skip or ask, not %q", s)
			}
		},
		"rules": func(k, v *yaml.Node) {
			for _, n := range l.seq(v, "rules") {
				if r := l.rule(n); r != nil {
					r.index = len(p.Rules)
					p.Rules = append(p.Rules, r)
				}
			}
		},
		"questions": func(k, v *yaml.Node) {
			for _, n := range l.seq(v, "questions") {
				if q := l.question(n); q != nil {
					p.Questions = append(p.Questions, q)
				}
			}
		},
		"tests": func(k, v *yaml.Node) {
			for _, n := range l.seq(v, "tests") {
				if t := l.test(n); t != nil {
					p.Tests = append(p.Tests, t)
				}
			}
		},
	})
	if !seenVersion {
		l.errf(root, "missing `version: 1`")
	}
	l.checkNames(p)
	if len(l.errs) > 0 {
		return nil, l.errs
	}
	p.index()
	return p, nil
}

// decodeDocument reads the one YAML document of a policy and returns its top node.
func decodeDocument(data []byte, name string) (*yaml.Node, Errors) {
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, errorsEOF) || err.Error() == "EOF" {
			return nil, Errors{{File: name, Msg: "the policy is empty; it needs at least `version: 1`"}}
		}
		line := yamlErrLine(err)
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", line))
		return nil, Errors{{File: name, Line: line, Msg: msg}}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Errors{{File: name, Line: extra.Line, Msg: "a policy is one YAML document; remove the second one"}}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	return root, nil
}

// checkNames reports names used twice, and tests that expect a rule the policy does not have.
func (l *loader) checkNames(p *Policy) {
	names := map[string]int{}
	for _, r := range p.Rules {
		if line, dup := names[r.Name]; dup {
			l.errs = append(l.errs, &Error{File: l.file, Line: r.Line, Msg: fmt.Sprintf("rule name %q is already used at line %d", r.Name, line)})
		}
		names[r.Name] = r.Line
	}
	for _, q := range p.Questions {
		if line, dup := names[q.Name]; dup {
			l.errs = append(l.errs, &Error{File: l.file, Line: q.Line, Msg: fmt.Sprintf("name %q is already used at line %d", q.Name, line)})
		}
		names[q.Name] = q.Line
	}
	for _, t := range p.Tests {
		if t.Rule != "" && t.Rule != ByDefault && t.Rule != ByMalformed {
			if _, ok := names[t.Rule]; !ok {
				l.errs = append(l.errs, &Error{File: l.file, Line: t.Line, Msg: fmt.Sprintf("test expects rule %q, which the policy does not have", t.Rule)})
			}
		}
	}
}

var errorsEOF = errors.New("EOF")

func yamlErrLine(err error) int {
	// yaml.v3 messages look like "yaml: line 3: ..."
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		j := i + 5
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if n, err := strconv.Atoi(s[j:k]); err == nil {
			return n
		}
	}
	return 0
}

// mapping walks a mapping node, calling the handler of each key; unknown keys are errors.
func (l *loader) mapping(n *yaml.Node, what string, keys map[string]func(k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		l.errf(n, "%s must be a mapping", what)
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		h, ok := keys[k.Value]
		if !ok {
			known := make([]string, 0, len(keys))
			for name := range keys {
				known = append(known, name)
			}
			sort.Strings(known)
			l.errf(k, "unknown key %q in %s (known: %s)", k.Value, what, strings.Join(known, ", "))
			continue
		}
		if seen[k.Value] {
			l.errf(k, "key %q appears twice in %s", k.Value, what)
			continue
		}
		seen[k.Value] = true
		h(k, v)
	}
}

func (l *loader) str(v *yaml.Node, what string) string {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		l.errf(v, "%s must be a string", what)
		return ""
	}
	return v.Value
}

func (l *loader) boolean(v *yaml.Node, what string) bool {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
		l.errf(v, "%s must be true or false", what)
		return false
	}
	return v.Value == "true"
}

func (l *loader) integer(v *yaml.Node, what string) int64 {
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if v.Kind != yaml.ScalarNode || err != nil || n < 0 {
		l.errf(v, "%s must be a whole number ≥ 0", what)
		return -1
	}
	return n
}

func (l *loader) size(v *yaml.Node, what string) int64 {
	s := strings.TrimSpace(v.Value)
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"k", 1000}, {"B", 1}} {
		if strings.HasSuffix(s, u.suf) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suf)), u.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if v.Kind != yaml.ScalarNode || err != nil || n < 0 {
		l.errf(v, "%s must be a size such as 4096, 100KB or 1MiB, not %q", what, v.Value)
		return -1
	}
	return n * mult
}

func (l *loader) seq(v *yaml.Node, what string) []*yaml.Node {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		l.errf(v, "%s must be a list", what)
		return nil
	}
	return v.Content
}

// strings reads a string or a list of strings.
func (l *loader) strs(v *yaml.Node, what string) []*yaml.Node {
	if v.Kind == yaml.ScalarNode {
		return []*yaml.Node{v}
	}
	if v.Kind != yaml.SequenceNode {
		l.errf(v, "%s must be a string or a list of strings", what)
		return nil
	}
	for _, n := range v.Content {
		if n.Kind != yaml.ScalarNode {
			l.errf(n, "%s must be a string or a list of strings", what)
			return nil
		}
	}
	return v.Content
}

func (l *loader) patterns(v *yaml.Node, what string) Patterns {
	var ps Patterns
	for _, n := range l.strs(v, what) {
		p, err := CompilePattern(n.Value)
		if err != nil {
			l.errf(n, "%s: %v", what, err)
			continue
		}
		ps = append(ps, p)
	}
	return ps
}

func (l *loader) jq(v *yaml.Node) (*gojq.Code, string) {
	src := l.str(v, "when")
	if src == "" {
		return nil, ""
	}
	// An error is shown as fr-filter shows one, with a caret under the bad token; a program
	// of several lines names its lines "when:N", counted from its first.
	name := ""
	if strings.ContainsAny(src, "\r\n") {
		name = "when"
	}
	_, code, err := jq.ParseAndCompile(src, name)
	if err != nil {
		l.errf(v, "when: %v", err)
		return nil, src
	}
	return code, src
}

var knownKinds = []string{wire.KindShellCommand, wire.KindFileWrite, wire.KindToolAction, wire.KindRouteApproval}

func (l *loader) rule(n *yaml.Node) *Rule {
	r := &Rule{Line: n.Line, Decision: -1}
	var kindNode, decisionNode *yaml.Node
	typed := map[string]*yaml.Node{}
	l.mapping(n, "a rule", map[string]func(k, v *yaml.Node){
		"name":        func(k, v *yaml.Node) { r.Name = l.str(v, "name") },
		"description": func(k, v *yaml.Node) { r.Description = l.str(v, "description") },
		"decision": func(k, v *yaml.Node) {
			decisionNode = v
			d, ok := ParseVerdict(l.str(v, "decision"))
			if !ok {
				l.errf(v, "decision must be allow, ask or deny, not %q", v.Value)
				return
			}
			r.Decision = d
		},
		"kind": func(k, v *yaml.Node) {
			kindNode = v
			r.Kind = l.str(v, "kind")
			if r.Kind == "" || r.Kind == "*" {
				l.errf(v, "kind must name one approval kind; leave it out for a rule about every known kind")
			}
		},
		"shell": func(k, v *yaml.Node) { typed[wire.KindShellCommand] = k; r.Shell = l.shell(v) },
		"file":  func(k, v *yaml.Node) { typed[wire.KindFileWrite] = k; r.File = l.fileMatcher(v) },
		"tool": func(k, v *yaml.Node) {
			typed[wire.KindToolAction] = k
			t := &ToolMatcher{}
			l.mapping(v, "tool", map[string]func(k, v *yaml.Node){
				"plugin": func(k, v *yaml.Node) { t.Plugin = l.patterns(v, "plugin") },
				"action": func(k, v *yaml.Node) { t.Action = l.patterns(v, "action") },
				"detail": func(k, v *yaml.Node) { t.Detail = l.patterns(v, "detail") },
			})
			r.Tool = t
		},
		"route": func(k, v *yaml.Node) {
			typed[wire.KindRouteApproval] = k
			t := &RouteMatcher{}
			l.mapping(v, "route", map[string]func(k, v *yaml.Node){
				"source":  func(k, v *yaml.Node) { t.Source = l.patterns(v, "source") },
				"target":  func(k, v *yaml.Node) { t.Target = l.patterns(v, "target") },
				"keyword": func(k, v *yaml.Node) { t.Keyword = l.patterns(v, "keyword") },
			})
			r.Route = t
		},
		"when": func(k, v *yaml.Node) { r.When, r.WhenSrc = l.jq(v) },
		"limit": func(k, v *yaml.Node) {
			lim := &Limit{Max: -1}
			l.mapping(v, "limit", map[string]func(k, v *yaml.Node){
				"max": func(k, v *yaml.Node) { lim.Max = int(l.integer(v, "limit.max")) },
				"per": func(k, v *yaml.Node) {
					s := l.str(v, "limit.per")
					if s == "session" {
						return
					}
					d, err := time.ParseDuration(s)
					if err != nil || d <= 0 {
						l.errf(v, "limit.per must be session or a duration such as 1h or 30m, not %q", s)
						return
					}
					lim.Per = d
				},
			})
			if lim.Max < 0 {
				l.errf(v, "limit needs max: N")
			}
			r.Limit = lim
		},
	})
	if r.Name == "" {
		l.errf(n, "a rule needs a name")
	}
	if decisionNode == nil {
		l.errf(n, "rule %q needs a decision (allow, ask or deny)", r.Name)
	}
	if len(typed) > 1 {
		l.errf(n, "rule %q mixes matchers of different kinds; write one rule per kind", r.Name)
		typed = nil
	}
	for k, node := range typed {
		if r.Kind != "" && r.Kind != k {
			l.errf(node, "rule %q has kind %s but a matcher for %s", r.Name, r.Kind, k)
		}
		r.Kind = k
	}
	// A kind this build does not know is accepted: naming it is the only way to allow it.
	_ = kindNode
	if r.Limit != nil && r.Decision != Allow && r.Decision >= 0 {
		l.errf(n, "rule %q: limit only applies to allow rules", r.Name)
	}
	if r.Shell != nil && r.Shell.Anywhere && r.Decision != Allow && r.Decision >= 0 {
		l.errf(n, "rule %q: paths: anywhere only applies to allow rules (a deny or ask rule without paths judges none)", r.Name)
	}
	return r
}

func (l *loader) shell(v *yaml.Node) *ShellMatcher {
	m := &ShellMatcher{}
	if v.Kind != yaml.MappingNode {
		l.shellCommands(m, v)
		return m
	}
	flag := func(f Flag, name string) func(k, v *yaml.Node) {
		return func(k, v *yaml.Node) {
			if l.boolean(v, name) {
				m.Permit |= f
			}
		}
	}
	l.mapping(v, "shell", map[string]func(k, v *yaml.Node){
		"commands":         func(k, v *yaml.Node) { l.shellCommands(m, v) },
		"allow_redirects":  flag(FlagRedirect, "allow_redirects"),
		"allow_expansions": flag(FlagExpansion, "allow_expansions"),
		"allow_unparsable": flag(FlagUnparsable, "allow_unparsable"),
		"allow_env":        flag(FlagEnv, "allow_env"),
		"allow_constructs": func(k, v *yaml.Node) { l.allowConstructs(m, v) },
		"allow_options":    func(k, v *yaml.Node) { l.allowOptions(m, v) },
		"paths":            func(k, v *yaml.Node) { l.shellPaths(m, v) },
		"protect": func(k, v *yaml.Node) {
			for _, n := range l.strs(v, "protect") {
				if !doublestar.ValidatePattern(n.Value) || n.Value == "" {
					l.errf(n, "bad path glob %q", n.Value)
					continue
				}
				m.Protect = append(m.Protect, n.Value)
			}
			m.InsideRoot, m.PathsKey = true, true
		},
	})
	if m.Anywhere && len(m.Protect) > 0 {
		l.errf(v, "paths: anywhere judges no path, so protect: would never apply; list the places instead (paths: [inside_root, /tmp/**])")
	}
	if m.Permit&FlagExpansion != 0 {
		m.Constructs |= expansionConstructs
	}
	m.protectFold = foldGlobs(m.Protect)
	return m
}

// shellCommands reads a shell matcher's command patterns (shell: [...], or its commands:).
func (l *loader) shellCommands(m *ShellMatcher, v *yaml.Node) {
	for _, n := range l.strs(v, "shell commands") {
		cp, err := CompileCmdPattern(n.Value)
		if err != nil {
			l.errf(n, "shell command pattern %q: %v", n.Value, err)
			continue
		}
		cp.Line = n.Line
		m.Commands = append(m.Commands, cp)
	}
	if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
		l.errf(v, "an empty list of commands matches nothing; leave `commands` out to match every command")
	}
}

// allowConstructs reads a shell matcher's allow_constructs.
func (l *loader) allowConstructs(m *ShellMatcher, v *yaml.Node) {
	for _, n := range l.strs(v, "allow_constructs") {
		c, ok := ConstructByName(n.Value)
		if !ok {
			optIn, never := ConstructNames()
			if c != 0 {
				l.errf(n, "allow_constructs: %s is never allowed (none of %s can be)", n.Value, strings.Join(never, ", "))
			} else {
				l.errf(n, "allow_constructs: unknown construct %q (known: %s)", n.Value, strings.Join(optIn, ", "))
			}
			continue
		}
		m.Constructs |= c
	}
}

// allowOptions reads a shell matcher's allow_options.
func (l *loader) allowOptions(m *ShellMatcher, v *yaml.Node) {
	for _, n := range l.strs(v, "allow_options") {
		o := n.Value
		if !(len(o) > 1 && o[0] == '-' || len(o) > 1 && strings.HasSuffix(o, "=") || o == "@") {
			l.errf(n, "allow_options: %q is not an option (-x, --name), a variable (NAME=) or @", o)
			continue
		}
		m.Options = append(m.Options, o)
	}
}

// shellPaths reads a shell matcher's paths: anywhere, or a list of inside_root and places.
func (l *loader) shellPaths(m *ShellMatcher, v *yaml.Node) {
	m.PathsKey = true
	if v.Kind == yaml.ScalarNode && v.Value == "anywhere" {
		m.Anywhere = true
		return
	}
	m.InsideRoot, m.NotRoot = true, true
	for _, n := range l.strs(v, "paths") {
		switch {
		case n.Value == "inside_root":
			m.NotRoot = false
		case n.Value == "anywhere":
			l.errf(n, "paths: anywhere stands alone, not in a list")
		case v.Kind == yaml.ScalarNode:
			l.errf(n, "paths must be inside_root, anywhere or a list of places (inside_root and path globs), not %q", n.Value)
		case !doublestar.ValidatePattern(n.Value) || n.Value == "" || strings.HasPrefix(n.Value, "~"):
			l.errf(n, "paths: bad path glob %q (inside_root, /absolute/** or relative/**)", n.Value)
		default:
			m.Places = append(m.Places, n.Value)
		}
	}
}

func (l *loader) fileMatcher(v *yaml.Node) *FileMatcher {
	m := &FileMatcher{MaxSize: -1, MaxChangedLines: -1}
	paths := func(v *yaml.Node) {
		for _, n := range l.strs(v, "file paths") {
			if !doublestar.ValidatePattern(n.Value) || n.Value == "" {
				l.errf(n, "bad path glob %q", n.Value)
				continue
			}
			m.Paths = append(m.Paths, n.Value)
		}
	}
	if v.Kind != yaml.MappingNode {
		paths(v)
		m.pathsFold = foldGlobs(m.Paths)
		return m
	}
	l.mapping(v, "file", map[string]func(k, v *yaml.Node){
		"paths":             func(k, v *yaml.Node) { paths(v) },
		"max_size":          func(k, v *yaml.Node) { m.MaxSize = l.size(v, "max_size") },
		"max_changed_lines": func(k, v *yaml.Node) { m.MaxChangedLines = int(l.integer(v, "max_changed_lines")) },
	})
	m.pathsFold = foldGlobs(m.Paths)
	return m
}

func (l *loader) question(n *yaml.Node) *QuestionRule {
	q := &QuestionRule{Line: n.Line}
	answers := 0
	l.mapping(n, "a question rule", map[string]func(k, v *yaml.Node){
		"name":        func(k, v *yaml.Node) { q.Name = l.str(v, "name") },
		"description": func(k, v *yaml.Node) { l.str(v, "description") },
		"question":    func(k, v *yaml.Node) { q.Question = l.patterns(v, "question") },
		"when":        func(k, v *yaml.Node) { q.When, q.WhenSrc = l.jq(v) },
		"option": func(k, v *yaml.Node) {
			answers++
			q.Answer = "option"
			p, err := CompilePattern(l.str(v, "option"))
			if err != nil {
				l.errf(v, "option: %v", err)
			}
			q.Option = p
		},
		"text": func(k, v *yaml.Node) { answers++; q.Answer = "text"; q.Text = l.str(v, "text") },
		"skip": func(k, v *yaml.Node) {
			answers++
			q.Answer = "skip"
			if !l.boolean(v, "skip") {
				l.errf(v, "skip: false says nothing; leave it out")
			}
		},
		"ask": func(k, v *yaml.Node) {
			answers++
			q.Answer = "ask"
			if !l.boolean(v, "ask") {
				l.errf(v, "ask: false says nothing; leave it out")
			}
		},
	})
	if q.Name == "" {
		l.errf(n, "a question rule needs a name")
	}
	if answers != 1 {
		l.errf(n, "question rule %q needs exactly one of option, text, skip: true or ask: true", q.Name)
	}
	return q
}

func (l *loader) test(n *yaml.Node) *Test {
	t := &Test{Line: n.Line}
	l.mapping(n, "a test", map[string]func(k, v *yaml.Node){
		"name": func(k, v *yaml.Node) { t.Name = l.str(v, "name") },
		"event": func(k, v *yaml.Node) {
			if v.Kind == yaml.ScalarNode {
				s := l.str(v, "event")
				if !json.Valid([]byte(s)) {
					l.errf(v, "event: not valid JSON")
				}
				t.Event = []byte(s)
				return
			}
			var x any
			if err := v.Decode(&x); err != nil {
				l.errf(v, "event: %v", err)
				return
			}
			b, err := json.Marshal(x)
			if err != nil {
				l.errf(v, "event: %v", err)
				return
			}
			t.Event = b
		},
		"command": func(k, v *yaml.Node) {
			cmd := l.str(v, "command")
			b, _ := json.Marshal(map[string]string{"type": wire.TypeApproval, "kind": wire.KindShellCommand, "command": cmd})
			t.Event = b
			if t.Name == "" {
				t.Name = fmt.Sprintf("%q", cmd)
			}
		},
		"expect": func(k, v *yaml.Node) {
			t.Expect = l.str(v, "expect")
			switch t.Expect {
			case "allow", "ask", "deny", "answer", "skip":
			default:
				l.errf(v, "expect must be allow, ask or deny (or answer or skip for a question), not %q", t.Expect)
			}
		},
		"rule": func(k, v *yaml.Node) { t.Rule = l.str(v, "rule") },
		"answer": func(k, v *yaml.Node) {
			s := l.str(v, "answer")
			t.Answer = &s
		},
	})
	if t.Event == nil {
		l.errf(n, "a test needs an event (or a command)")
	}
	if t.Expect == "" {
		l.errf(n, "a test needs expect")
	}
	if t.Name == "" {
		t.Name = fmt.Sprintf("test at line %d", t.Line)
	}
	return t
}

// CompileCmdPattern compiles an argv pattern such as `go test`, `git push --force`, `rm ** -rf`
// or `make $` (exactly `make`).
func CompileCmdPattern(src string) (*CmdPattern, error) {
	ws, err := splitPattern(src)
	if err != nil {
		return nil, err
	}
	cp := &CmdPattern{Src: src}
	if n := len(ws); n > 0 && ws[n-1] == "$" {
		cp.Anchored = true
		ws = ws[:n-1]
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("an empty pattern; give at least the command name")
	}
	for _, w := range ws {
		if w == "**" {
			cp.Words = append(cp.Words, nil)
			continue
		}
		p, err := CompilePattern(w)
		if err != nil {
			return nil, err
		}
		cp.Words = append(cp.Words, p)
	}
	return cp, nil
}

// splitPattern splits a pattern into words at spaces; quotes group words ("git commit -m 'x y'").
func splitPattern(s string) ([]string, error) {
	var out []string
	var b strings.Builder
	in := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
				continue
			}
			b.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		case c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			b.WriteByte(s[i+1])
			i++
			in = true
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote", quote)
	}
	if in {
		out = append(out, b.String())
	}
	return out, nil
}
