package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// linkFreeBoth judges the relative paths ss in one prompt with and without the names looked
// at once per prompt (fastNames), and fails when any answer differs.
func linkFreeBoth(t testing.TB, d *Decider, ss []string) {
	t.Helper()
	defer func() { fastNames = true }()
	var got [2][]bool
	for i, fast := range []bool{true, false} {
		fastNames = fast
		d.gen++
		for _, s := range ss {
			got[i] = append(got[i], d.lookLinkFree(s))
		}
	}
	for i := range ss {
		if got[0][i] != got[1][i] {
			t.Fatalf("%q among %q: with names looked at once %v, each looked at %v", ss[i], ss, got[0][i], got[1][i])
		}
	}
}

func namesRoot(t testing.TB) *Decider {
	root := attackRoot(t)
	os.MkdirAll(filepath.Join(root, "src", "pkg", "deep"), 0o755)
	os.WriteFile(filepath.Join(root, "src", "a.go"), []byte("x"), 0o644)
	os.Symlink("../../etc", filepath.Join(root, "src", "pkg", "up"))
	d, err := NewDecider(&Policy{}, root)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var namesPaths = []string{"src/a.go", "src/b.go", "src/etc/passwd", "src/pkg/deep/x", "src/pkg/up/x", "src/pkg/up",
	"src", "./src/./etc", "src//pkg//up/y", "internal/x/env", "internal/x/y", "docs/x", "src/a.go/x", "nothere/x", "..."}

// TestLinkFreeNamesOnce judges paths sharing their first names, in every order of pairs and all
// together, with each name looked at once per prompt and each time: the answers are the same.
func TestLinkFreeNamesOnce(t *testing.T) {
	d := namesRoot(t)
	for _, a := range namesPaths {
		for _, b := range namesPaths {
			linkFreeBoth(t, d, []string{a, b, a})
		}
	}
	linkFreeBoth(t, d, namesPaths)
	var many []string
	for i := 0; i < 40; i++ {
		many = append(many, "src/pkg/deep/"+strings.Repeat("d/", i)+"x", "src/pkg/up/"+strings.Repeat("x/", i))
	}
	linkFreeBoth(t, d, many)
}

// A link made between two prompts is seen by the second: nothing looked at is kept from one
// prompt to the next.
func TestLinkMadeBetweenPromptsSeen(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	p := mustLoad(t, "version: 1\nrules:\n  - {name: cat, decision: allow, shell: [cat]}\n")
	d, err := NewDecider(p, root)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Decide(shellEvent("cat src/new/passwd src/new/group")); got.Verdict != Allow {
		t.Fatalf("before the link: %v (%s)", got.Verdict, got.Reason)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "src", "new")); err != nil {
		t.Fatal(err)
	}
	if got := d.Decide(shellEvent("cat src/new/passwd src/other")); got.Verdict == Allow {
		t.Fatalf("after src/new became a link to /etc: allowed")
	}
}

// FuzzLinkFreeNames judges random relative paths in one prompt with each name looked at once
// and each time: the answers are the same.
func FuzzLinkFreeNames(f *testing.F) {
	for _, a := range namesPaths {
		f.Add(a, "src/pkg/up/x", "src/pkg/deep/y")
	}
	d := namesRoot(f)
	f.Fuzz(func(t *testing.T, a, b, c string) {
		linkFreeBoth(t, d, []string{a, b, c, b + "/" + c, a + "/" + b})
	})
}
