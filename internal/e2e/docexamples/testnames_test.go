package docexamples

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// docTestRE is a test, fuzz test or script a page names: `TestX`, `FuzzX`, `x.txtar`.
	docTestRE    = regexp.MustCompile("`((?:Test|Fuzz|Example)[A-Z][A-Za-z0-9_]*|[a-z0-9_-]+\\.txtar)`")
	goFuncRE     = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Example)[A-Za-z0-9_]*)\(`)
	scriptFileRE = regexp.MustCompile(`^[a-z0-9_-]+\.txtar$`)
)

// The tests the README and the pages of docs/ name as holding a promise (docs/reliability.md
// above all) are tests of the repository: a renamed or removed test fails here, not in a
// reader's search.
func TestDocsNameTestsThatExist(t *testing.T) {
	have := map[string]bool{}
	err := filepath.WalkDir("../../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bench" && filepath.Dir(p) == "../../..") {
			return filepath.SkipDir
		}
		switch {
		case strings.HasSuffix(p, "_test.go"):
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range goFuncRE.FindAllStringSubmatch(string(b), -1) {
				have[m[1]] = true
			}
		case scriptFileRE.MatchString(d.Name()):
			have[d.Name()] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range append(docPages(t), "docs/cookbook.md") {
		b, err := os.ReadFile("../../../" + page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range docTestRE.FindAllStringSubmatch(string(b), -1) {
			if !have[m[1]] {
				t.Errorf("%s names %s, which no test of the repository is", page, m[1])
			}
		}
	}
}
