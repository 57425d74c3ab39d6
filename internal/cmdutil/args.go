package cmdutil

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Intersperse lets flags follow arguments, as users expect (`fr-dispatch wait ID --timeout
// 5m`), although urfave/cli stops reading flags at the first argument: it moves every flag in
// front of the arguments, at the level whose definitions it belongs to (the subcommand named
// first, else the app: `fr-dispatch wait ID --url U` is `fr-dispatch --url U wait ID`).
// Which flags take a value is read from those definitions, never from a second list. A flag
// no level defines stays with the innermost one, whose error then names it. Everything after
// `--` stays where it is.
func Intersperse(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	var appFlags, cmdFlags, pos []string
	var cmd *cli.Command
	cmds := app.Commands
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			dst, defs := &appFlags, app.Flags
			if cmd != nil && (defines(cmd.Flags, a) || !defines(app.Flags, a)) {
				dst, defs = &cmdFlags, cmd.Flags
			}
			*dst = append(*dst, a)
			if takesValue(defs, a) && i+1 < len(rest) {
				i++
				*dst = append(*dst, rest[i])
			}
			continue
		}
		if cmd == nil && len(pos) == 0 {
			if c := findCommand(cmds, a); c != nil {
				cmd = c
				continue
			}
		}
		pos = append(pos, a)
	}
	out := append([]string{args[0]}, appFlags...)
	if cmd != nil {
		out = append(append(out, cmd.Name), cmdFlags...)
	}
	return append(out, pos...)
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
	_, isBool := f.(*cli.BoolFlag)
	return !isBool
}
