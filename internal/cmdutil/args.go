package cmdutil

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/docgen"
)

// ownFlagsKey marks, in an app's Metadata, that the app's flags are its own action's.
const ownFlagsKey = docgen.OwnFlagsKey

// OwnFlags marks app's flags as those of the app's own action (fr-approve's daemon mode), not
// options of its subcommands too: written after a subcommand they are the subcommand's, which
// rejects them unless it defines them, and completion does not offer them there. It returns
// app.
func OwnFlags(app *cli.App) *cli.App {
	if app.Metadata == nil {
		app.Metadata = map[string]any{}
	}
	app.Metadata[ownFlagsKey] = true
	return app
}

func appFlagsInherited(app *cli.App) bool {
	own, _ := app.Metadata[ownFlagsKey].(bool)
	return !own
}

// InheritedFlags are the flags of app a subcommand of it also takes: the app's own, unless
// OwnFlags marked them as the app's action's alone.
func InheritedFlags(app *cli.App) []cli.Flag {
	if !appFlagsInherited(app) {
		return nil
	}
	return app.Flags
}

// level is one command of a command line being read: the app, a subcommand, a subcommand of
// that.
type level struct {
	flags []cli.Flag
	subs  []*cli.Command
	name  string // "" for the app
	got   []string
	open  bool // its flags also apply at deeper levels
}

// Intersperse lets flags follow arguments, as users expect (`fr-dispatch wait ID --timeout
// 5m`), although urfave/cli stops reading flags at the first argument: it moves every flag in
// front of the arguments, at the level whose definitions it belongs to (the innermost of the
// subcommands named first that defines it, else the app: `fr-dispatch wait ID --url U` is
// `fr-dispatch --url U wait ID`; not the app when OwnFlags marked its flags as its own).
// Which flags take a value is read from those definitions, never from a second list. A flag
// no level defines stays with the innermost one, whose error then names it. Everything after
// `--` is an argument; the arguments come after a `--` then, so one that starts with a dash
// stays an argument. A subcommand that parses its own arguments (SkipFlagParsing) gets them
// as they are. A command line that asks for a subcommand's help (--help, -h) is that: its
// arguments are dropped.
func Intersperse(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	levels := []*level{{flags: app.Flags, subs: app.Commands, open: appFlagsInherited(app)}}
	var pos, verbatim []string
	dashdash := false
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			dashdash = true
			pos = append(pos, rest[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			l := owner(levels, a)
			l.got = append(l.got, a)
			if takesValue(definitions(levels, l, a), a) && i+1 < len(rest) {
				i++
				l.got = append(l.got, rest[i])
			}
			continue
		}
		if len(pos) == 0 {
			if c := findCommand(levels[len(levels)-1].subs, a); c != nil {
				levels = append(levels, &level{flags: c.Flags, subs: c.Subcommands, name: a, open: true})
				if c.SkipFlagParsing {
					verbatim = rest[i+1:]
					break
				}
				continue
			}
		}
		pos = append(pos, a)
	}
	out := []string{args[0]}
	for _, l := range levels {
		if l.name != "" {
			out = append(out, l.name)
		}
		out = append(out, l.got...)
	}
	if verbatim != nil {
		return append(out, verbatim...)
	}
	if asksHelp(levels[len(levels)-1].got) {
		// `fr-ls validate x.yaml --help` is the help of validate, not of a topic named x.yaml.
		return out
	}
	if dashdash || needsDashDash(pos) {
		out = append(out, "--")
	}
	return append(out, pos...)
}

// owner is the level a flag written after the last of levels belongs to: the innermost that
// defines it and whose flags reach that far, else the innermost.
func owner(levels []*level, arg string) *level {
	last := levels[len(levels)-1]
	for i := len(levels) - 1; i >= 0; i-- {
		l := levels[i]
		if i < len(levels)-1 && !l.open {
			break
		}
		if defines(l.flags, arg) {
			return l
		}
	}
	return last
}

// definitions are the flags that say whether arg takes a value: its owner's, or when the
// owner does not define it (an error to come), the first level's that does.
func definitions(levels []*level, owner *level, arg string) []cli.Flag {
	if defines(owner.flags, arg) {
		return owner.flags
	}
	for _, l := range levels {
		if defines(l.flags, arg) {
			return l.flags
		}
	}
	return nil
}

func asksHelp(flags []string) bool {
	if cli.HelpFlag == nil {
		return false
	}
	for _, f := range flags {
		for _, n := range cli.HelpFlag.Names() {
			if f == "-"+n || f == "--"+n {
				return true
			}
		}
	}
	return false
}

func needsDashDash(pos []string) bool {
	for _, p := range pos {
		if strings.HasPrefix(p, "-") && p != "-" {
			return true
		}
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// flagOf returns the definition of the flag arg (-x, --name, --name=VALUE), or nil.
func flagOf(flags []cli.Flag, arg string) cli.Flag {
	name := strings.TrimLeft(arg, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func defines(flags []cli.Flag, arg string) bool { return flagOf(flags, arg) != nil }

// takesValue reports whether the flag arg, written without =VALUE, is defined and is not a
// boolean, so that the next argument is its value.
func takesValue(flags []cli.Flag, arg string) bool {
	if strings.Contains(arg, "=") {
		return false
	}
	f := flagOf(flags, arg)
	if f == nil {
		return false
	}
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.TakesValue()
	}
	_, isBool := f.(*cli.BoolFlag)
	return !isBool
}
