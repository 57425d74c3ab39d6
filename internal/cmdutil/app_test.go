package cmdutil

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestVersionOf(t *testing.T) {
	bi := func(v string, settings ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{Main: debug.Module{Version: v}}
		for i := 0; i+1 < len(settings); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return b
	}
	rev := "abc1234def5678"
	for _, tt := range []struct {
		set, setRev string
		bi          *debug.BuildInfo
		want        string
	}{
		{"", "", nil, "dev"},
		{"", "", bi("(devel)"), "dev"},
		{"", "", bi("v1.2.3", "vcs.revision", rev, "vcs.modified", "false"), "v1.2.3 (rev abc1234def5678)"},
		{"", "", bi("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "dev (rev abc1234def5678, modified)"},
		{"v9.9.9", "", bi("v1.2.3", "vcs.revision", rev), "v9.9.9 (rev abc1234def5678)"},
		{"", "", bi("v1.2.3"), "v1.2.3"},
		// -ldflags -X sets both: the stamped revision wins over the build's own record.
		{"v0.3.0-12-gfeed123", "feed123456", bi("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "v0.3.0-12-gfeed123 (rev feed123456)"},
		{"", "feed123456", nil, "dev (rev feed123456)"},
	} {
		if got := versionOf(tt.set, tt.setRev, tt.bi); got != tt.want {
			t.Errorf("versionOf(%q, %q, %v) = %q, want %q", tt.set, tt.setRev, tt.bi, got, tt.want)
		}
	}
}

func testApp(out, errb *bytes.Buffer) (*cli.App, Streams) {
	s := Streams{In: strings.NewReader(""), Out: out, Err: errb}
	app := NewApp(s, "fr-x", "does x")
	app.Flags = []cli.Flag{ColorFlag("colour"), &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}}}
	app.Commands = []*cli.Command{{
		Name:  "serve",
		Usage: "serve things",
		Flags: []cli.Flag{Enum("policy", []string{"deny", "allow"}, "deny", "approvals: `POLICY` {values}")},
		Action: func(c *cli.Context) error {
			_, err := out.WriteString("policy " + c.String("policy") + "\n")
			return err
		},
	}}
	return Finish(app), s
}

func TestFinish(t *testing.T) {
	for _, tt := range []struct {
		args           string
		code           int
		stdout, stderr string
	}{
		{"fr-x -V", 0, "fr-x version ", ""},
		{"fr-x --version", 0, "fr-x version ", ""},
		{"fr-x help serve", 0, "serve things", ""},
		{"fr-x serve --policy allow", 0, "policy allow\n", ""},
		{"fr-x serve", 0, "policy deny\n", ""},
		{"fr-x serve --policy maybe", 2, "", "fr-x: error: --policy must be deny or allow, not \"maybe\"\n"},
		{"fr-x --color purple serve", 2, "", "fr-x: error: --color must be auto, always or never, not \"purple\"\n"},
		{"fr-x serve --polcy allow", 2, "", "fr-x: error: unknown flag --polcy; did you mean --policy?\nfr-x: hint: see 'fr-x serve --help'\n"},
		{"fr-x -verbos", 2, "", "fr-x: error: unknown flag --verbos; did you mean --verbose?\n"},
		{"fr-x serv", 2, "", "fr-x: error: unknown command \"serv\"; did you mean serve?\n"},
		{"fr-x completion bash", 0, "complete -o default -F _fr_x fr-x", ""},
		{"fr-x completion fish", 0, "complete -c fr-x", ""},
		{"fr-x completion tcsh", 2, "", "fr-x: error: \"tcsh\" is not a supported shell: completion scripts are written for bash, zsh or fish\n"},
	} {
		var out, errb bytes.Buffer
		app, s := testApp(&out, &errb)
		code := RunApp(context.Background(), app, s, strings.Fields(tt.args))
		if code != tt.code || !strings.Contains(out.String(), tt.stdout) || !strings.HasPrefix(errb.String(), tt.stderr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, out.String(), errb.String(), tt.code, tt.stdout, tt.stderr)
		}
	}
}

func TestCheckEnum(t *testing.T) {
	if err := CheckEnum("format", "json", []string{"jsonl", "json"}); err != nil {
		t.Error(err)
	}
	err := CheckEnum("f", "x", []string{"a", "b"})
	if err == nil || err.Error() != `-f must be a or b, not "x"` || CodeOf(err) != ExitUsage {
		t.Errorf("CheckEnum: %v", err)
	}
	f := Enum("format", []string{"jsonl", "pretty"}, "", "output `FORMAT`")
	if f.Usage != "output `FORMAT` (jsonl or pretty)" || strings.Join(f.EnumValues(), ",") != "jsonl,pretty" {
		t.Errorf("Enum usage %q", f.Usage)
	}
}
