package policy

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// caseFile is testdata/cases.yaml: policies by name and decision cases.
type caseFile struct {
	Policies map[string]string `yaml:"policies"`
	Cases    []decisionCase    `yaml:"cases"`
}

type decisionCase struct {
	Policy  string    `yaml:"policy"`
	Command *string   `yaml:"command"`
	Write   *string   `yaml:"write"`
	Content *string   `yaml:"content"`
	Size    int       `yaml:"size"`
	Lines   int       `yaml:"lines"`
	Tool    []string  `yaml:"tool"`
	Route   []string  `yaml:"route"`
	Event   yaml.Node `yaml:"event"`
	Expect  string    `yaml:"expect"`
	Rule    string    `yaml:"rule"`
	Part    *string   `yaml:"part"`
	Warn    bool      `yaml:"warn"`
	line    int
}

func (c *decisionCase) event(t *testing.T) []byte {
	t.Helper()
	m := map[string]any{"type": "approval_request"}
	switch {
	case c.Command != nil:
		m["kind"], m["command"] = "shell_command", *c.Command
	case c.Write != nil:
		content := "package x\n"
		if c.Content != nil {
			content = *c.Content
		}
		if c.Size > 0 {
			content = strings.Repeat("x", c.Size)
		}
		if c.Lines > 0 {
			var b strings.Builder
			for i := 0; i < c.Lines; i++ {
				fmt.Fprintf(&b, "line %d\n", i)
			}
			content = b.String()
		}
		m["kind"], m["plugin"], m["action"], m["path"], m["oldContent"], m["newContent"] = "file_write", "fs", "write", *c.Write, "", content
	case c.Tool != nil:
		m["kind"], m["plugin"], m["action"], m["detail"] = "tool_action", c.Tool[0], c.Tool[1], c.Tool[2]
	case c.Route != nil:
		m["kind"], m["sourceAgent"], m["targetAgent"], m["keyword"] = "route_approval", c.Route[0], c.Route[1], c.Route[2]
	case c.Event.Kind == yaml.ScalarNode:
		return []byte(c.Event.Value)
	case c.Event.Kind != 0:
		var v any
		if err := c.Event.Decode(&v); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	default:
		t.Fatalf("line %d: a case needs command, write, tool, route or event", c.line)
	}
	b, _ := json.Marshal(m)
	return b
}

func loadCases(t testing.TB) (*caseFile, map[string]*Policy) {
	data, err := os.ReadFile("testdata/cases.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var cf caseFile
	if err := doc.Decode(&cf); err != nil {
		t.Fatal(err)
	}
	// keep each case's line for messages
	for i := 0; i+1 < len(doc.Content[0].Content); i += 2 {
		if doc.Content[0].Content[i].Value == "cases" {
			for j, n := range doc.Content[0].Content[i+1].Content {
				cf.Cases[j].line = n.Line
			}
		}
	}
	pols := map[string]*Policy{}
	for name, src := range cf.Policies {
		p, err := Load([]byte(src), name+".yaml")
		if err != nil {
			t.Fatalf("policy %s: %v", name, err)
		}
		pols[name] = p
	}
	return &cf, pols
}

func TestCases(t *testing.T) {
	cf, pols := loadCases(t)
	if len(cf.Cases) < 150 {
		t.Errorf("only %d cases", len(cf.Cases))
	}
	for _, c := range cf.Cases {
		c := c
		name := fmt.Sprintf("line%d", c.line)
		t.Run(name, func(t *testing.T) {
			p := pols[c.Policy]
			if p == nil {
				t.Fatalf("line %d: no policy %q", c.line, c.Policy)
			}
			d, err := NewDecider(p, "/repo")
			if err != nil {
				t.Fatal(err)
			}
			var warnings []string
			d.Warn = func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
			ev := c.event(t)
			got := d.Decide(ev)
			rule := got.Rule
			if got.Decider != ByRule {
				rule = got.Decider
			}
			if got.Verdict.String() != c.Expect || (c.Rule != "" && rule != c.Rule) {
				t.Errorf("cases.yaml:%d: %s\n got %s by %s (part %q, %s)\nwant %s by %s", c.line, ev, got.Verdict, rule, got.Part, got.Reason, c.Expect, c.Rule)
			}
			if c.Part != nil && got.Part != *c.Part {
				t.Errorf("cases.yaml:%d: %s: part %q, want %q", c.line, ev, got.Part, *c.Part)
			}
			if c.Warn != (len(warnings) > 0) {
				t.Errorf("cases.yaml:%d: warnings %q, want warn=%v", c.line, warnings, c.Warn)
			}
		})
	}
}
