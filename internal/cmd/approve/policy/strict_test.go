package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const strictPolicy = `version: 1
default: ask
rules:
  - {name: reads, decision: allow, shell: [cat, grep, ls, echo, "git status", "git diff", "go test", "go build", "make test $"]}
  - {name: loops, decision: allow, shell: {commands: [gofmt -l], allow_constructs: [for, parameter], allow_env: true, paths: anywhere}}
  - {name: here, decision: allow, shell: {commands: [wc], allow_constructs: [heredoc]}}
  - {name: inside, decision: allow, shell: {commands: [head, tail], paths: inside_root, protect: ["**/.git/**", "**/.env"]}}
  - {name: outside, decision: deny, shell: {commands: [du, file, sort], paths: inside_root, protect: ["**/.git/**", "**/.env"]}}
  - {name: never, decision: deny, shell: [rm, curl]}
`

func decideWith(t *testing.T, policy, root, cmd string) Decision {
	t.Helper()
	p, err := Load([]byte(policy), "strict.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDecider(p, root)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := json.Marshal(map[string]string{"type": "approval_request", "kind": "shell_command", "command": cmd})
	return d.Decide(ev)
}

// One row per class of construct outside the plain subset, and per wrapper of the table.
func TestStrictSubset(t *testing.T) {
	for _, tc := range []struct{ cmd, want, why string }{
		// the plain subset
		{"git status && go test ./... | grep ok; ls || echo no", "allow:reads", ""},
		{"! git status", "allow:reads", ""},
		{"time go test ./...", "allow:reads", ""},
		{"cat < go.mod 2>&1 >/dev/null", "allow:reads", ""},
		// each construct stops an allow, and is named
		{"cat <<EOF\nx\nEOF", "ask", "heredoc"},
		{"cat <<< x", "ask", "herestring"},
		{"for HOME in src; do git status; done", "ask", "for"},
		{"select HOME in src; do git status; done", "ask", "select"},
		{"while true; do ls; done", "ask", "while"},
		{"if true; then ls; fi", "ask", "if"},
		{"case x in x) ls;; esac", "ask", "case"},
		{"f() { ls; }", "ask", "function"},
		{"(ls)", "ask", "subshell"},
		{"{ ls; }", "ask", "group"},
		{"echo $(git status)", "ask", "command-substitution"},
		{"cat <(ls)", "ask", "process-substitution"},
		{"cat $f", "ask", "parameter"},
		{"[[ -f x ]]", "ask", "test"},
		{"echo $'x'", "ask", "ansi-c-quote"},
		{`echo $"x"`, "ask", "locale-quote"},
		{"cat *.go", "ask", "glob"},
		{"cat \"*.go\" '{a,b}'", "allow:reads", ""},
		{"cat {a,b}", "ask", "brace"},
		{"coproc ls", "ask", "coproc"},
		{"ls &", "ask", "background"},
		{"declare x=1; ls", "ask", "declare"},
		{"a=(x) ls", "ask", "array"},
		{"git status \\\n", "ask", "line-continuation"},
		{"cat go.mod\x00", "ask", "control-character"},
		{"cat go.mod\r", "ask", "control-character"},
		{"cat \xff", "ask", "invalid-utf8"},
		{"cat ${x@P}", "ask", "parameter-operator"},
		{"cat ${x:=/etc/passwd}", "ask", "parameter-operator"},
		{"echo $((1))", "ask", "arithmetic"},
		{"ls {fd}>/dev/null", "ask", "fd-variable"},
		{"cat </dev/tcp/x/1", "ask", "network-redirect"},
		// opting in by name; the commands inside are still judged
		{"for f in a b; do gofmt -l $f; done", "allow:loops", ""},
		{"for f in a b; do gofmt -l $f; rm x; done", "deny:never", ""},
		{"for f in a b; do ls; done", "ask", "for"},
		{"wc -l <<'EOF'\nx\nEOF", "allow:here", ""},
		{"for PATH in a; do gofmt -l x; done", "allow:loops", ""}, // allow_env: true
		// assignments, however written
		{"HOME=src git status", "ask", "HOME"},
		{"HOME=src; git status", "ask", "HOME"},
		{"read HOME < x; git status", "ask", "HOME"},
		{"printf -v HOME src; git status", "ask", "HOME"},
		{"mapfile GIT_DIR < x; git status", "ask", "GIT_DIR"},
		{"getopts a PATH; git status", "ask", "PATH"},
		{"export -n HOME; git status", "ask", "declare"},
		{"unset HOME; git status", "ask", "HOME"},
		{"LANG=C git status", "allow:reads", ""},
		// second-order evaluation is seen by deny rules
		{"for x in '$(rm -rf ~)'; do cat <<< \"${x@P}\"; done", "deny:never", ""},
		// what bash reads after a backslash-newline the parser joins
		{"cat <<EOF\nx\nEO\\\nF\nrm -rf ~\nEOF", "deny:never", ""},
		{"cat \"$\\\n(rm -rf ~)\"", "deny:never", ""},
		{"cat go.mod #\\\nrm -rf ~", "deny:never", ""},
		// a command string fed to a shell or . through its input
		{"echo 'rm -rf /' | sh", "deny:never", ""},
		{". /dev/stdin <<< 'rm -rf /'", "deny:never", ""},
		{"echo rm -rf / | source /dev/stdin", "deny:never", ""},
		{"cat x | bash", "ask", "input"},
		{"trap -- 'rm -rf /' EXIT", "deny:never", ""},
		{"eval -- 'rm -rf /'", "deny:never", ""},
		{"time -p -- rm -rf /", "deny:never", ""},
		{"legacy ((; rm -rf /", "deny:never", ""},
	} {
		d := decideWith(t, strictPolicy, "/repo", tc.cmd)
		got := d.Verdict.String()
		if d.Decider == ByRule && d.Verdict != Ask {
			got += ":" + d.Rule
		}
		if got != tc.want || !strings.Contains(d.Reason, tc.why) {
			t.Errorf("%q: got %s (%s: %s), want %s naming %q", tc.cmd, got, d.Part, d.Reason, tc.want, tc.why)
		}
	}
}

func TestWrapperTable(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"env -vu cat rm -rf build", "deny:never"},
		{"env --sp='rm -rf' cat x", "deny:never"},
		{"env -iC/ cat etc/shadow", "ask"},
		{"env --ch=/root cat .ssh/id_rsa", "ask"},
		{"env --de cat x", "ask"}, // ambiguous: --debug or --default-signal
		{"env GOOS=linux go build ./...", "allow:reads"},
		{"env HOME=x git status", "ask"},
		{"env -u HOME git status", "ask"},
		{"env - cat x", "allow:reads"},
		{"command -p cat x", "allow:reads"},
		{"command -v rm", "ask"},
		{"command rm x", "deny:never"},
		{"builtin cd x", "ask"},
		{"exec -a name rm x", "deny:never"},
		{"nohup rm x", "deny:never"},
		{"nice --adj 5 rm -rf /", "deny:never"},
		{"nice -10 rm x", "deny:never"},
		{"nice -n 5 go test ./...", "allow:reads"},
		{"timeout --sig KILL 5 rm -rf /", "deny:never"},
		{"timeout -k 1 5 go test ./...", "allow:reads"},
		{"timeout --bogus 5 rm x", "deny:never"},
		{"timeout --bogus 5 go test", "ask"},
		{"stdbuf --output L rm x", "deny:never"},
		{"stdbuf -oL go test ./...", "allow:reads"},
		{"setsid -w rm x", "deny:never"},
		{"chronic -e rm x", "deny:never"},
		{"ionice -c 3 rm x", "deny:never"},
		{"time -o out go test", "ask"},
		{"/usr/bin/time --out=x rm y", "deny:never"},
		{"busybox rm x", "deny:never"},
		{"toybox rm x", "deny:never"},
		{"eval git status", "allow:reads"},
		{"watch --interval 1 rm -rf /", "deny:never"},
		{"watch -x rm x", "deny:never"},
		{"watch -n1 'git status; rm x'", "deny:never"},
		{"xargs -I{} rm {}", "deny:never"},
		{"xargs -0 -n1 rm", "deny:never"},
		{"xargs --max-a 1 rm", "deny:never"},
		{"flock /tmp/l rm x", "deny:never"},
		{"flock -n /tmp/l -c 'rm x'", "deny:never"},
		{"flock -w 5 x git status", "allow:reads"},
		{"sudo -u root rm x", "deny:never"},
		{"sudo --us root rm x", "deny:never"},
		{"sudo git status", "ask"},
		{"doas -u x rm y", "deny:never"},
		{"run0 --user=x rm y", "deny:never"},
		{"pkexec --user x rm y", "deny:never"},
		{"su root -c 'rm x'", "deny:never"},
		{"su -c 'rm x' root", "deny:never"},
		{"ssh host rm -rf /", "deny:never"},
		{"ssh -p 22 host 'curl x'", "deny:never"},
		{"find . -exec rm {} +", "deny:never"},
		{"find . -path ./x/m.go -execdir git status \\;", "ask"},
		{"find . -okdir rm {} \\;", "deny:never"},
		{"alias ls='rm -rf /'", "deny:never"},
		{"bash -c 'rm x'", "deny:never"},
		{"sh -c 'git status'", "allow:reads"},
		{"env env env env env env env env env env rm x", "deny:never"},
	} {
		d := decideWith(t, strictPolicy, "/repo", tc.cmd)
		got := d.Verdict.String()
		if d.Decider == ByRule && d.Verdict != Ask {
			got += ":" + d.Rule
		}
		if got != tc.want {
			t.Errorf("%q: got %s (%s: %s), want %s", tc.cmd, got, d.Part, d.Reason, tc.want)
		}
	}
}

func TestWrapperRowsParse(t *testing.T) {
	for name, spec := range wrapperTable {
		for _, f := range strings.Fields(spec.long) {
			if strings.TrimRight(f, "=:") == "" {
				t.Errorf("%s: empty long option", name)
			}
		}
		for e := range spec.effects {
			if len(e) == 1 {
				if _, ok := spec.shortArg(e[0]); !ok {
					t.Errorf("%s: effect on -%s, which is not an option", name, e)
				}
			} else if full, _, ok := spec.longOpt(e); !ok || full != e {
				t.Errorf("%s: effect on --%s, which is not an option", name, e)
			}
		}
	}
}

func TestPathsInsideRoot(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.WriteFile(filepath.Join(root, "src", "a.go"), []byte("x"), 0o644)
	os.Symlink("/etc", filepath.Join(root, "src", "out"))
	for _, tc := range []struct{ cmd, want string }{
		{"head src/a.go", "allow:inside"},
		{"head -n 5 ./src/a.go", "allow:inside"},
		{"head .", "allow:inside"},
		{"head /", "ask"},
		{"head //", "ask"},
		{"head /.", "ask"},
		{"head ../x", "ask"},
		{"head src/../../x", "ask"},
		{"head ~/.ssh/id_rsa", "ask"},
		{"head src/out/passwd", "ask"},
		{"head .git/config", "ask"},
		{"head src/.git/config", "ask"},
		{"head src/.env", "ask"},
		{"head --file=/etc/x", "ask"},
		{"head -f/etc/x", "ask"},
		{"head < /pr''oc/self/environ", "ask"},
		{"cd src && head a.go", "ask"},
		{"du --files0-from=/etc/x", "deny:outside"},
		{"file -f /etc/list", "deny:outside"},
		{"sort /dev/null", "ask"},
		{"sort < ~/.netrc", "deny:outside"},
		{"du -sh src", "ask"},
		{"grep -rsI AKIA /", "ask"}, // reads is a rule without paths: they are judged all the same
		{"grep -rsI AKIA src", "allow:reads"},
	} {
		d := decideWith(t, strictPolicy, root, tc.cmd)
		got := d.Verdict.String()
		if d.Decider == ByRule && d.Verdict != Ask {
			got += ":" + d.Rule
		}
		if got != tc.want {
			t.Errorf("%q: got %s (%s: %s), want %s", tc.cmd, got, d.Part, d.Reason, tc.want)
		}
	}
}

func TestAllowConstructsKey(t *testing.T) {
	for _, src := range []string{
		"version: 1\nrules:\n  - {name: x, decision: allow, shell: {commands: [ls], allow_constructs: [arithmetic]}}\n",
		"version: 1\nrules:\n  - {name: x, decision: allow, shell: {commands: [ls], allow_constructs: [loops]}}\n",
		"version: 1\nrules:\n  - {name: x, decision: allow, shell: {commands: [ls], paths: nowhere}}\n",
		"version: 1\nrules:\n  - {name: x, decision: deny, shell: {commands: [ls], paths: anywhere}}\n",
		"version: 1\nrules:\n  - {name: x, decision: allow, shell: {commands: [ls], paths: [inside_root, anywhere]}}\n",
		"version: 1\nrules:\n  - {name: x, decision: allow, shell: {commands: [ls], paths: [~/x]}}\n",
		"version: 1\nrules:\n  - {name: x, decision: allow, shell: {commands: [ls], paths: anywhere, protect: [x]}}\n",
	} {
		if _, err := Load([]byte(src), "x.yaml"); err == nil {
			t.Errorf("accepted %q", src)
		}
	}
}

// An allow pattern without $ no longer accepts the options that run programs or write files,
// so lint is quiet about it; it warns about the options a rule does accept, by naming them in
// a pattern or in allow_options, when nothing judges their values.
func TestLintAcceptedOptions(t *testing.T) {
	const head = "version: 1\nrules:\n"
	pathsGo := "  - {name: b, decision: deny, shell: {commands: [go], paths: inside_root}}\n"
	for src, want := range map[string]string{
		head + "  - {name: a, decision: allow, shell: [\"go test\"]}\n":                                                            "",
		head + "  - {name: a, decision: allow, shell: [\"go build -o\"]}\n":                                                        "accepts go -o, which writes files",
		head + "  - {name: a, decision: allow, shell: [\"go build -o\"]}\n" + pathsGo:                                              "",
		head + "  - {name: a, decision: allow, shell: [\"go build -o bin/x\"]}\n":                                                  "",
		head + "  - {name: a, decision: allow, shell: {commands: [go build], allow_options: [-toolexec]}}\n" + pathsGo:             "accepts go -toolexec, which runs other programs",
		head + "  - {name: a, decision: allow, shell: {commands: [go build, gofmt -l], allow_options: [-cpuprofile]}}\n" + pathsGo: "accepts gofmt -cpuprofile, which writes files",
		head + "  - {name: a, decision: allow, shell: [\"make -C src test\"]}\n":                                                   "",
		head + "  - {name: a, decision: allow, shell: [\"make --directory\"]}\n":                                                   "accepts make --directory, which changes directory",
	} {
		p, err := Load([]byte(src), "x.yaml")
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, f := range Lint(p) {
			if strings.Contains(f.Msg, "with any value") {
				got = f.Msg
			}
		}
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("%q: lint says %q, want %q", src, got, want)
		}
	}
}
