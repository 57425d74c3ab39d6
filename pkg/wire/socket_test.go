package wire

import (
	"os"
	"path/filepath"
	"testing"
)

// In a directory reached through a symlink, with $PWD naming the symlink as a shell sets it,
// the socket path is derived from the resolved directory, as fuseraft (getcwd) derives it.
func TestDefaultSocketPathThroughSymlink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "Project")
	link := filepath.Join(base, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	t.Chdir(link)
	t.Setenv("PWD", link)
	if wd, _ := os.Getwd(); wd != link {
		t.Logf("os.Getwd gives %s, not $PWD", wd)
	}

	wd, err := WorkingDir()
	if err != nil || wd != real {
		t.Fatalf("WorkingDir() = %q, %v; want %q", wd, err, real)
	}
	home := t.TempDir()
	got, err := DefaultSocketPath(env(map[string]string{"FUSERAFT_HOME": home}))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := SocketPath(home, real)
	if got != want {
		t.Errorf("DefaultSocketPath = %s, want %s (the resolved directory's)", got, want)
	}
	if viaLink, _ := SocketPath(home, link); got == viaLink {
		t.Errorf("DefaultSocketPath = %s, derived from the symlink's path", got)
	}
}
