package policy

import (
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
