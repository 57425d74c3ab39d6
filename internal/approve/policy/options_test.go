package policy

import (
	"strings"
	"testing"
)

// TestRiskyUses reads command lines as each program reads its options and lists the options
// of programOptions they use.
func TestRiskyUses(t *testing.T) {
	for cmd, want := range map[string]string{
		"make test":                                 "",
		"make test -C src":                          "-C",
		"make -sCsrc test":                          "-C",
		"make --dir src test":                       "--directory",
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
		"git diff --outp=x":                         "--output",
		"git diff --ext-diff":                       "--ext-diff",
		"git diff --textc":                          "--textconv",
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
		"go test -w ./...":                          "",
		"go test -count=1 -run TestX ./...":         "",
		"gofmt -l -w x.go":                          "-w",
		"staticcheck -debug.cpuprofile=x":           "-debug.*",
		"find . -name x -fprint y":                  "-fprint",
		"find -L . -name x":                         "-L",
		"find . -follow":                            "-follow",
		"find . -delete":                            "-delete",
		"sort -u f":                                 "",
		"sort -uo x f":                              "-o",
		"sort -t o f":                               "",
		"sort --compress=sh f":                      "--compress-program",
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
