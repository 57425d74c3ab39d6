package architecture

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/fuseraft/fr"

// leaves are the packages of ours pkg/wire may import; they import nothing of ours.
var leaves = []string{"internal/jsonscan", "internal/proc", "internal/humanize"}

// listers are the packages under internal/cmd that list every command (for man pages,
// completions and their tests): the only ones that may import several commands.
var listers = []string{"internal/cmd/all", "internal/cmd/mangen"}

// pkg is a package of the module as go list describes it, paths relative to the module.
// Only the imports of its non-test files count: a test may run any command (fr-sim as
// fuseraft most often) and use the test kit.
type pkg struct {
	Path    string   // internal/cmd/ls
	Imports []string // of its non-test files, ours only
}

// moving are imports that break the layers and are being moved away at the time of writing
// (split in progress): each is reported when it no longer exists, so the list empties.
var moving = []string{}

// command is the command a package belongs to (internal/cmd/<tool>/... is <tool>), or "".
func command(path string) string {
	rest, ok := strings.CutPrefix(path, "internal/cmd/")
	if !ok || slices.Contains(listers, path) {
		return ""
	}
	tool, _, _ := strings.Cut(rest, "/")
	return tool
}

func isCommand(path string) bool { return strings.HasPrefix(path, "internal/cmd/") }

func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// isShared reports whether path is a shared package: internal/<name>, neither a command, nor
// the test kit, nor a test-only suite.
func isShared(path string) bool {
	return strings.HasPrefix(path, "internal/") && !under(path, "internal/cmd") &&
		!under(path, "internal/testkit") && !under(path, "internal/e2e")
}

// violations lists every import of pkgs that breaks the layers, one line each.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			where := p.Path
			switch {
			case strings.HasPrefix(p.Path, "cmd/fr-") && isCommand(imp) && imp != "internal/cmd/"+strings.TrimPrefix(p.Path, "cmd/fr-"):
				out = append(out, where+" imports "+imp+": cmd/fr-<tool> runs internal/cmd/<tool> and no other")
			case command(p.Path) != "" && command(imp) != "" && command(imp) != command(p.Path):
				out = append(out, where+" imports "+imp+": a command imports no other command")
			case isShared(p.Path) && isCommand(imp):
				out = append(out, where+" imports "+imp+": a shared package imports no command")
			case under(imp, "internal/testkit") && !under(p.Path, "internal/testkit"):
				out = append(out, where+" imports "+imp+": only tests import the test kit")
			case under(p.Path, "pkg/wire") && !under(imp, "pkg/wire") && !slices.Contains(leaves, imp):
				out = append(out, where+" imports "+imp+": pkg/wire imports only "+strings.Join(leaves, ", "))
			case slices.Contains(leaves, p.Path) && imp != p.Path:
				out = append(out, where+" imports "+imp+": a leaf pkg/wire stands on imports nothing of ours")
			}
		}
	}
	return out
}

// packages lists the module's packages with go list, imports of ours only.
func packages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...")
	cmd.Dir = "../../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	ours := func(imports []string) []string {
		var rel []string
		for _, imp := range imports {
			if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				rel = append(rel, r)
			}
		}
		return rel
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		path, _ := strings.CutPrefix(p.ImportPath, module+"/")
		pkgs = append(pkgs, pkg{Path: path, Imports: ours(p.Imports)})
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; the module has more", len(pkgs))
	}
	return pkgs
}

// readSources opens every Go file of the module: go test caches a result by the files the
// test opens, and go list, which reads them here, runs in a process of its own.
func readSources(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLayers(t *testing.T) {
	readSources(t, "../../..")
	seen := map[string]bool{}
	for _, v := range violations(packages(t)) {
		if m := movingMatch(v); m != "" {
			seen[m] = true
			continue
		}
		t.Error(v)
	}
	for _, m := range moving {
		if !seen[m] {
			t.Errorf("%s no more: take it off the list of imports being moved", m)
		}
	}
}

func movingMatch(v string) string {
	for _, m := range moving {
		if strings.HasPrefix(v, m+":") {
			return m
		}
	}
	return ""
}

// Each rule catches what it is written for, and nothing else.
func TestViolations(t *testing.T) {
	for _, tt := range []struct {
		pkg  pkg
		want string // "" for none
	}{
		{pkg{"internal/cmd/ls", []string{"internal/cmdutil", "pkg/wire", "internal/jq"}}, ""},
		{pkg{"cmd/fr-ls", []string{"internal/cmd/ls", "internal/cmdutil"}}, ""},
		{pkg{"cmd/fr-ls", []string{"internal/cmd/sim"}}, "runs internal/cmd/<tool> and no other"},
		{pkg{"internal/cmd/ls", []string{"internal/cmd/sim"}}, "a command imports no other command"},
		{pkg{"internal/cmd/sim/serve", []string{"internal/cmd/sim/scenario"}}, ""},
		{pkg{"internal/cmd/sim/serve", []string{"internal/cmd/approve/policy"}}, "a command imports no other command"},
		{pkg{"internal/cmd/all", []string{"internal/cmd/ls", "internal/cmd/sim"}}, ""},
		{pkg{"internal/cmd/mangen", []string{"internal/cmd/all"}}, ""},
		{pkg{"internal/cmdutil", []string{"internal/cmd/all"}}, "a shared package imports no command"},
		{pkg{"internal/render", []string{"internal/cmd/stream"}}, "a shared package imports no command"},
		{pkg{"internal/render", []string{"internal/termsafe"}}, ""},
		{pkg{"internal/cmd/filter", []string{"internal/testkit"}}, "only tests import the test kit"},
		{pkg{"internal/console", []string{"internal/testkit/screentest"}}, "only tests import the test kit"},
		{pkg{"internal/testkit/screentest", []string{"internal/testkit"}}, ""},
		{pkg{"pkg/wire", []string{"internal/jsonscan", "internal/proc", "internal/humanize"}}, ""},
		{pkg{"pkg/wire", []string{"internal/cmdutil"}}, "pkg/wire imports only"},
		{pkg{"internal/jsonscan", []string{"internal/termsafe"}}, "a leaf pkg/wire stands on imports nothing of ours"},
		{pkg{"internal/proc", []string{"pkg/wire"}}, "a leaf pkg/wire stands on imports nothing of ours"},
	} {
		got := violations([]pkg{tt.pkg})
		switch {
		case tt.want == "" && len(got) > 0:
			t.Errorf("%v: %q, want none", tt.pkg, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
			t.Errorf("%v: %q, want one saying %q", tt.pkg, got, tt.want)
		}
	}
}
