package policy

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestRiskyUses reads command lines as each program reads its options and lists the words an
// allow rule must name: options that are not known to be harmless, as they are spelled.
func TestRiskyUses(t *testing.T) {
	for cmd, want := range map[string]string{
		"make test":                                 "",
		"make test -C src":                          "-C",
		"make -sCsrc test":                          "-C",
		"make --dir src test":                       "--dir", // an abbreviation is unknown
		"make --directory=src":                      "--directory",
		"make -j4 test":                             "",
		"make -j -C src":                            "-C",
		"make -o x test":                            "",
		"make test CC=./evil":                       "CC=",
		"make -- test SHELL=/bin/sh":                "SHELL=",
		"make -fother.mk":                           "-f",
		"make --eval=x":                             "--eval",
		"make -E x":                                 "-E",
		"make -I /tmp":                              "-I",
		"git diff":                                  "",
		"git diff -p --text --stat":                 "",
		"git -p diff":                               "-p",
		"git -C src status":                         "-C",
		"git -c alias.x=!sh x":                      "-c",
		"git --git-dir=/tmp/x status":               "--git-dir",
		"git log -C -c":                             "",
		"git diff --outp=x":                         "--outp",
		"git diff --ext-diff":                       "--ext-diff",
		"git diff --textc":                          "--textc",
		"git grep -O x":                             "-O",
		"git diff -O order.txt":                     "",
		"git format-patch -o /tmp HEAD~1":           "-o",
		"git ls-remote --upload-pack=x o":           "--upload-pack",
		"go test ./...":                             "",
		"go test ./... -c -o ~/bin/git":             "-o",
		"go test ./... -coverprofile=x":             "-coverprofile",
		"go test --outputdir /tmp ./...":            "-outputdir",
		"go test ./... -args -test.fuzzcachedir=/x": "-fuzzcachedir",
		"go build -debug-actiongraph=/x":            "-debug-actiongraph",
		"go env -w X=1":                             "-w",
		"go test -w ./...":                          "-w", // go test has no -w
		"go test -count=1 -run TestX ./...":         "",
		"gofmt -l -w x.go":                          "-w",
		"staticcheck -debug.cpuprofile=x":           "-debug.cpuprofile",
		"find . -name x -fprint y":                  "-fprint",
		"find -L . -name x":                         "-L",
		"find . -follow":                            "-follow",
		"find . -delete":                            "-delete",
		"sort -u f":                                 "",
		"sort -uo x f":                              "-o",
		"sort -t o f":                               "",
		"sort --compress=sh f":                      "--compress",
		"sort -T /tmp f":                            "-T",
		"uniq -c f":                                 "",
		"uniq f out":                                "out",
		"uniq -f 1 f":                               "",
		"tree -L 2 src":                             "",
		"tree -aR":                                  "-R",
		"tar xzf a.tar":                             "-x -f",
		"tar --to-command=sh -t":                    "--to-command",
		"rg -iz x":                                  "-z",
		"rg -e -z x":                                "-z", // a value that looks like an option is read as one
		"cargo test -- --logfile x":                 "--logfile",
		"cargo test -Zx":                            "-Z",
		"npm test --prefix /tmp":                    "--prefix",
		"pytest -x -k 'not slow' -rp t":             "",
		"pytest -xpmod":                             "-p",
		"pytest @args":                              "@",
		"python -m pytest -p x":                     "-p",
		"ls -la":                                    "",
		// unknown options, cluster letters and plugin options
		"ls -laQ9":                                "-9",
		"grep -Prn x .":                           "",
		"grep -Xrn x .":                           "-X",
		"grep --pre=x y":                          "--pre",
		"grep -R x .":                             "-R",
		"git log --oneline -5 --author=x":         "",
		"git log --exec=id":                       "--exec",
		"git log --no-ext-diff --no-textconv":     "",
		"git log --no-output=x":                   "--no-output",
		"git -c core.pager=id log":                "-c",
		"git commit -m x":                         "-m", // a subcommand the table does not know
		"git status -sb":                          "",
		"pytest --cov-report=html:/home/u/.ssh":   "--cov-report",
		"pytest --html=/etc/profile.d/x.sh":       "--html",
		"pytest -n 4":                             "-n", // pytest-xdist, a plugin
		"go test -run X -v ./...":                 "",
		"go test ./... -args -test.run=X -custom": "-custom",
		"go vet -printfuncs=x ./...":              "-printfuncs",
		"go build -trimpath -tags=x ./...":        "",
		"go run ./x -o y":                         "-o", // a subcommand the table does not know
		"cargo test --release -- --nocapture":     "",
		"cargo test -- --nocapture --foo":         "--foo",
		"npm test -- --outputFile=/x":             "--outputFile",
		"find . -name x -type f":                  "",
		"find . -name -delete":                    "", // the value of -name
		"find . -newermt 2020 -maxdepth 1 -fls x": "-fls",
		"test -f go.mod -a -d src":                "",
		"[ -f go.mod ]":                           "",
		"echo -n --pre=x -z":                      "",
		"tar tf a.tar":                            "-f",
		"tar -tzvf a.tar":                         "-f",
		"mytool -x --y=z -- -w":                   "-x --y -w",
		"./run.sh --fast":                         "--fast",
		"head -20 go.mod":                         "",
		"sort -co/etc/x f":                        "-o", // sort -c takes no value: -o does
		"sort --check=quiet f":                    "",
		"ls -FL src":                              "-L", // ls -F takes no value (--classify=WHEN does)
		"ls --classify=auto src":                  "",
		"tail -n5 -f x":                           "",
		"cat -A -- -x":                            "",
	} {
		parts := Analyze(cmd)
		if len(parts) != 1 {
			t.Fatalf("%s: %d parts", cmd, len(parts))
		}
		var got []string
		for _, u := range parts[0].riskyUses() {
			got = append(got, u.spell)
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s: uses %q, want %q", cmd, g, want)
		}
	}
}

// TestGluedValueEveryProgram: for every program of the table and every short option that takes
// a value, that option glued at the end of a cluster (after a harmless letter, when the program
// has one) names the file that follows its letter, and an allow rule that keeps paths inside
// the root does not allow reading /etc/shadow through it.
func TestGluedValueEveryProgram(t *testing.T) {
	root := t.TempDir()
	names := make([]string, 0, len(programOptions))
	for n := range programOptions {
		names = append(names, n)
	}
	sort.Strings(names)
	seen := map[*optTable]bool{}
	tried := 0
	for _, name := range names {
		s := programOptions[name]
		if s.style != styleGetopt {
			continue
		}
		type table struct {
			sub      string
			t, extra *optTable
		}
		tables := []table{{"", s.opts, nil}}
		subs := make([]string, 0, len(s.subs))
		for k := range s.subs {
			subs = append(subs, k)
		}
		sort.Strings(subs)
		for _, k := range subs {
			tb := table{sub: k, t: s.subs[k]}
			if s.globalAfter {
				tb.extra = s.opts
			}
			tables = append(tables, tb)
		}
		for _, tb := range tables {
			if seen[tb.t] && tb.sub == "" {
				continue
			}
			seen[tb.t] = true
			prefix := strings.TrimSpace(name + " " + tb.sub)
			first := ""
			for c := byte('a'); c <= 'z' && first == ""; c++ {
				if d := tb.t.shortOpt(c); d != nil && d.arg == noArg && d.risk == 0 {
					first = string(c)
				}
			}
			p := mustLoad(t, "version: 1\ndefault: ask\nrules:\n  - {name: r, decision: allow, shell: {commands: ["+strconv.Quote(prefix)+"], paths: inside_root}}\n")
			for c := 0; c < 128; c++ {
				d := tb.t.short[c]
				if d == nil || d.arg == noArg || s.subcmd && tb.sub == "" {
					continue
				}
				tried++
				cmd := prefix + " -" + first + string(rune(c)) + "/etc/shadow go.mod"
				parts := Analyze(cmd)
				if len(parts) != 1 {
					t.Fatalf("%s: %d parts", cmd, len(parts))
				}
				at := len(strings.Fields(prefix))
				if got := parts[0].PathCandidates(at); !reflect.DeepEqual(got, []string{"/etc/shadow"}) {
					t.Errorf("%s: the word %q names %q, want /etc/shadow", cmd, parts[0].Words[at], got)
				}
				dd, err := NewDecider(p, root)
				if err != nil {
					t.Fatal(err)
				}
				ev, _ := json.Marshal(map[string]string{"type": "approval_request", "kind": "shell_command", "command": cmd})
				if got := dd.Decide(ev); got.Verdict == Allow {
					t.Errorf("%s: allowed (%s)", cmd, got.Reason)
				}
			}
		}
	}
	if tried < 60 {
		t.Errorf("only %d options tried", tried)
	}
}

// TestPathCandidates: where a word may name a file, as its program reads it.
func TestPathCandidates(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		at   int
		want []string
	}{
		{"git blame -wS/etc/shadow go.mod", 2, []string{"/etc/shadow"}},
		{"grep -Ff/proc/self/environ -c go.mod", 1, []string{"/proc/self/environ"}},
		{"file -bm/run/secrets/token go.mod", 1, []string{"/run/secrets/token"}},
		{"rg -if/etc/shadow x .", 1, []string{"/etc/shadow"}},
		{"grep --file=/etc/shadow x", 1, []string{"/etc/shadow"}},
		{"grep --file /etc/shadow x", 2, []string{"/etc/shadow"}},
		{"grep -f -/x y", 2, []string{"-/x", "x"}}, // a value that looks like an option is judged too
		{"grep -la go.mod", 1, nil},
		{"grep -iQf/etc/x y", 1, []string{"f/etc/x", "/etc/x", "etc/x", "tc/x", "c/x", "/x", "x"}},
		{"go test -o=/tmp/x ./...", 2, []string{"/tmp/x"}},
		{"go test -coverprofile /tmp/x ./...", 3, []string{"/tmp/x"}},
		{"go test -v ./...", 2, nil},
		{"tar tf/etc/x", 1, []string{"/etc/x"}},
		{"mytool -x/etc/x", 1, []string{"/etc/x", "etc/x", "tc/x", "c/x", "/x", "x"}},
		{"mytool --file=/etc/x", 1, []string{"/etc/x"}},
		{"mytool --file /etc/x", 2, []string{"/etc/x"}},
		{"cat -- -x", 2, []string{"-x"}},
		{"ls", 0, []string{"ls"}},
	} {
		parts := Analyze(tc.cmd)
		if got := parts[0].PathCandidates(tc.at); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: word %d names %q, want %q", tc.cmd, tc.at, got, tc.want)
		}
	}
	// which values the table says name a file, for the path rules
	for _, tc := range []struct {
		cmd  string
		at   int
		file bool
	}{
		{"grep -Ff/etc/x y", 1, true},
		{"grep -f /etc/x y", 2, true},
		{"grep --file=/etc/x y", 1, true},
		{"grep -e /etc/x y", 2, false},
		{"grep -e/etc/x y", 1, false},
		{"grep -A 3 x y", 2, false},
		{"git blame -wS/etc/x go.mod", 2, true},
		{"git blame --contents /etc/x go.mod", 3, true},
		{"go test -coverprofile=/tmp/x ./...", 2, true},
		{"go test -o /tmp/x ./...", 3, true},
		{"go test -run /tmp/x ./...", 3, false},
		{"find . -newer /etc/x", 3, true},
		{"find . -name /etc/x", 3, false},
		{"grep -iQf/etc/x y", 1, false}, // unsure: every tail is judged
		{"cat /etc/x", 1, false},        // an operand, not an option's value
	} {
		if got := Analyze(tc.cmd)[0].NamesFile(tc.at); got != tc.file {
			t.Errorf("%s: word %d names a file: %v, want %v", tc.cmd, tc.at, got, tc.file)
		}
	}
}

// FuzzOptions reads random command lines' options: it never panics, each path candidate is
// a tail of its word, and a word the reading says needs naming is in the line.
func FuzzOptions(f *testing.F) {
	for _, s := range []string{"git blame -wS/etc/shadow go.mod", "grep -iQf/x --file=y -- -z", "tar tzvf a", "go test ./... -args -test.v -o x",
		"cargo test -p x -- --logfile y", "find . -name -delete -newermt x", "make -j -C src CC=x", "pytest @a -xpno:x", "git -c a=b log --no-ext-diff -5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > 4096 {
			return
		}
		for _, p := range Analyze(cmd) {
			for _, u := range p.riskyUses() {
				if u.at <= 0 || u.at >= len(p.Words) || u.spell == "" {
					t.Fatalf("%q: a use of %q at %d of %d words", cmd, u.spell, u.at, len(p.Words))
				}
			}
			for i, w := range p.Words {
				for _, c := range p.PathCandidates(i) {
					if !strings.HasSuffix(w, c) || c == "" {
						t.Fatalf("%q: word %q names %q", cmd, w, c)
					}
				}
			}
		}
	})
}

// TestEveryRow: each row of programOptions has a command its options allow (no word needs
// naming) and one with an option it does not (the words that need naming); a row added
// without a line here fails.
func TestEveryRow(t *testing.T) {
	rows := map[string][2]string{
		"echo":              {"echo -n -e --pre=x", ""},
		"true":              {"true --anything", ""},
		"false":             {"false -x", ""},
		":":                 {": -x", ""},
		"pwd":               {"pwd -P", "pwd -Z => -Z"},
		"which":             {"which -a go", "which --exec=x go => --exec"},
		"test":              {"test -f go.mod -a -d src", "test -q x => -q"},
		"[":                 {"[ -n x -o -z y ]", "[ --x ] => --x"},
		"read":              {"read -r -p x line", "read -z line => -z"},
		"printf":            {"printf -v out %s x", "printf -z x => -z"},
		"ls":                {"ls -lahtr --color=auto src", "ls -laL src => -L"},
		"cat":               {"cat -nA go.mod", "cat --pre=x f => --pre"},
		"head":              {"head -n 5 -q go.mod", "head --foo f => --foo"},
		"tail":              {"tail -f -n +5 go.mod", "tail -zx f => -x"},
		"wc":                {"wc -lwc go.mod", "wc --files0-from=x => --files0-from"},
		"grep":              {"grep -rnIi -C3 --include=*.go x .", "grep -rR x . => -R"},
		"egrep":             {"egrep -c 'a|b' f", "egrep -Rc x . => -R"},
		"fgrep":             {"fgrep -x y f", "fgrep --dereference-recursive y . => --dereference-recursive"},
		"rg":                {"rg -n -g '*.go' --hidden x src", "rg -L x src => -L"},
		"sort":              {"sort -rnk2 -t: f", "sort -uo x f => -o"},
		"uniq":              {"uniq -c -f 1 f", "uniq -c f out => out"},
		"diff":              {"diff -u --label a go.mod go.sum", "diff -rN a b => -r"},
		"tree":              {"tree -a -L 2 -I vendor", "tree -al src => -l"},
		"file":              {"file -b --mime-type go.mod", "file -z x.gz => -z"},
		"stat":              {"stat -c %s go.mod", "stat --printf=%s -Z f => -Z"},
		"du":                {"du -sh --max-depth=1 .", "du -shL . => -L"},
		"df":                {"df -hT --output=source .", "df --foo => --foo"},
		"find":              {"find . -type f -name '*.go' -not -path './vendor/*' -print0", "find . -name x -delete => -delete"},
		"make":              {"make -j4 -k --no-print-directory test", "make -C src test => -C"},
		"git":               {"git --no-pager log --oneline --graph -20", "git log --ext-diff => --ext-diff"},
		"go":                {"go test -race -count=1 -run 'TestA' ./...", "go test -toolexec=./x ./... => -toolexec"},
		"gofmt":             {"gofmt -l -s .", "gofmt -l -w x.go => -w"},
		"staticcheck":       {"staticcheck -checks=all -tests=false ./...", "staticcheck -debug.cpuprofile=x ./... => -debug.cpuprofile"},
		"tar":               {"tar -tzv", "tar -tzvf a.tar => -f"},
		"cargo":             {"cargo test --release -p core -- --nocapture", "cargo test -- --logfile x => --logfile"},
		"npm":               {"npm test --silent", "npm test --prefix /x => --prefix"},
		"pytest":            {"pytest -x -q -k 'not slow' --tb=short", "pytest --html=x => --html"},
		"py.test":           {"py.test -q", "py.test -p x => -p"},
		"python -m pytest":  {"python -m pytest -q tests", "python -m pytest --cov=x => --cov"},
		"python3 -m pytest": {"python3 -m pytest -x", "python3 -m pytest -n 4 => -n"},
	}
	for name := range programOptions {
		if _, ok := rows[name]; !ok {
			t.Errorf("row %s has no test here", name)
		}
	}
	for name, tc := range rows {
		for i, c := range tc {
			if c == "" {
				continue
			}
			cmd, want, _ := strings.Cut(c, " => ")
			if i == 1 && want == "" {
				t.Fatalf("%s: %q says no option to name", name, c)
			}
			parts := Analyze(cmd)
			if len(parts) == 0 && name == ":" {
				continue // the analysis drops the null command
			}
			if len(parts) != 1 {
				t.Fatalf("%s: %d parts", cmd, len(parts))
			}
			if s, _ := specFor(&parts[0]); s != programOptions[name] {
				t.Errorf("%s: not read with the row %s", cmd, name)
			}
			var got []string
			for _, u := range parts[0].riskyUses() {
				got = append(got, u.spell)
			}
			if g := strings.Join(got, " "); g != want {
				t.Errorf("%s: %q needs naming, want %q", cmd, g, want)
			}
		}
	}
}

// TestUnknownOptionsDenyAndAsk: options are an allow-list for allow rules only; an option the
// table does not know never keeps a deny or ask rule from matching.
func TestUnknownOptionsDenyAndAsk(t *testing.T) {
	p := mustLoad(t, `version: 1
default: ask
rules:
  - {name: no-grep, decision: deny, shell: [grep]}
  - {name: log-asks, decision: ask, shell: ["git log"]}
  - {name: no-tool, decision: deny, shell: [mytool]}
  - {name: all, decision: allow, shell: [grep, git, mytool]}
`)
	d, err := NewDecider(p, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]string{
		"grep --no-such-option x f":  "deny:no-grep",
		"grep -QZR x f":              "deny:no-grep",
		"grep --fil=/etc/shadow x f": "deny:no-grep",
		"git log --exec=id":          "ask:log-asks",
		"git log --outp=/tmp/x":      "ask:log-asks",
		"mytool --anything -xyz":     "deny:no-tool",
	} {
		ev, _ := json.Marshal(map[string]string{"type": "approval_request", "kind": "shell_command", "command": cmd})
		got := d.Decide(ev)
		if g := got.Verdict.String() + ":" + got.Rule; g != want {
			t.Errorf("%s: %s (%s), want %s", cmd, g, got.Reason, want)
		}
	}
}
