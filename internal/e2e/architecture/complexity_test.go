package architecture

import (
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/fzipp/gocyclo"
)

// maxComplexity is the cyclomatic complexity no function outside tests reaches: a function
// at 30 mixes reading, deciding and printing, and is split by what it does.
const maxComplexity = 30

// splitting are the functions still at maxComplexity or more while they are being split
// (split in progress), as gocyclo names them: "package function". Each is reported when it
// no longer reaches the bound, so the list empties.
var splitting = []string{}

// notTests matches, under root, the files of tests and what go build skips.
func notTests(root string) *regexp.Regexp {
	return regexp.MustCompile(`_test\.go$|^` + regexp.QuoteMeta(root) + `/(.*/)?(testdata/|vendor/|[._])`)
}

func TestNoComplexFunctions(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	stats := gocyclo.Analyze([]string{root}, notTests(root))
	if len(stats) < 500 {
		t.Fatalf("gocyclo found %d functions; the module has more", len(stats))
	}
	over := map[string]bool{}
	for _, s := range stats {
		if s.Complexity < maxComplexity {
			continue
		}
		name := s.PkgName + " " + s.FuncName
		over[name] = true
		if !contains(splitting, name) {
			t.Errorf("%s: %s has cyclomatic complexity %d; split it by what it does (decode, decide, print) below %d",
				s.Pos, name, s.Complexity, maxComplexity)
		}
	}
	for _, name := range splitting {
		if !over[name] {
			t.Errorf("%s is below %d now: take it off the list of functions being split", name, maxComplexity)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// The bound is what gocyclo counts: a function of 29 branches passes, one of 30 does not.
func TestComplexityCounted(t *testing.T) {
	for _, tt := range []struct {
		ifs  int
		want int
	}{{0, 1}, {28, 29}, {29, 30}} {
		src := "package p\nfunc f(x int) {\n"
		for i := range tt.ifs {
			src += fmt.Sprintf("\tif x == %d {\n\t\tx++\n\t}\n", i)
		}
		src += "}\n"
		if got := complexityOf(t, src); got != tt.want {
			t.Errorf("%d ifs: complexity %d, want %d", tt.ifs, got, tt.want)
		}
	}
}

func complexityOf(t *testing.T, src string) int {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	stats := gocyclo.AnalyzeASTFile(f, fset, nil)
	if len(stats) != 1 {
		t.Fatalf("%d functions", len(stats))
	}
	return stats[0].Complexity
}
