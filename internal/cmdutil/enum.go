package cmdutil

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// EnumFlag is a flag whose value is one of a few: it is validated when given (one wording
// for every command: "--color must be auto, always or never, not \"x\""), its usage names
// the values, and completion offers them (EnumValues). As gh's StringEnumFlag.
type EnumFlag struct {
	cli.StringFlag
	Values []string
}

// EnumValues are the values the flag takes, for completion and the docs.
func (f *EnumFlag) EnumValues() []string { return f.Values }

// Enum defines the flag name (then its aliases) that takes one of values, with def as its
// default ("" for none). In usage, "{values}" is replaced by the values ("a, b or c"); a usage
// without it gets them appended in parentheses.
func Enum(name string, values []string, def, usage string, aliases ...string) *EnumFlag {
	list := orList(values)
	if strings.Contains(usage, "{values}") {
		usage = strings.ReplaceAll(usage, "{values}", list)
	} else {
		usage += " (" + list + ")"
	}
	f := &EnumFlag{Values: values, StringFlag: cli.StringFlag{Name: name, Aliases: aliases, Value: def, Usage: usage}}
	f.Action = func(_ *cli.Context, v string) error { return CheckEnum(name, v, values) }
	return f
}

// CheckEnum returns the usage error for a value of flag name that is not one of values.
func CheckEnum(name, value string, values []string) error {
	for _, v := range values {
		if v == value {
			return nil
		}
	}
	return Usagef("%s must be %s, not %q", dashed(name), orList(values), value)
}

// ColorValues are the values of every --color flag.
var ColorValues = []string{"auto", "always", "never"}

// ColorFlag is the --color flag every command that colours has: auto (the default), always
// or never. what says what is coloured ("colour in tables").
func ColorFlag(what string) *EnumFlag {
	return Enum("color", ColorValues, "auto", what+": `WHEN` is {values}")
}
