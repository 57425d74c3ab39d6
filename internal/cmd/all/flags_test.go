package all

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// subcommand is one subcommand of an app, by the names that reach it, with every flag it
// takes: its own, its parents', and the app's unless they are the app's own (OwnFlags).
type subcommand struct {
	app   int // index in Apps()
	path  []string
	flags []cli.Flag
}

func subcommands(t *testing.T) []subcommand {
	var out []subcommand
	var walk func(app int, path []string, inherited []cli.Flag, cmds []*cli.Command)
	walk = func(app int, path []string, inherited []cli.Flag, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden || c.SkipFlagParsing || c.Name == "help" || c.Name == "completion" {
				continue
			}
			p := append(append([]string{}, path...), c.Name)
			flags := append(append([]cli.Flag{}, c.Flags...), inherited...)
			if c.Action != nil {
				out = append(out, subcommand{app: app, path: p, flags: flags})
			}
			walk(app, p, flags, c.Subcommands)
		}
	}
	for i, app := range Apps() {
		if app.SkipFlagParsing {
			continue
		}
		walk(i, nil, cmdutil.InheritedFlags(app), app.Commands)
	}
	if len(out) < 20 {
		t.Fatalf("found only %d subcommands", len(out))
	}
	return out
}

// valueOf is a value flag f accepts that is not its default ("" for a boolean flag).
func valueOf(t *testing.T, f cli.Flag) string {
	switch f := f.(type) {
	case *cli.BoolFlag:
		return ""
	case *cmdutil.EnumFlag:
		for _, v := range f.Values {
			if v != f.Value {
				return v
			}
		}
	case *cli.StringFlag, *cli.StringSliceFlag, *cli.PathFlag:
		return "v"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return "3"
	case *cli.Float64Flag:
		return "0.5"
	case *cli.DurationFlag:
		return "3s"
	}
	t.Fatalf("no value for flag %s of type %T", f.Names()[0], f)
	return ""
}

// parse runs the app on args with the subcommand's action replaced by one that reports how
// the flag name was read, and returns that, or the error.
func parse(sc subcommand, name string, args []string) string {
	app := Apps()[sc.app]
	app.Before = nil // fr-sim's: what it does with its flags is not the point here
	var errw bytes.Buffer
	app.ErrWriter = &errw
	cmds := app.Commands
	var cmd *cli.Command
	for _, n := range sc.path {
		for _, c := range cmds {
			if c.Name == n {
				cmd = c
			}
		}
		cmds = cmd.Subcommands
	}
	got := "action not run"
	cmd.Action = func(c *cli.Context) error {
		got = fmt.Sprintf("set=%v value=%v", c.IsSet(name), c.Value(name))
		return nil
	}
	s := cmdutil.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errw, Getenv: func(string) string { return "" }}
	if code := cmdutil.RunApp(context.Background(), app, s, args); code != 0 {
		return fmt.Sprintf("exit %d: %s", code, errw.String())
	}
	return got
}

// Every flag a subcommand takes is read the same before and after the subcommand's name
// ('fr-stream --fuseraft fr-sim repl' is 'fr-stream repl --fuseraft fr-sim'), in every
// command, through the one mechanism they share.
func TestFlagsBeforeAndAfterTheSubcommand(t *testing.T) {
	n := 0
	for _, sc := range subcommands(t) {
		for _, f := range sc.flags {
			name := f.Names()[0]
			flag := []string{"--" + name}
			if v := valueOf(t, f); v != "" {
				flag = append(flag, v)
			} else if _, ok := f.(*cli.BoolFlag); !ok {
				continue
			}
			prog := Apps()[sc.app].Name
			after := append(append([]string{prog}, sc.path...), flag...)
			before := append(append([]string{prog}, flag...), sc.path...)
			n++
			a, b := parse(sc, name, after), parse(sc, name, before)
			if !strings.HasPrefix(a, "set=true ") {
				t.Errorf("%s: %s", strings.Join(after, " "), a)
				continue
			}
			if a != b {
				t.Errorf("%s: %s\n%s: %s", strings.Join(after, " "), a, strings.Join(before, " "), b)
			}
		}
	}
	t.Logf("%d flags of subcommands", n)
	if n < 100 {
		t.Fatalf("only %d flags of subcommands tried", n)
	}
}

// A flag written before its subcommand is read (does it take a value?) from the first
// definition of its name below: within a command every definition of a name must agree.
func TestFlagNamesAgreeOnValues(t *testing.T) {
	for _, app := range Apps() {
		if app.SkipFlagParsing {
			continue
		}
		takes := map[string]bool{}
		where := map[string]string{}
		var check func(at string, flags []cli.Flag)
		check = func(at string, flags []cli.Flag) {
			for _, f := range flags {
				v := true
				if d, ok := f.(cli.DocGenerationFlag); ok {
					v = d.TakesValue()
				}
				for _, n := range f.Names() {
					if w, seen := where[n]; seen && takes[n] != v {
						t.Errorf("%s: -%s takes a value in %s (%v) but not in %s (%v)", app.Name, n, w, takes[n], at, v)
					}
					takes[n], where[n] = v, at
				}
			}
		}
		check(app.Name, app.Flags)
		var walk func(path string, cmds []*cli.Command)
		walk = func(path string, cmds []*cli.Command) {
			for _, c := range cmds {
				p := path + " " + c.Name
				check(p, c.Flags)
				walk(p, c.Subcommands)
			}
		}
		walk(app.Name, app.Commands)
	}
}
