// Package redact hides secrets in text before it is shown or stored: the values of chosen
// environment variables and of those fr reads its own secrets from (SecretEnv), the common shapes of tokens and keys (bearer tokens, GitHub, AWS,
// Google, OpenAI, Anthropic and Slack tokens, private key blocks) and patterns of the user's.
// Each secret is replaced by Mask.
package redact

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Mask replaces every secret found.
const Mask = "[REDACTED]"

// MinValue is the shortest environment value redacted: shorter ones ("1", "true") would mask
// ordinary words all over a report.
const MinValue = 6

// SecretEnv names the environment variables fr itself reads secrets from. Wherever fr redacts
// (fr-report, fr-filter --redact), their values are redacted without being named with
// --redact-env. When a command starts reading a secret from a variable, name it here: this is
// the one list.
var SecretEnv = []string{
	"FUSERAFT_SERVE_TOKEN", // the daemon's bearer token: fr-attach, fr-dispatch, fr-sim serve
}

type rule struct {
	name string
	re   *regexp.Regexp
	repl string
	// hint is text every match contains (compared in ASCII lower case when fold is set): a text
	// without it is not searched, which keeps redaction fast on big outputs.
	hint []string
	fold bool
}

// Builtin names the token shapes found without being asked, in the order they are applied.
var builtin = []rule{
	{"private key block", regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)`), Mask, []string{"-----BEGIN"}, false},
	{"bearer token", regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]{8,}=*`), "${1}" + Mask, []string{"bearer"}, true},
	{"GitHub token", regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}`), Mask, []string{"gh"}, false},
	{"GitHub fine-grained token", regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), Mask, []string{"github_pat_"}, false},
	{"AWS access key id", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), Mask, []string{"AKIA", "ASIA"}, false},
	{"Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z\-_]{35}`), Mask, []string{"AIza"}, false},
	{"Anthropic or OpenAI key", regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{20,}`), Mask, []string{"sk-"}, false},
	{"Slack token", regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9\-]{10,}`), Mask, []string{"xox"}, false},
}

// Builtins lists the names of the shapes found by default, for help texts.
func Builtins() []string {
	n := make([]string, len(builtin))
	for i, r := range builtin {
		n[i] = r.name
	}
	return n
}

// Options say what to redact.
type Options struct {
	// Values are secrets to hide wherever they appear (an environment variable's value).
	// Values shorter than MinValue are refused by New.
	Values []string
	// Patterns are regular expressions (RE2 syntax) whose matches are hidden.
	Patterns []string
	// NoBuiltins leaves out the built-in token shapes.
	NoBuiltins bool
}

// Redactor hides secrets. The zero value and nil hide nothing. It is safe for concurrent use.
type Redactor struct {
	values *strings.Replacer
	rules  []rule
}

// New returns a Redactor for opts. A pattern that does not compile, or that matches the empty
// string, and a value too short to redact safely, are errors.
func New(opts Options) (*Redactor, error) {
	r := &Redactor{}
	if !opts.NoBuiltins {
		r.rules = append(r.rules, builtin...)
	}
	for _, p := range opts.Patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("redact pattern %q: %v", p, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("redact pattern %q matches the empty string", p)
		}
		r.rules = append(r.rules, rule{name: "pattern " + p, re: re, repl: Mask})
	}
	vals := append([]string(nil), opts.Values...)
	for _, v := range vals {
		if len(v) < MinValue {
			return nil, errors.New("a value to redact is shorter than 6 bytes: it would mask ordinary text")
		}
	}
	// Longest first, so a value that contains another is hidden whole.
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	if len(vals) > 0 {
		pairs := make([]string, 0, 2*len(vals))
		for _, v := range vals {
			pairs = append(pairs, v, Mask)
		}
		r.values = strings.NewReplacer(pairs...)
	}
	return r, nil
}

// String returns s with every secret replaced by Mask.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" {
		return s
	}
	if r.values != nil {
		s = r.values.Replace(s)
	}
	lower := ""
	for _, ru := range r.rules {
		if ru.hint != nil {
			found := false
			for _, h := range ru.hint {
				if ru.fold {
					if lower == "" {
						lower = strings.ToLower(s)
					}
					found = found || strings.Contains(lower, h)
				} else {
					found = found || strings.Contains(s, h)
				}
			}
			if !found {
				continue
			}
			lower = ""
		}
		s = ru.re.ReplaceAllString(s, ru.repl)
	}
	return s
}
