package cmdutil

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/clidoc"
)

// ownFlagsKey marks, in an app's Metadata, that the app's flags are its own action's.
const ownFlagsKey = clidoc.OwnFlagsKey

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
	own   bool // it parses its own arguments (SkipFlagParsing): only those after it are its
}

// Intersperse lets flags follow arguments, as users expect (`fr-dispatch wait ID --timeout
// 5m`), although urfave/cli stops reading flags at the first argument, and lets a
// subcommand's flags come before the subcommand (`fr-stream --fuseraft fr-sim repl`),
// although urfave/cli reads there only the app's: it moves every flag in front of the
// arguments, at the level whose definitions it belongs to. That is the innermost level of the
// command line that defines it and that it reaches: every subcommand named after it, and the
// levels it was written at or after, unless OwnFlags marked the app's flags as its own
// (`fr-dispatch wait ID --url U` is `fr-dispatch --url U wait ID`, `fr-stream --fuseraft X
// repl` is `fr-stream repl --fuseraft X`). Which flags take a value is read from those
// definitions (for a flag before its subcommand, from the first definition of it among the
// subcommands below), never from a second list. A flag no level defines stays with the level
// it was written at, whose error then names it. The flags of a level keep their order.
// Everything after `--` is an argument; the arguments come after a `--` then, so one that
// starts with a dash stays an argument. A subcommand that parses its own arguments (SkipFlagParsing) gets them
// as they are. A command line that asks for a subcommand's help (--help, -h) is that: its
// arguments are dropped. An app that parses its own arguments gets them as they are.
func Intersperse(app *cli.App, args []string) []string {
	if len(args) < 2 || app.SkipFlagParsing {
		return args
	}
	levels := []*level{{flags: app.Flags, subs: app.Commands, open: appFlagsInherited(app)}}
	var pos, verbatim []string
	// the flags, with their values and the level named last before them
	type flagAt struct {
		got   []string
		depth int
	}
	var flags []flagAt
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
			defs := definitions(levels, owner(levels, len(levels)-1, a), a)
			if !defines(defs, a) && len(pos) == 0 {
				defs = below(levels[len(levels)-1].subs, a)
			}
			got := []string{a}
			if takesValue(defs, a) && i+1 < len(rest) {
				i++
				got = append(got, rest[i])
			}
			flags = append(flags, flagAt{got, len(levels) - 1})
			continue
		}
		if len(pos) == 0 {
			if c := findCommand(levels[len(levels)-1].subs, a); c != nil {
				levels = append(levels, &level{flags: c.Flags, subs: c.Subcommands, name: a, open: true, own: c.SkipFlagParsing})
				if c.SkipFlagParsing {
					verbatim = rest[i+1:]
					break
				}
				continue
			}
		}
		pos = append(pos, a)
	}
	for _, f := range flags {
		l := owner(levels, f.depth, f.got[0])
		l.got = append(l.got, f.got...)
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

// owner is the level a flag written after levels[depth] was named belongs to: the innermost
// that defines it and that it reaches (one named after it, unless it parses its own
// arguments; one named before it when the levels from there to depth pass their flags on),
// else levels[depth].
func owner(levels []*level, depth int, arg string) *level {
	for i := len(levels) - 1; i >= 0; i-- {
		l := levels[i]
		if i < depth && !l.open {
			break
		}
		if i > depth && l.own {
			continue
		}
		if defines(l.flags, arg) {
			return l
		}
	}
	return levels[depth]
}

// below are the flags of the first of cmds, or of their subcommands, that defines arg: which
// says whether a flag written before its subcommand takes a value.
func below(cmds []*cli.Command, arg string) []cli.Flag {
	for _, c := range cmds {
		if defines(c.Flags, arg) {
			return c.Flags
		}
	}
	for _, c := range cmds {
		if f := below(c.Subcommands, arg); f != nil {
			return f
		}
	}
	return nil
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
