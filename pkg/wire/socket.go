package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// Home returns fuseraft's home directory: $FUSERAFT_HOME when set and not blank (a leading ~ is
// expanded), else ~/.fuseraft. getenv is os.Getenv in real use.
func Home(getenv func(string) string) (string, error) {
	if h := strings.TrimSpace(getenv("FUSERAFT_HOME")); h != "" {
		if h == "~" || strings.HasPrefix(h, "~/") || strings.HasPrefix(h, `~\`) {
			home, err := userHome(getenv)
			if err != nil {
				return "", err
			}
			h = filepath.Join(home, h[1:])
		}
		return h, nil
	}
	home, err := userHome(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".fuseraft"), nil
}

func userHome(getenv func(string) string) (string, error) {
	if h := getenv("HOME"); h != "" {
		return h, nil
	}
	if h := getenv("USERPROFILE"); h != "" {
		return h, nil
	}
	return "", errors.New("cannot find the home directory: HOME is not set")
}

// ProjectSlug derives fuseraft's project slug from an absolute directory: a leading drive
// ("C:") is dropped, leading slashes and backslashes are trimmed, the rest become "-", and the
// result is lower-cased. /home/scs/github/fuseraft/brewer gives home-scs-github-fuseraft-brewer.
func ProjectSlug(dir string) string {
	if len(dir) >= 2 && dir[1] == ':' && (dir[0] >= 'A' && dir[0] <= 'Z' || dir[0] >= 'a' && dir[0] <= 'z') {
		dir = dir[2:]
	}
	dir = strings.TrimLeft(dir, `/\`)
	dir = strings.NewReplacer("/", "-", `\`, "-").Replace(dir)
	return strings.ToLower(dir)
}

// MaxSocketPath is the longest AF_UNIX socket path this platform accepts, in bytes.
func MaxSocketPath() int {
	if runtime.GOOS == "darwin" || strings.HasSuffix(runtime.GOOS, "bsd") {
		return 103 // sun_path is 104 bytes including the NUL
	}
	return 107 // sun_path is 108 bytes including the NUL
}

// SocketPathError says the derived socket path is too long for AF_UNIX.
type SocketPathError struct {
	Path string
	Max  int
}

// Error names the path and the AF_UNIX limit it passes.
func (e *SocketPathError) Error() string {
	return fmt.Sprintf("socket path %s is %d bytes, longer than the %d bytes AF_UNIX allows", e.Path, len(e.Path), e.Max)
}

// SocketPath returns the serve socket of the project in dir, exactly as fuseraft attach derives
// it: <home>/run/<h>.sock, where h is the first 16 hex digits of SHA-256 of the project slug.
// It returns the path and a *SocketPathError when the path is too long to connect to.
func SocketPath(home, dir string) (string, error) {
	sum := sha256.Sum256([]byte(ProjectSlug(dir)))
	p := filepath.Join(home, "run", hex.EncodeToString(sum[:])[:16]+".sock")
	if len(p) > MaxSocketPath() {
		return p, &SocketPathError{Path: p, Max: MaxSocketPath()}
	}
	return p, nil
}

// DefaultSocketPath is SocketPath for the current directory (as WorkingDir returns it), with
// the environment read through getenv (os.Getenv in real use).
func DefaultSocketPath(getenv func(string) string) (string, error) {
	home, err := Home(getenv)
	if err != nil {
		return "", err
	}
	dir, err := WorkingDir()
	if err != nil {
		return "", err
	}
	return SocketPath(home, dir)
}

// WorkingDir returns the current directory as fuseraft sees it, for deriving the project slug
// and socket path: the kernel's view, getcwd(3), which is what .NET's
// Directory.GetCurrentDirectory returns. On Unix that path has its symlinks resolved. os.Getwd
// is not used: it returns $PWD whenever $PWD names the same directory, so in a directory
// reached through a symlink it would derive another socket than fuseraft does.
func WorkingDir() (string, error) {
	if dir, err := syscall.Getwd(); err == nil && filepath.IsAbs(dir) {
		return dir, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		return resolved, nil
	}
	return dir, nil
}

// ValidClientID reports whether id is a valid Fuseraft-Client-Id: 1 to 64 of A-Z a-z 0-9 - _.
func ValidClientID(id string) bool {
	if len(id) < 1 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
