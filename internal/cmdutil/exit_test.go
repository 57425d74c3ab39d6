package cmdutil

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestExitStatusSection(t *testing.T) {
	got := ExitStatusSection([]ExitCode{
		{Code: 0, Meaning: "success"},
		{Code: ExitPassedOn, Meaning: "run: the result's exitCode"},
		{Code: 130, Meaning: strings.Repeat("word ", 40)},
	})
	want := "EXIT STATUS\n" +
		"   0    success\n" +
		"   N    run: the result's exitCode\n" +
		"   130  " + strings.TrimSpace(strings.Repeat("word ", 17)) + "\n" +
		"        " + strings.TrimSpace(strings.Repeat("word ", 17)) + "\n" +
		"        " + strings.TrimSpace(strings.Repeat("word ", 6))
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	for _, l := range strings.Split(got, "\n") {
		if len(l) > exitWidth {
			t.Errorf("line over %d columns: %q", exitWidth, l)
		}
	}
}

func TestWithExitStatus(t *testing.T) {
	codes := []ExitCode{{Code: 0, Meaning: "ok"}, {Code: 2, Meaning: "usage"}}
	sec := "EXIT STATUS\n   0    ok\n   2    usage"
	for _, tc := range []struct{ name, desc, want string }{
		{"before ENVIRONMENT", "Text.\n\nENVIRONMENT\n  X  y\n\nEXAMPLES\n  fr x",
			"Text.\n\n" + sec + "\n\nENVIRONMENT\n  X  y\n\nEXAMPLES\n  fr x"},
		{"before EXAMPLES", "Text.\n\nFAULTS\n  a\n\nEXAMPLES\n  fr x",
			"Text.\n\nFAULTS\n  a\n\n" + sec + "\n\nEXAMPLES\n  fr x"},
		{"at the end", "Text.\n", "Text.\n\n" + sec},
		{"alone", "", sec},
		{"replaced", "Text.\n\nEXIT STATUS\n  0 old\n  1 older\n\nFAULTS\n  a\n\nENVIRONMENT\n  X",
			"Text.\n\nFAULTS\n  a\n\n" + sec + "\n\nENVIRONMENT\n  X"},
		{"replaced at the end", "Text.\n\nEXIT STATUS\n  0 old\n", "Text.\n\n" + sec},
	} {
		got := withExitStatus(tc.desc, codes)
		if got != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, got, tc.want)
		}
		if again := withExitStatus(got, codes); again != got {
			t.Errorf("%s: declared twice, got\n%s", tc.name, again)
		}
	}
}

func TestDeclareExitCodes(t *testing.T) {
	app := &cli.App{Name: "fr-x", Description: "Does x.\n\nEXAMPLES\n  fr-x",
		Commands: []*cli.Command{{Name: "check", Description: "Checks."}, {Name: "other", Description: "Other."}}}
	codes := ExitCodes{"": {{Code: 0, Meaning: "done"}}, "check": {{Code: 1, Meaning: "a finding"}}}
	DeclareExitCodes(app, codes)
	if want := "Does x.\n\nEXIT STATUS\n   0    done\n\nEXAMPLES\n  fr-x"; app.Description != want {
		t.Errorf("app: got\n%s\nwant\n%s", app.Description, want)
	}
	if want := "Checks.\n\nEXIT STATUS\n   1    a finding"; app.Commands[0].Description != want {
		t.Errorf("check: got\n%s\nwant\n%s", app.Commands[0].Description, want)
	}
	if app.Commands[1].Description != "Other." {
		t.Errorf("a subcommand with no codes declared changed: %q", app.Commands[1].Description)
	}
	if got := AppExitCodes(app); len(got) != 2 || got["check"][0].Meaning != "a finding" {
		t.Errorf("AppExitCodes: %v", got)
	}
	if got := codes.Names(); strings.Join(got, ",") != ",check" {
		t.Errorf("Names: %q", got)
	}
}
