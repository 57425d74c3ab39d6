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
		{"p wait a -- --timeout 5m", "p wait -- a --timeout 5m"}, // after --, arguments all
		{"p wait -- -a", "p wait -- -a"},
		{"p wait - --quiet", "p wait --quiet -"},
		{"p wait wait", "p wait wait"},           // the second is an argument
		{"p x wait --quiet", "p --quiet x wait"}, // not a subcommand after an argument
		{"p wait a --unknown b", "p wait --unknown a b"},
		// a subcommand's flags before it are its own, their values read from its definitions
		{"p --timeout 5m wait a", "p wait --timeout 5m a"},
		{"p --quiet wait a", "p wait --quiet a"},
		{"p --head HASH verify log", "p verify --head HASH log"},
		{"p --url u --timeout=5m wait a --quiet", "p --url u wait --timeout=5m --quiet a"},
		{"p --nope wait a", "p --nope wait a"}, // nobody's: the app's error names it
	}
	for _, tt := range tests {
		got := strings.Join(Intersperse(app, strings.Fields(tt.in)), " ")
		if got != tt.want {
			t.Errorf("Intersperse(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestIntersperseLevels(t *testing.T) {
	newApp := func() *cli.App {
		return &cli.App{
			Flags: []cli.Flag{&cli.StringFlag{Name: "audit"}, &cli.StringFlag{Name: "policy", Aliases: []string{"p"}}},
			Commands: []*cli.Command{
				{Name: "verify-audit", Flags: []cli.Flag{&cli.StringFlag{Name: "head"}}},
				{Name: "check", Flags: []cli.Flag{&cli.StringFlag{Name: "policy", Aliases: []string{"p"}}}},
				{Name: "scenario", Subcommands: []*cli.Command{{Name: "check", Flags: []cli.Flag{&cli.BoolFlag{Name: "strict"}}}}},
				{Name: "serve", SkipFlagParsing: true, Flags: []cli.Flag{&cli.StringFlag{Name: "socket"}}},
			},
		}
	}
	own := OwnFlags(newApp())
	tests := []struct {
		app     *cli.App
		in, out string
	}{
		{own, "p verify-audit audit.log --head H", "p verify-audit --head H audit.log"},
		{own, "p --audit a.log", "p --audit a.log"},
		// the app's own flags are not check's: they stay with it, whose parser rejects them
		{own, "p check ev.jsonl --audit a.log", "p check --audit a.log ev.jsonl"},
		{newApp(), "p check ev.jsonl --audit a.log", "p --audit a.log check ev.jsonl"},
		{own, "p check ev.jsonl -p x.yaml", "p check -p x.yaml ev.jsonl"},
		{own, "p scenario check f.yaml --strict", "p scenario check --strict f.yaml"},
		{own, "p serve --socket s x --y", "p serve --socket s x --y"},
		{own, "p --audit a serve x", "p --audit a serve x"},
		{own, "p --socket s serve x", "p --socket s serve x"}, // serve reads only what follows it
		{own, "p verify-audit audit.log --help", "p verify-audit --help"},
		{own, "p --head H verify-audit audit.log", "p verify-audit --head H audit.log"},
		{own, "p --strict scenario check f.yaml", "p scenario check --strict f.yaml"},
		// check defines it too: its own, which it reads, not the app's
		{own, "p -p x.yaml check ev.jsonl", "p check -p x.yaml ev.jsonl"},
		{newApp(), "p -p x.yaml check ev.jsonl", "p check -p x.yaml ev.jsonl"},
		{newApp(), "p --audit a.log -p x.yaml verify-audit", "p --audit a.log -p x.yaml verify-audit"},
	}
	for _, tt := range tests {
		if got := strings.Join(Intersperse(tt.app, strings.Fields(tt.in)), " "); got != tt.out {
			t.Errorf("Intersperse(%q) = %q, want %q", tt.in, got, tt.out)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	known := []string{"format", "fields", "jq", "fuseraft", "color", "any-version", "help", "h"}
	for _, tt := range []struct{ in, want string }{
		{"formt", "format"},
		{"fromat", "format"},
		{"colour", "color"},
		{"any", "any-version"},
		{"nope", ""},
		{"x", ""},
		{"format", ""}, // itself is not a suggestion
		{"jqq", "jq"},
	} {
		if got := DidYouMean(tt.in, known); got != tt.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := UnknownFlag("formt", known); got != "unknown flag --formt; did you mean --format?" {
		t.Errorf("UnknownFlag = %q", got)
	}
	if got := UnknownFlag("Q", known); got != "unknown flag -Q" {
		t.Errorf("UnknownFlag = %q", got)
	}
}
