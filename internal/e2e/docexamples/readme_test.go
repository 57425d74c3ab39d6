package docexamples

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock is one ```sh block of README.md or of a page of docs/ (docPages) and the mark
// right before it: <!-- recipe: NAME --> (the recipe tests run it as readme-NAME.sh) or
// <!-- recipe: skip: REASON --> (it cannot run here, for that reason).
type readmeBlock struct {
	File string // README.md, docs/budgets.md, ...
	Line int    // of the opening fence
	Name string // when run
	Skip string // when not, why
	Text string
}

var readmeMarkRE = regexp.MustCompile(`^<!-- recipe: (?:skip: (\S.*\S|\S)|([a-z0-9][a-z0-9-]*)) -->$`)

// parseReadme returns the ```sh blocks of a document with their marks. Blocks fenced as
// anything else (yaml, go) are not commands and are left out.
func parseReadme(text string) ([]readmeBlock, error) {
	var blocks []readmeBlock
	var cur *readmeBlock
	fence := ""
	mark := "" // the last non-blank line before a fence
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		t := strings.TrimSpace(l)
		if fence != "" {
			if t == "```" {
				if cur != nil {
					blocks = append(blocks, *cur)
					cur = nil
				}
				fence = ""
				mark = ""
				continue
			}
			if cur != nil {
				cur.Text += l + "\n"
			}
			continue
		}
		if strings.HasPrefix(t, "```") {
			fence = strings.TrimPrefix(t, "```")
			if fence == "" {
				fence = "text"
			}
			if fence == "sh" {
				cur = &readmeBlock{Line: line}
				if strings.HasPrefix(mark, "<!-- recipe:") {
					m := readmeMarkRE.FindStringSubmatch(mark)
					if m == nil {
						return nil, fmt.Errorf("line %d: a mark that is neither <!-- recipe: NAME --> nor <!-- recipe: skip: REASON -->: %s", line, mark)
					}
					cur.Skip, cur.Name = m[1], m[2]
				}
			}
			continue
		}
		if t != "" {
			mark = t
		}
	}
	if fence != "" {
		return nil, fmt.Errorf("a code block is not closed")
	}
	return blocks, sc.Err()
}

// docPages are the documents whose ```sh blocks are marked and run as readme-NAME.sh: the
// README and the pages of docs/, but the cookbook, whose recipes are run by their headings.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range pages {
		if name := filepath.Base(p); name != "cookbook.md" {
			out = append(out, "docs/"+name)
		}
	}
	return out
}

// readReadme returns the ```sh blocks of every page of docPages, in order.
func readReadme(t *testing.T) []readmeBlock {
	t.Helper()
	var all []readmeBlock
	for _, page := range docPages(t) {
		b, err := os.ReadFile("../../../" + page)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := parseReadme(string(b))
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		for _, bl := range blocks {
			bl.File = page
			all = append(all, bl)
		}
	}
	return all
}

func readmeScript(name string) string { return "readme-" + name + ".sh" }

func TestParseReadme(t *testing.T) {
	doc := "# t\n\n```sh\nmake demo\n```\n\n<!-- recipe: skip: needs a real host -->\n```sh\nssh host\n```\n" +
		"<!-- recipe: ls -->\n\n```sh\nfr-ls sessions\nfr-ls models\n```\n\n```yaml\na: b\n```\n<!-- recipe: x -->\n  ```go\nx\n  ```\n"
	got, err := parseReadme(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []readmeBlock{
		{Line: 3, Text: "make demo\n"},
		{Line: 8, Skip: "needs a real host", Text: "ssh host\n"},
		{Line: 13, Name: "ls", Text: "fr-ls sessions\nfr-ls models\n"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{
		"<!-- recipe: skip: -->\n```sh\nx\n```\n",
		"<!-- recipe: Bad Name -->\n```sh\nx\n```\n",
		"<!-- recipe:skip -->\n```sh\nx\n```\n",
	} {
		if _, err := parseReadme(bad); err == nil {
			t.Errorf("%q: a bad mark was accepted", bad)
		}
	}
	if _, err := parseReadme("```sh\nx\n"); err == nil {
		t.Error("an unclosed block was accepted")
	}
}

// Every ```sh block of README.md and of the pages of docs/ is run by a script of
// testdata/script, or says why it cannot be run here.
func TestEveryReadmeExampleIsTested(t *testing.T) {
	blocks := readReadme(t)
	if len(blocks) == 0 || blocks[0].File != "README.md" {
		t.Fatal("README.md has no ```sh block")
	}
	var scripts strings.Builder
	files, _ := filepath.Glob("testdata/script/*.txtar")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		scripts.Write(b)
	}
	seen := map[string]string{}
	for _, b := range blocks {
		at := fmt.Sprintf("%s:%d", b.File, b.Line)
		switch {
		case b.Skip != "":
		case b.Name == "":
			t.Errorf("%s: a ```sh block neither run by the recipe tests (<!-- recipe: NAME --> before it) nor marked <!-- recipe: skip: REASON -->:\n%s", at, b.Text)
		case seen[b.Name] != "":
			t.Errorf("%s: recipe name %q already used at %s", at, b.Name, seen[b.Name])
		case !regexp.MustCompile(`(?m)^[^#\n]*\b` + regexp.QuoteMeta(readmeScript(b.Name)) + `\b`).MatchString(scripts.String()):
			t.Errorf("%s: no script of testdata/script runs %s", at, readmeScript(b.Name))
		}
		if b.Name != "" {
			seen[b.Name] = at
		}
	}
}

// The README parser never panics, and what it returns is in its input: each block's lines
// after its fence, each mark on a line of its own.
func FuzzParseReadme(f *testing.F) {
	f.Add("<!-- recipe: ls -->\n```sh\nfr-ls\n```\n")
	f.Add("<!-- recipe: skip: needs a host -->\n\n```sh\nssh h\n```\n```yaml\na: b\n```\n")
	f.Add("<!-- recipe: -->\n```sh\n")
	if b, err := os.ReadFile("../../../README.md"); err == nil {
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, doc string) {
		blocks, err := parseReadme(doc)
		if err != nil {
			return
		}
		doc = strings.ReplaceAll(doc, "\r\n", "\n")
		for _, b := range blocks {
			if !strings.Contains(doc, b.Text) {
				t.Errorf("line %d: block %q is not in the input", b.Line, b.Text)
			}
			if b.Name != "" && !strings.Contains(doc, "<!-- recipe: "+b.Name+" -->") {
				t.Errorf("line %d: name %q is not in the input", b.Line, b.Name)
			}
			if b.Skip != "" && !strings.Contains(doc, "<!-- recipe: skip: "+b.Skip+" -->") {
				t.Errorf("line %d: reason %q is not in the input", b.Line, b.Skip)
			}
			if b.Name != "" && b.Skip != "" {
				t.Errorf("line %d: both run and skipped", b.Line)
			}
		}
	})
}
