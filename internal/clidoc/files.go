package clidoc

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"
)

// Files maps each generated file, relative to the repository root, to its content: a man page
// under man/ and bash, zsh and fish completions under completions/ for every app.
func Files(apps []*cli.App) map[string]string {
	out := map[string]string{}
	for _, app := range apps {
		out[filepath.Join("man", app.Name+".1")] = Man(app)
		out[filepath.Join("completions", "bash", app.Name)] = Bash(app)
		out[filepath.Join("completions", "zsh", "_"+app.Name)] = Zsh(app)
		out[filepath.Join("completions", "fish", app.Name+".fish")] = Fish(app)
	}
	return out
}

// Write writes Files(apps) under root.
func Write(root string, apps []*cli.App) error {
	for rel, content := range Files(apps) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Drift returns the generated files under root that are missing or differ from what the apps
// generate now.
func Drift(root string, apps []*cli.App) []string {
	var bad []string
	for rel, content := range Files(apps) {
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: missing", rel))
		} else if string(got) != content {
			bad = append(bad, fmt.Sprintf("%s: out of date", rel))
		}
	}
	return bad
}
