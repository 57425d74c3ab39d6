package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const placesPolicy = `version: 1
default: ask
rules:
  - {name: plain, decision: allow, shell: [cat, grep, echo, ls]}
  - {name: tmp, decision: allow, shell: {commands: [head], paths: [inside_root, "/tmp/fr-x/**"]}}
  - {name: only-src, decision: allow, shell: {commands: [wc], paths: ["src/**"]}}
  - {name: anywhere, decision: allow, shell: {commands: [du], paths: anywhere}}
  - {name: outside-asks, decision: ask, shell: {commands: [tail], paths: [inside_root, "/var/log/**"]}}
  - {name: tail, decision: allow, shell: {commands: [tail], paths: anywhere}}
`

// An allow rule judges the paths of what it allows unless it says paths: anywhere; a list
// names the places besides (or instead of) the root; a deny or ask rule with a list matches
// the paths outside every place.
func TestPathsPlaces(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.WriteFile(filepath.Join(root, "src", "a.go"), []byte("x"), 0o644)
	os.Symlink("/etc", filepath.Join(root, "src", "etc"))
	os.Symlink("/tmp/fr-x/../../etc", filepath.Join(root, "up"))
	for _, tc := range []struct{ cmd, want string }{
		{"cat src/a.go", "allow:plain"},
		{"cat /etc/passwd", "ask"},
		{"cat src/etc/passwd", "ask"},
		{"cat < /etc/passwd", "ask"},
		{"cat ~/.netrc", "ask"},
		{"grep -rn /etc/passwd src", "allow:plain"}, // the pattern names no file
		{"grep -e x /etc/passwd", "ask"},
		{"grep --regexp=x /etc/passwd", "ask"},
		{"grep --reg x /etc/passwd", "ask"},
		{"grep -A 3 x /etc/passwd", "ask"},
		{"grep -A3 x /etc/passwd", "ask"},
		{"grep -m 1 -- x /etc/passwd", "ask"},
		{"grep --max-count 1 x /etc/passwd", "ask"}, // the value of a long option may be the next word
		{"grep -hf /etc/passwd x", "ask"},
		{"echo /etc/passwd", "allow:plain"},
		{"echo x > /etc/passwd", "ask"},
		{"head /tmp/fr-x/log", "allow:tmp"},
		{"head /tmp/fr-x/../../etc/passwd", "ask"},
		{"head up/passwd", "ask"},
		{"head src/a.go", "allow:tmp"},
		{"head /tmp/other", "ask"},
		{"wc -l src/a.go", "allow:only-src"},
		{"wc -l go.mod", "ask"},
		{"wc -l src/etc/passwd", "ask"},
		{"du -sh /usr/share", "allow:anywhere"},
		{"du -sh $HOME", "ask"}, // a computed word is still a flag the rule does not permit
		{"tail /var/log/syslog", "allow:tail"},
		{"tail /etc/passwd", "ask"},
		{"tail src/a.go", "allow:tail"},
	} {
		d := decideWith(t, placesPolicy, root, tc.cmd)
		got := d.Verdict.String()
		if d.Decider == ByRule && d.Verdict != Ask {
			got += ":" + d.Rule
		}
		if got != tc.want {
			t.Errorf("%q: got %s (%s: %s), want %s", tc.cmd, got, d.Part, d.Reason, tc.want)
		}
	}
}

func TestFoldPath(t *testing.T) {
	for in, want := range map[string]string{
		"vendor/x":              "vendor/x",
		"Vendor/x":              "vendor/x",
		"vendor./x":             "vendor/x",
		"vendor ./x":            "vendor/x",
		"vendor. . /x":          "vendor/x",
		".GitHub/workflows/x.Y": ".github/workflows/x.y",
		"../x.":                 "../x",
		"...":                   "...",
		"a/./b":                 "a/./b",
		"ÄBC/x":                 "äbc/x",
		"x.go ":                 "x.go",
	} {
		if got := foldPath(in); got != want {
			t.Errorf("foldPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteRunsLater(t *testing.T) {
	for p, later := range map[string]bool{
		".git": true, "sub/.git": true, "sub/.git/hooks/pre-commit": true, ".GIT/config": true,
		".git./config": true, ".envrc": true, "a/b/.envrc": true, "a/.Envrc ": true, "a\nb": true,
		"x\x1b[31m": true, "x\u0085": true,
		".gitignore": false, ".github/x": false, "src/envrc": false, "x.git": false, ".envrc.example": false,
	} {
		if got := writeRunsLater(p) != ""; got != later {
			t.Errorf("writeRunsLater(%q) = %v, want %v", p, got, later)
		}
	}
}

func TestPatternOperand(t *testing.T) {
	for cmd, want := range map[string]int{
		"grep x f":            1,
		"grep -rn x f":        2,
		"grep -A 3 x f":       3,
		"grep -A3 x f":        2,
		"grep -e x f":         -1,
		"grep -rne x f":       -1,
		"grep -f p f":         -1,
		"grep --file=p f":     -1,
		"grep --fi=p f":       -1,
		"grep --regexp x f":   -1,
		"grep --color=auto x": 2,
		"grep --color x":      -1,
		"grep -- -x f":        2,
		"rg -n x f":           2,
		"cat x f":             -1,
		"/tmp/grep x f":       -1,
	} {
		p := Analyze(cmd)[0]
		if got := patternOperand(&p); got != want {
			t.Errorf("patternOperand(%q) = %d, want %d", cmd, got, want)
		}
	}
}

// Lint points at the allow rules whose meaning changed when paths became judged by default.
func TestLintPathsDefault(t *testing.T) {
	p, err := Load([]byte(`version: 1
rules:
  - {name: reads, decision: allow, shell: [cat]}
  - {name: said, decision: allow, shell: {commands: [head], paths: inside_root}}
  - {name: anywhere, decision: allow, shell: {commands: [tail], paths: anywhere}}
  - {name: prints, decision: allow, shell: [echo, "true"]}
  - {name: exact, decision: allow, shell: ["git status $"]}
  - {name: computed, decision: allow, shell: {commands: ["git status $"], allow_expansions: true}}
tests:
  - {command: ls, expect: deny}
`), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range Lint(p) {
		if strings.Contains(f.Msg, "no paths: key") {
			got[f.Rule] = f.Msg
		}
	}
	for _, r := range []string{"reads", "computed"} {
		if got[r] == "" {
			t.Errorf("lint says nothing about rule %s", r)
		}
	}
	for _, r := range []string{"said", "anywhere", "prints", "exact"} {
		if got[r] != "" {
			t.Errorf("lint about rule %s: %s", r, got[r])
		}
	}
	anywhere := false
	for _, f := range Lint(p) {
		anywhere = anywhere || f.Rule == "anywhere" && strings.Contains(f.Msg, "paths: anywhere")
	}
	if !anywhere {
		t.Error("lint says nothing about paths: anywhere")
	}
	if !strings.Contains(got["reads"], `"cat /etc/passwd"`) {
		t.Errorf("lint gives no example: %s", got["reads"])
	}
}

// FuzzPathsInside judges the paths of random command lines: it never panics, and what it finds
// inside names no file through ~, a computed word, or a write holding a control character.
func FuzzPathsInside(f *testing.F) {
	for _, s := range []string{"cat go.mod", "cat <<< \"$(</etc/shadow)\"", "exec 3<x; cat <&3", "grep -e /x -- y",
		"cc -isystem/etc @f x=/y", "echo x > 'a\nb'", "cat ~+/..", "ls -la .GIT/", "cat src/../../x"} {
		f.Add(s)
	}
	root := f.TempDir()
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.Symlink("/etc", filepath.Join(root, "src", "etc"))
	p, err := Load([]byte("version: 1\nrules:\n  - {name: x, decision: allow, shell: {commands: [x], protect: [\"**/.git/**\"]}}\n"), "f.yaml")
	if err != nil {
		f.Fatal(err)
	}
	d, err := NewDecider(p, root)
	if err != nil {
		f.Fatal(err)
	}
	plain, protect := &ShellMatcher{}, p.Rules[0].Shell
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > 2000 {
			return
		}
		parts := Analyze(cmd)
		for i := range parts {
			part := &parts[i]
			ok, _ := d.pathsInside(part, plain, true, 0)
			okp, _ := d.pathsInside(part, protect, false, 0)
			if okp && !ok && part.Chdir == false {
				// protect only narrows what is inside
				for _, pw := range part.Outputs {
					if writeRunsLater(pw.s) == "" && !strings.HasPrefix(pw.s, "~") {
						t.Fatalf("%q: inside for a deny rule with protect, not for an allow rule: %+v", cmd, part)
					}
				}
			}
			if !ok {
				continue
			}
			for _, pw := range append(append([]pathWord{}, part.Inputs...), part.Outputs...) {
				if pw.dyn || strings.HasPrefix(pw.s, "~") {
					t.Fatalf("%q: %q judged inside", cmd, pw.s)
				}
			}
			for _, pw := range part.Outputs {
				if hasControl(pw.s) {
					t.Fatalf("%q: a write to %q judged inside", cmd, pw.s)
				}
			}
		}
	})
}

// FuzzPlaceFastSlow compares judging a path with the fast path for relative names (linkFree)
// and without it: they must agree, for allow and deny rules, with and without protect.
func FuzzPlaceFastSlow(f *testing.F) {
	for _, s := range []string{"go.mod", "src/etc/shadow", "src/up/x", "./src/./etc", "a/../..", "src/a.go/..",
		"internal/x/env", "docs", ".GIT/config", "src//etc", "src/a.go/x", "...", "./..."} {
		f.Add(s, true)
	}
	root := attackRoot(f)
	os.WriteFile(filepath.Join(root, "src", "a.go"), []byte("x"), 0o644)
	d, err := NewDecider(&Policy{}, root)
	if err != nil {
		f.Fatal(err)
	}
	sms := []*ShellMatcher{{}, {Protect: []string{"**/.git/**", "src/**"}, protectFold: []string{"**/.git/**", "src/**"}}}
	f.Fuzz(func(t *testing.T, s string, write bool) {
		defer func() { fastPaths = true }()
		for _, sm := range sms {
			for _, allow := range []bool{true, false} {
				fastPaths = true
				fast, fwhy := d.placeOK(s, false, sm, allow, write)
				fastPaths = false
				slow, swhy := d.placeOK(s, false, sm, allow, write)
				if fast != slow {
					t.Fatalf("%q (allow %v, write %v, protect %v): fast %v (%s), slow %v (%s)", s, allow, write, sm.Protect, fast, fwhy, slow, swhy)
				}
			}
		}
	})
}
