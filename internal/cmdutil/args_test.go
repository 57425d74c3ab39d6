package cmdutil

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestIntersperse(t *testing.T) {
	app := &cli.App{
		Flags: []cli.Flag{&cli.StringFlag{Name: "url"}, &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}}},
		Commands: []*cli.Command{
			{Name: "wait", Flags: []cli.Flag{&cli.DurationFlag{Name: "timeout"}, &cli.BoolFlag{Name: "quiet"}}},
			{Name: "verify", Flags: []cli.Flag{&cli.StringFlag{Name: "head"}}},
		},
	}
	tests := []struct{ in, want string }{
		{"p wait a b", "p wait a b"},
		{"p wait a --timeout 5m b", "p wait --timeout 5m a b"},
		{"p wait a --timeout=5m", "p wait --timeout=5m a"},
		{"p --url u wait a --quiet b", "p --url u wait --quiet a b"},
		{"p wait a --url u", "p --url u wait a"},
		{"p wait a --url=u --timeout 1s", "p --url=u wait --timeout 1s a"},
		{"p wait a -v", "p -v wait a"},
		{"p verify log --head HASH", "p verify --head HASH log"},
		{"p verify --head HASH log", "p verify --head HASH log"},
		{"p wait a -- --timeout 5m", "p wait a -- --timeout 5m"},
		{"p wait - --quiet", "p wait --quiet -"},
		{"p wait wait", "p wait wait"},           // the second is an argument
		{"p x wait --quiet", "p --quiet x wait"}, // not a subcommand after an argument
		{"p wait a --unknown b", "p wait --unknown a b"},
	}
	for _, tt := range tests {
		got := strings.Join(Intersperse(app, strings.Fields(tt.in)), " ")
		if got != tt.want {
			t.Errorf("Intersperse(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
