package docexamples

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// jsonKeys adds to keys every key of the objects in v, at any depth, but the keys of the
// objects named in asData (maps whose keys are data, such as fr-report's omitted counts).
func jsonKeys(v any, keys map[string]bool, asData map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			keys[k] = true
			if asData[k] {
				if m, ok := x.(map[string]any); ok {
					for _, y := range m {
						jsonKeys(y, keys, asData)
					}
					continue
				}
			}
			jsonKeys(x, keys, asData)
		}
	case []any:
		for _, x := range v {
			jsonKeys(x, keys, asData)
		}
	}
}

// section returns the part of a Markdown page from the heading that is exactly head to the
// next heading of the same or a higher level.
func section(t *testing.T, page, head string) string {
	t.Helper()
	i := strings.Index(page, "\n"+head+"\n")
	if i < 0 {
		t.Fatalf("no heading %q", head)
	}
	rest := page[i+1+len(head):]
	level := strings.Repeat("#", strings.IndexByte(head, ' '))
	if j := regexp.MustCompile(`\n#{1,` + string(rune('0'+len(level))) + `} `).FindStringIndex(rest); j != nil {
		rest = rest[:j[0]]
	}
	return rest
}

// Every field of fr-report's JSON (as its golden files pin it) is named in docs/scripting.md's
// section on fr-report: a field added to the report without a word there fails here.
func TestScriptingPageNamesReportFields(t *testing.T) {
	b, err := os.ReadFile("../../../docs/scripting.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := section(t, section(t, string(b), "## JSON outputs"), "### fr-report")
	files, _ := filepath.Glob("../../cmd/report/testdata/golden/*.json")
	if len(files) == 0 {
		t.Fatal("no golden JSON report in internal/cmd/report/testdata/golden")
	}
	keys := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		jsonKeys(v, keys, map[string]bool{"omitted": true})
	}
	var missing []string
	for k := range keys {
		if !regexp.MustCompile(`[^A-Za-z0-9_]` + regexp.QuoteMeta(k) + `[^A-Za-z0-9_]`).MatchString(doc) {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/scripting.md's section on fr-report's JSON does not name %s", strings.Join(missing, ", "))
	}
}
