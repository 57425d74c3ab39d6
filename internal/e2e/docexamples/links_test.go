package docexamples

import (
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// mdLinkRE is a Markdown link's target: [text](target).
var mdLinkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// anchor is the id GitHub gives a heading: lower case, spaces as dashes, and every character
// but letters, digits, dashes and underscores dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists the ids of a Markdown document's headings, the second of a name as NAME-1.
func anchors(doc string) map[string]bool {
	ids := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		id := anchor(strings.TrimLeft(l, "#"))
		if n := seen[id]; n > 0 {
			ids[id+"-"+strconv.Itoa(n)] = true
		} else {
			ids[id] = true
		}
		seen[id]++
	}
	return ids
}

func TestAnchor(t *testing.T) {
	for h, want := range map[string]string{
		" fr-ls: fuseraft's state as clean rows":                          "fr-ls-fuserafts-state-as-clean-rows",
		" fr-dispatch: fire-and-forget tasks over the daemon's MCP tools": "fr-dispatch-fire-and-forget-tasks-over-the-daemons-mcp-tools",
		" pkg/wire: fuseraft's protocol for Go programs":                  "pkgwire-fuserafts-protocol-for-go-programs",
	} {
		if got := anchor(h); got != want {
			t.Errorf("anchor(%q) = %q, want %q", h, got, want)
		}
	}
	ids := anchors("# a\n## fr-approve\n```sh\n# not a heading\n```\n## fr-approve\n")
	if !ids["a"] || !ids["fr-approve"] || !ids["fr-approve-1"] || ids["not-a-heading"] {
		t.Errorf("anchors: %v", ids)
	}
}

// Every relative link of README.md and of the pages of docs/ leads to a file of the
// repository, and to a heading of it when it names one.
func TestDocLinks(t *testing.T) {
	pages := append(docPages(t), "docs/cookbook.md", "examples/README.md", "bench/README.md")
	for _, page := range pages {
		b, err := os.ReadFile("../../../" + page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLinkRE.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = path.Join(path.Dir(page), file)
			}
			st, err := os.Stat("../../../" + dest)
			if err != nil {
				if strings.HasPrefix(dest, "docs/fleet.md") || strings.HasPrefix(dest, "docs/otel.md") {
					continue // the pages of the commands still to come
				}
				t.Errorf("%s: link %s: %s is not in the repository", page, target, dest)
				continue
			}
			if frag == "" || st.IsDir() {
				continue
			}
			doc, err := os.ReadFile("../../../" + dest)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(doc))[frag] {
				t.Errorf("%s: link %s: %s has no heading #%s", page, target, dest, frag)
			}
		}
	}
}
