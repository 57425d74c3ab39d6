package filter

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// fr-filter reads its own command line: whatever it is given, the reader answers with options
// or a usage error (exit 2), never a panic; it reads the same line the same way every time;
// and nothing after -- is a flag.
func FuzzParseArgs(f *testing.F) {
	for _, seed := range []string{
		"-rc\x00.a\x00f.jsonl",
		"--arg\x00name\x00value\x00$name",
		"-n\x00--jsonargs\x00$ARGS\x001\x00{}",
		"-f\x00q.jq\x00in.jsonl",
		"-L\x00dir\x00-Ldir\x00--indent\x003\x00.",
		"--pretty\x00--max-turns\x002\x00--prices\x00p.yaml",
		"-.\x00-1[0]\x00--type=token",
		"--color=sometimes\x00--completion\x00tcsh",
		"--\x00-r\x00--version",
		"--rawfile\x00a\x00/nonexistent",
		"--args\x00.\x00a\x00-c\x00b",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var args []string
		if line != "" {
			args = strings.Split(line, "\x00")
		}
		o, err := parseArgs(args)
		if err != nil {
			if code := cmdutil.CodeOf(err); code != cmdutil.ExitUsage {
				t.Fatalf("parseArgs(%q): exit %d (%v), want a usage error", args, code, err)
			}
			return
		}
		again, err := parseArgs(args)
		if err != nil || !reflect.DeepEqual(o, again) {
			t.Fatalf("parseArgs(%q) read twice: %+v then %+v, %v", args, o, again, err)
		}
		// 1 is a filter, a file, a value of --args and one of --jsonargs alike
		if _, err := parseArgs(append(append([]string{}, args...), "--", "1")); err != nil {
			t.Fatalf("parseArgs(%q -- 1): %v", args, err)
		}
		after, err := parseArgs(append(append([]string{}, args...), "--", "--version", "-h"))
		if err != nil {
			return // the arguments are values of --jsonargs, and not JSON
		}
		if after.version != o.version || after.help != o.help {
			t.Fatalf("parseArgs(%q -- --version -h): version %v, help %v: read as flags", args, after.version, after.help)
		}
	})
}
