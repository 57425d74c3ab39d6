package query

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fuseraft/fr/pkg/wire"
)

// configFile is the part of an orchestration config the queries read:
//
//	name: Dev team
//	description: Planner, coder and reviewer
//	agents:
//	  - name: Planner
//	    model: claude-sonnet-4-5
//	  - file: agents/coder.yaml   # an agent file beside the config
//	selection:
//	  type: sequential
type configFile struct {
	Name        *string     `yaml:"name"`
	Description *string     `yaml:"description"`
	Agents      []yaml.Node `yaml:"agents"`
	Selection   *struct {
		Type *string `yaml:"type"`
	} `yaml:"selection"`
}

var selectionTypes = map[string]bool{"sequential": true, "round-robin": true, "llm": true, "keyword": true}

// loadConfig reads a config as fuseraft loads it: a summary, or the reason it did not load,
// plus the issues validate reports.
func loadConfig(path string) (wire.ConfigSummary, []wire.ValidationIssue) {
	sum := wire.ConfigSummary{Path: path, Agents: []string{}}
	fail := func(msg string) (wire.ConfigSummary, []wire.ValidationIssue) {
		sum.Error = &msg
		return sum, []wire.ValidationIssue{{Level: "error", Message: msg}}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fail(strings.TrimPrefix(err.Error(), "open "+path+": "))
	}
	var cf configFile
	if err := yaml.Unmarshal(b, &cf); err != nil {
		return fail(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var issues []wire.ValidationIssue
	sum.Name, sum.Description = cf.Name, cf.Description
	if cf.Name == nil || *cf.Name == "" {
		issues = append(issues, wire.ValidationIssue{Level: "warning", Message: "the config has no name"})
	}
	for i, a := range cf.Agents {
		var ag struct {
			Name  string `yaml:"name"`
			File  string `yaml:"file"`
			Model string `yaml:"model"`
		}
		if a.Kind == yaml.ScalarNode {
			ag.File = a.Value
		} else if err := a.Decode(&ag); err != nil {
			issues = append(issues, wire.ValidationIssue{Level: "error", Message: fmt.Sprintf("agents[%d]: %v", i, err)})
			continue
		}
		if ag.File != "" {
			f := ag.File
			if !filepath.IsAbs(f) {
				f = filepath.Join(filepath.Dir(path), f)
			}
			if b, err := os.ReadFile(f); err != nil {
				issues = append(issues, wire.ValidationIssue{Level: "error", Message: fmt.Sprintf("agents[%d]: agent file %s not found", i, ag.File)})
			} else if ag.Name == "" {
				var af struct {
					Name string `yaml:"name"`
				}
				if err := yaml.Unmarshal(b, &af); err != nil {
					issues = append(issues, wire.ValidationIssue{Level: "error", Message: fmt.Sprintf("agents[%d]: %s: %v", i, ag.File, err)})
				}
				ag.Name = af.Name
			}
			if ag.Name == "" {
				ag.Name = strings.TrimSuffix(filepath.Base(ag.File), filepath.Ext(ag.File))
			}
		}
		if ag.Name == "" {
			issues = append(issues, wire.ValidationIssue{Level: "error", Message: fmt.Sprintf("agents[%d] has no name", i)})
			continue
		}
		sum.Agents = append(sum.Agents, ag.Name)
	}
	if len(cf.Agents) == 0 {
		issues = append(issues, wire.ValidationIssue{Level: "error", Message: "no agents defined"})
	}
	if cf.Selection != nil && cf.Selection.Type != nil {
		sum.SelectionType = cf.Selection.Type
		if !selectionTypes[*cf.Selection.Type] {
			issues = append(issues, wire.ValidationIssue{Level: "error",
				Message: fmt.Sprintf("unknown selection type '%s' (known: keyword, llm, round-robin, sequential)", *cf.Selection.Type)})
		}
	} else if len(cf.Agents) > 1 {
		issues = append(issues, wire.ValidationIssue{Level: "warning", Message: "no selection type; agents take turns in order"})
	}
	return sum, issues
}

func isConfigFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func (qq *q) config(args []string) error {
	f, err := qq.flags(args, "dir", "json list")
	if err != nil {
		return err
	}
	if !f.has("list") {
		return &usageError{"config needs --list"}
	}
	dir := ".fuseraft/config"
	if f.has("dir") {
		dir = f.vals["dir"]
	}
	dir = abs(dir)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		if f.has("dir") {
			return &failure{fmt.Sprintf("Directory '%s' does not exist.", f.vals["dir"])}
		}
		// No project configs here: the dataset's stand in, as if they were in dir.
		list := make([]wire.ConfigSummary, len(qq.st.Configs))
		for i, c := range qq.st.Configs {
			if !filepath.IsAbs(c.Path) {
				c.Path = filepath.Join(dir, c.Path)
			}
			if c.Agents == nil {
				c.Agents = []string{}
			}
			if c.Error != nil {
				fmt.Fprintf(qq.s.Err, "warn: skipping %s: %s\n", c.Path, *c.Error)
			}
			list[i] = c
		}
		return items(qq, list)
	}
	var paths []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "agents" && p != dir {
			return filepath.SkipDir
		}
		if !d.IsDir() && isConfigFile(d.Name()) {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return &failure{err.Error()}
	}
	sort.Strings(paths)
	list := []wire.ConfigSummary{}
	for _, p := range paths {
		sum, _ := loadConfig(p)
		if sum.Error != nil {
			fmt.Fprintf(qq.s.Err, "warn: skipping %s: %s\n", p, *sum.Error)
			sum.Name, sum.Description, sum.SelectionType = nil, nil, nil
			sum.Agents = []string{}
		}
		list = append(list, sum)
	}
	return items(qq, list)
}

func (qq *q) validate(args []string) error {
	f, err := qq.flags(args, "", "json diagram show-paths")
	if err != nil {
		return err
	}
	if f.has("json") && (f.has("diagram") || f.has("show-paths")) {
		return &failure{"--json can't be combined with --diagram or --show-paths"}
	}
	if len(f.args) != 1 {
		return &usageError{"validate takes one PATH"}
	}
	path := abs(f.args[0])
	if _, err := os.Stat(path); err != nil {
		return &failure{fmt.Sprintf("Config file '%s' not found.", f.args[0])}
	}
	sum, issues := loadConfig(path)
	v := wire.Validation{Path: path, Valid: true, Issues: []wire.ValidationIssue{}}
	if issues != nil {
		v.Issues = issues
	}
	if sum.Error == nil {
		v.Config = &sum
	}
	for _, is := range v.Issues {
		if is.Level == "error" {
			v.Valid = false
		}
	}
	if err := qq.item(v); err != nil {
		return err
	}
	if !v.Valid {
		return exitCode(1)
	}
	return nil
}

// templateAgents are the agents each init template writes.
var templateAgents = map[string][]string{
	"single":   {"Assistant"},
	"dev-team": {"Planner", "Coder", "Reviewer"},
	"research": {"Researcher", "Writer"},
}

func (qq *q) init(args []string) error {
	f, err := qq.flags(args, "template model endpoint", "json list-templates force no-interactive")
	if err != nil {
		return err
	}
	if f.has("list-templates") {
		return items(qq, qq.st.Templates)
	}
	if len(f.args) > 1 {
		return &usageError{"init takes at most one PATH"}
	}
	key := "single"
	if f.has("template") {
		key = f.vals["template"]
	}
	var known []string
	found := false
	for _, t := range qq.st.Templates {
		known = append(known, t.Key)
		found = found || t.Key == key
	}
	if !found {
		return &failure{fmt.Sprintf("Unknown template '%s'. Known templates: %s.", key, strings.Join(known, ", "))}
	}
	model := ""
	for _, m := range qq.st.Models {
		if m.Current {
			model = m.ID
		}
	}
	if f.has("model") {
		model = f.vals["model"]
	}
	endpoint := qq.st.Endpoint
	if f.has("endpoint") {
		e := f.vals["endpoint"]
		endpoint = &e
	}
	cfgPath := filepath.Join(".fuseraft", "config", key+".yaml")
	if len(f.args) == 1 {
		cfgPath = f.args[0]
		if fi, err := os.Stat(cfgPath); err == nil && fi.IsDir() {
			cfgPath = filepath.Join(cfgPath, key+".yaml")
		}
	}
	cfgPath = abs(cfgPath)
	names := templateAgents[key]
	if names == nil {
		names = []string{"Assistant"}
	}
	res := wire.InitResult{Template: key, Model: model, Endpoint: endpoint, ConfigPath: cfgPath, AgentFiles: []string{}}
	files := map[string]string{}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "name: %s\ndescription: Written by fuseraft init from the %s template\nagents:\n", key, key)
	for _, n := range names {
		p := filepath.Join(filepath.Dir(cfgPath), "agents", strings.ToLower(n)+".yaml")
		res.AgentFiles = append(res.AgentFiles, p)
		files[p] = fmt.Sprintf("name: %s\nmodel: %s\ninstructions: You are the %s.\n", n, model, strings.ToLower(n))
		fmt.Fprintf(&cfg, "  - file: agents/%s.yaml\n", strings.ToLower(n))
	}
	sel := "sequential"
	if len(names) == 1 {
		sel = "round-robin"
	}
	fmt.Fprintf(&cfg, "selection:\n  type: %s\n", sel)
	files[cfgPath] = cfg.String()
	if !f.has("force") {
		var exist []string
		for p := range files {
			if _, err := os.Lstat(p); err == nil {
				exist = append(exist, p)
			}
		}
		if len(exist) > 0 {
			sort.Strings(exist)
			return &failure{fmt.Sprintf("%s already exists. Use --force to overwrite.", exist[0])}
		}
	}
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return &failure{err.Error()}
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return &failure{err.Error()}
		}
	}
	if err := os.MkdirAll(".fuseraft", 0o755); err != nil {
		return &failure{err.Error()}
	}
	if err := ensureGitignore(".gitignore", ".fuseraft/sessions/", ".fuseraft/state/"); err != nil {
		return &failure{err.Error()}
	}
	return qq.item(res)
}

// ensureGitignore appends each line that the file does not have yet.
func ensureGitignore(path string, lines ...string) error {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add strings.Builder
	if len(b) > 0 && b[len(b)-1] != '\n' {
		add.WriteByte('\n')
	}
	n := 0
	for _, l := range lines {
		if !have[l] {
			add.WriteString(l + "\n")
			n++
		}
	}
	if n == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(add.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
