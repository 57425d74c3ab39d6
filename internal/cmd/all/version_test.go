package all

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

const (
	versionVar  = "github.com/fuseraft/fr/internal/cmdutil.Version"
	revisionVar = "github.com/fuseraft/fr/internal/cmdutil.Revision"
)

// A build stamped with -ldflags -X prints the stamped version and revision, whatever GOFLAGS
// says (its own -ldflags and -buildvcs included): fr-ls through urfave/cli, fr-filter through
// its own argument reader.
func TestVersionStampedWithLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two commands")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	dir := t.TempDir()
	const version, revision = "v0.3.0-12-gfeed123-dirty", "feed1234567890abcdef1234567890abcdef1234"
	ldflags := "-X " + versionVar + "=" + version + " -X " + revisionVar + "=" + revision
	build := exec.Command(gobin, "build", "-ldflags", ldflags, "-o", dir+string(filepath.Separator), "../../../cmd/fr-ls", "../../../cmd/fr-filter")
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false -ldflags=-s")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, name := range []string{"fr-ls", "fr-filter"} {
		for _, flag := range []string{"--version", "-V"} {
			out, err := exec.Command(filepath.Join(dir, name), flag).CombinedOutput()
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", name, flag, err, out)
			}
			want := name + " version " + version + " (rev " + revision + ")\n"
			if string(out) != want {
				t.Errorf("%s %s = %q, want %q", name, flag, out, want)
			}
		}
	}
}

// make build stamps what git says of the clone: the version from git describe, the revision
// from git rev-parse, with -ldflags on the command line, which go applies after GOFLAGS.
func TestMakeBuildStampsVersionAndRevision(t *testing.T) {
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	root := "../../.."
	// opened, so that go test runs the test again when the Makefile changes
	if _, err := os.ReadFile(filepath.Join(root, "Makefile")); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		if err != nil {
			t.Skipf("not a git clone: git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	version := git("describe", "--tags", "--always", "--dirty")
	revision := git("rev-parse", "HEAD")
	cmd := exec.Command("make", "-n", "-C", root, "build")
	cmd.Env = append(os.Environ(), "GOFLAGS=-ldflags=-s")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make -n build: %v", err)
	}
	var line string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, " build ") && strings.Contains(l, "./cmd/...") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("make -n build runs no go build of ./cmd/...:\n%s", out)
	}
	ld := regexp.MustCompile(`-ldflags[ =]'([^']*)'`).FindStringSubmatch(line)
	if ld == nil {
		t.Fatalf("make build passes no -ldflags: %s", line)
	}
	for _, want := range []string{"-X " + versionVar + "=" + version, "-X " + revisionVar + "=" + revision} {
		if !strings.Contains(ld[1]+" ", want+" ") {
			t.Errorf("make build's -ldflags %q lacks %q", ld[1], want)
		}
	}
}
