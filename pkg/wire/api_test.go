package wire_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fuseraft/fr/internal/testkit/golden"
)

// The exported API is pinned: what go doc -all prints of the package is testdata/api.txt. A
// change to it is a change for every client; go test -update rewrites the file, for the
// change to be seen in review.
func TestAPI(t *testing.T) {
	// go test caches a result by the files the test opens: the sources go doc reads are
	// opened here, so that a change to any of them runs the test again (a new exported
	// function that nothing calls leaves the test binary as it was).
	sources, err := filepath.Glob("*.go")
	if err != nil || len(sources) == 0 {
		t.Fatalf("no sources: %v", err)
	}
	for _, f := range sources {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "doc", "-all", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go doc -all: %v\n%s", err, stderr.Bytes())
	}
	golden.Check(t, "testdata/api.txt", string(out))
}
