package cmdutil

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/clidoc"
)

func init() {
	// -V, as jq, gh and restic spell it: -v is --verbose where a command has one.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Aliases: []string{"V"}, Usage: "print the version and the revision it was built from"}
}

// VersionString is the version every command prints: Version (set with -ldflags), else the
// module version the binary was built from, else "dev"; then the revision it was built from:
// Revision (set with -ldflags), else the VCS revision the build recorded and whether the tree
// had changes: "v1.2.3-4-gabc1234 (rev abc1234…)", "dev (rev abc1234…, modified)".
func VersionString() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(Version, Revision, bi)
}

func versionOf(set, setRev string, bi *debug.BuildInfo) string {
	v := set
	if v == "" && bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if v == "" {
		v = "dev"
	}
	if setRev != "" {
		return fmt.Sprintf("%s (rev %s)", v, setRev)
	}
	if bi == nil {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return v
	}
	if modified == "true" {
		return fmt.Sprintf("%s (rev %s, modified)", v, rev)
	}
	return fmt.Sprintf("%s (rev %s)", v, rev)
}

// Finish gives app what every fr command has, once its flags and subcommands are defined:
// usage errors in fr's voice (exit 2, "did you mean") at every level, `help SUBCOMMAND` where
// there are subcommands, and a `completion bash|zsh|fish` subcommand that prints the
// completion script (a command that reads its own arguments, as fr-filter, offers it its own
// way). It returns app.
func Finish(app *cli.App) *cli.App {
	if app.OnUsageError == nil {
		app.OnUsageError = UsageError
	}
	if !app.SkipFlagParsing {
		app.Commands = append(app.Commands, completionCommand(app.Name))
	}
	if len(app.Commands) > 0 {
		app.HideHelpCommand = false
	}
	if app.Action == nil && len(app.Commands) > 0 {
		app.Action = func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.ShowAppHelp(c)
			}
			return UnknownCommand(c.App.Name, c.Args().First(), app.Commands)
		}
	}
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			if c.OnUsageError == nil && !c.SkipFlagParsing {
				c.OnUsageError = UsageError
			}
			if len(c.Subcommands) > 0 {
				c.HideHelpCommand = false
			}
			walk(c.Subcommands)
		}
	}
	walk(app.Commands)
	return app
}

// Shells are the shells a completion script is written for.
var Shells = []string{"bash", "zsh", "fish"}

// CompletionScript returns app's completion script for shell (one of Shells), as 'make man'
// writes it to completions/.
func CompletionScript(app *cli.App, shell string) (string, error) {
	if err := CheckShell(shell); err != nil {
		return "", err
	}
	switch shell {
	case "zsh":
		return clidoc.Zsh(app), nil
	case "fish":
		return clidoc.Fish(app), nil
	}
	return clidoc.Bash(app), nil
}

// CheckShell returns the usage error for a shell no completion script is written for, in
// the same words in every command (completion SHELL, fr-filter --completion SHELL).
func CheckShell(shell string) error {
	if slices.Contains(Shells, shell) {
		return nil
	}
	return Usagef("%q is not a supported shell: completion scripts are written for %s", shell, orList(Shells))
}

func completionCommand(prog string) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the completion script for SHELL: " + orList(Shells),
		UsageText: prog + " completion " + strings.Join(Shells, "|"),
		Description: "Load it in the running shell, or install it where the shell looks\n" +
			"('make install' installs them all):\n\n" +
			"  source <(" + prog + " completion bash)\n" +
			"  " + prog + " completion zsh > \"${fpath[1]}/_" + prog + "\"\n" +
			"  " + prog + " completion fish > ~/.config/fish/completions/" + prog + ".fish",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return WithHint(Usagef("completion needs one SHELL: %s", orList(Shells)), "see '"+c.App.Name+" completion --help'")
			}
			script, err := CompletionScript(c.App, c.Args().First())
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}

// UnknownCommand is the usage error for an unknown subcommand name of prog, with the closest
// of cmds as a suggestion.
func UnknownCommand(prog, name string, cmds []*cli.Command) *Error {
	msg := fmt.Sprintf("unknown command %q", name)
	if s := DidYouMean(name, CommandNames(cmds)); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return WithHint(Usagef("%s", msg), "see '"+prog+" --help'")
}

// CommandNames lists the names and aliases of the visible commands of cmds.
func CommandNames(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return names
}

// UnknownFlag is the message for a flag no definition has (name without its dashes): two
// dashes whatever the user typed, and the closest of the known names as a suggestion.
func UnknownFlag(name string, known []string) string {
	msg := "unknown flag " + dashed(name)
	if s := DidYouMean(name, known); s != "" {
		msg += "; did you mean " + dashed(s) + "?"
	}
	return msg
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagNames lists the names of flags, without dashes.
func flagNames(flags []cli.Flag) []string {
	var out []string
	for _, f := range flags {
		out = append(out, f.Names()...)
	}
	return out
}

// DidYouMean returns the candidate closest to name when it is close enough to be a typo (at
// most a third of its letters wrong, or a prefix of it), else "". Ties go to the first.
// One-letter names are too short to guess from.
func DidYouMean(name string, candidates []string) string {
	best, bestD := "", -1
	if len(name) < 2 {
		return ""
	}
	for _, c := range candidates {
		if c == name || len(c) < 2 {
			continue
		}
		d := distance(name, c)
		if strings.HasPrefix(c, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		if d <= max(1, len(name)/3) && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Damerau-Levenshtein distance (optimal string alignment) of a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// orList writes values as "a, b or c".
func orList(values []string) string {
	switch len(values) {
	case 0:
		return ""
	case 1:
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
