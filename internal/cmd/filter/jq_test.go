package filter

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// needJQ returns the path of jq, or skips the test (fails it under CI=true, where .ci/run
// installs jq).
func needJQ(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("jq")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("jq is not installed (apt-get install -y jq)")
		}
		t.Skip("jq is not installed: apt-get install -y jq to compare fr-filter with it")
	}
	return path
}

// TestSameBytesAsJQ runs jq and fr-filter on the same input and compares their output byte for
// byte, for the output options whose bytes jq defines: colours (-C, in jq's layout, with the
// object key colour), -a, --tab, --indent, -c, -r and -j. jq 1.6 has no JQ_COLORS field for
// object keys and other default colours, so the colours are given; its key colour is jq 1.7's
// default. The input has no escape jq would rewrite and no number it would reformat: fr-filter
// passes lines on with their bytes, where jq 1.6 rewrites them.
func TestSameBytesAsJQ(t *testing.T) {
	jq := needJQ(t)
	input := `{"a":[1,"x",null,true,false,{}],"b":{"c":[],"d":{"e":"é😀\"\\"}},"n":-1500}
[]
{}
"plain é"
[[1,[2]],{"k":[{}]}]
null
`
	const colors = "0;90:0;39:0;39:0;39:0;32:1;39:1;39"
	for _, c := range []struct{ jq, fr []string }{
		{[]string{"-C", "."}, []string{"-C", "--indent", "2", "."}},
		{[]string{"-C", "-c", "."}, []string{"-C", "-c", "."}},
		{[]string{"-C", "--tab", "."}, []string{"-C", "--tab", "."}},
		{[]string{"-C", "--indent", "3", ".[]?"}, []string{"-C", "--indent", "3", ".[]?"}},
		{[]string{"-a", "-c", "."}, []string{"-a", "-c", "."}},
		{[]string{"-a", "-C", "-c", "."}, []string{"-a", "-C", "-c", "."}},
		{[]string{"-c", "."}, []string{"-c", "."}},
		{[]string{"--indent", "0", "."}, []string{"--indent", "0", "."}},
		{[]string{"-r", "..|strings"}, []string{"-r", "..|strings"}},
		{[]string{"-a", "-r", "..|strings"}, []string{"-a", "-r", "..|strings"}},
		{[]string{"-j", "..|strings"}, []string{"-j", "..|strings"}},
	} {
		cmd := exec.Command(jq, c.jq...)
		cmd.Stdin = strings.NewReader(input)
		cmd.Env = append(os.Environ(), "JQ_COLORS="+colors, "NO_COLOR=")
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("jq %q: %v", c.jq, err)
		}
		var out, errb bytes.Buffer
		env := map[string]string{"JQ_COLORS": colors, "NO_COLOR": ""}
		s := cmdutil.Streams{In: strings.NewReader(input), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }}
		if code := Run(context.Background(), s, append([]string{prog}, c.fr...)); code != 0 {
			t.Errorf("fr-filter %q: exit %d: %s", c.fr, code, errb.String())
		}
		if out.String() != string(want) {
			t.Errorf("fr-filter %q:\n%q\njq %q:\n%q", c.fr, out.String(), c.jq, want)
		}
	}
}
