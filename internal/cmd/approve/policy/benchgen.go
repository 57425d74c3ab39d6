package policy

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
)

// The policy and stream below are the fixed workload of fr-approve's benchmarks
// (BenchmarkDecide200Rules here, BenchmarkDecideStream200Rules in package approve).

// BenchPolicy is a 200-rule policy of the shape real ones have: mostly shell rules, some file,
// tool and route rules, a few jq conditions.
func BenchPolicy() string { return BenchPolicySized(200, 5) }

// BenchPolicySized is BenchPolicy with n rules, conds of them with a jq condition (each a
// different one), in the same proportions: 1/8 file rules, 3/40 tool rules, 1/40 route rules,
// the rest shell rules. BenchPolicySized(200, 5) is BenchPolicy.
func BenchPolicySized(n, conds int) string {
	var b strings.Builder
	b.WriteString("version: 1\ndefault: deny\nrules:\n")
	decisions := []string{"allow", "allow", "allow", "deny", "ask"}
	nFile, nTool, nRoute := n/8, n*3/40, n/40
	nShell := n - nFile - nTool - nRoute - conds
	k := 0
	for i := 0; i < nShell; i++ {
		// the stream's --flag is named: options are an allow-list
		fmt.Fprintf(&b, "  - name: shell-%d\n    decision: %s\n    shell: {commands: [\"tool%d sub%d\", \"tool%d check $\", \"cmd%d ** --force\"], allow_options: [--flag]}\n",
			i, decisions[i%len(decisions)], i, i%7, i, i)
		k++
	}
	for i := 0; i < nFile; i++ {
		fmt.Fprintf(&b, "  - name: file-%d\n    decision: %s\n    file: {paths: [\"dir%d/**/*.go\", \"docs%d/*.md\"], max_size: 64KiB, max_changed_lines: 100}\n",
			i, decisions[i%len(decisions)], i, i)
		k++
	}
	for i := 0; i < nTool; i++ {
		fmt.Fprintf(&b, "  - name: tool-%d\n    decision: %s\n    tool: {plugin: \"mcp-%d*\", action: [\"get*\", \"list*\"], detail: '/^repo=/'}\n",
			i, decisions[i%len(decisions)], i)
		k++
	}
	for i := 0; i < nRoute; i++ {
		fmt.Fprintf(&b, "  - name: route-%d\n    decision: allow\n    route: {source: agent%d, target: [agent%d, reviewer]}\n", i, i, i+1)
		k++
	}
	for i := 0; i < conds; i++ {
		kind, when := "file_write", fmt.Sprintf(`.newContent | test("SECRET%d")`, i)
		if i >= 5 {
			switch i % 3 {
			case 0:
				kind, when = "shell_command", fmt.Sprintf(`.command | test("danger%d")`, i)
			case 2:
				kind, when = "tool_action", fmt.Sprintf(`.detail | test("token%d")`, i)
			}
		}
		fmt.Fprintf(&b, "  - name: when-%d\n    decision: deny\n    kind: %s\n    when: '%s'\n", i, kind, when)
		k++
	}
	if k != n {
		panic(k)
	}
	return b.String()
}

// BenchStream is a recorded stream's prompts: shell commands (pipelines and lists), file
// writes, tool actions and routes.
func BenchStream(n int) [][]byte {
	r := rand.New(rand.NewSource(1))
	var out [][]byte
	for len(out) < n {
		i := r.Intn(150)
		var ev map[string]any
		switch k := r.Intn(20); {
		case k < 14:
			cmds := []string{
				fmt.Sprintf("tool%d sub%d --flag x", i, i%7),
				fmt.Sprintf("tool%d check", i),
				fmt.Sprintf("tool%d sub%d a | tool%d sub%d b && echo done", i, i%7, (i+1)%150, (i+1)%7),
				fmt.Sprintf("cd dir && tool%d sub%d $(tool%d check) > /dev/null 2>&1", i, i%7, i),
				fmt.Sprintf("bash -c 'tool%d sub%d; cmd%d x --force'", i, i%7, i),
				"git status; rm -rf /",
			}
			ev = map[string]any{"type": "approval_request", "kind": "shell_command", "command": cmds[r.Intn(len(cmds))]}
		case k < 17:
			content := strings.Repeat("package x\n// line\n", 50)
			ev = map[string]any{"type": "approval_request", "kind": "file_write", "plugin": "fs", "action": "write",
				"path": fmt.Sprintf("dir%d/a/b/file.go", i%25), "oldContent": content, "newContent": content + "func F() {}\n"}
		case k < 19:
			ev = map[string]any{"type": "approval_request", "kind": "tool_action", "plugin": fmt.Sprintf("mcp-%d", i%15), "action": "get_issue", "detail": "repo=x"}
		default:
			ev = map[string]any{"type": "approval_request", "kind": "route_approval", "keyword": "", "sourceAgent": fmt.Sprintf("agent%d", i%5), "targetAgent": "reviewer"}
		}
		b, _ := json.Marshal(ev)
		out = append(out, b)
	}
	return out
}
