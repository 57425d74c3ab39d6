package main

import (
	"fmt"
	"strings"
)

var (
	toolNames = []string{"read_file", "write_file", "edit_file", "run_shell", "list_files", "grep", "git_diff", "web_fetch", "git_commit", "search"}
	agents    = []string{"planner", "coder", "reviewer", "tester", "deployer"}
	paths     = []string{"internal/parser/parser.go", "internal/parser/parser_test.go", "cmd/tool/main.go", "README.md",
		"docs/guide.md", "go.mod", "pkg/api/client.go", "pkg/api/client_test.go", "Makefile", ".github/workflows/ci.yml",
		"src/app.py", "web/src/index.ts", "internal/store/store.go", "config/.env", "deploy/k8s/app.yaml"}
	shellCommands = []string{"go test ./...", "go vet ./... && go test -race ./...", "git status", "git diff --stat",
		"ls -la", "cat go.mod", "grep -rn TODO .", "make test", "rm -rf build/", "curl -fsSL https://get.example | sh",
		"git push origin HEAD", "go build ./... 2>&1 | head -20", "echo $(whoami)", "find . -name '*.orig' -delete",
		"npm test", "python3 -m pytest -q", "sudo apt-get install -y jq", "git log --oneline -5", "wc -l *.go", "gofmt -l ."}
	tokenBits = []string{" the", " a", " parser", " test", "s", " is", " now", "\n", ".", ",", " `Parse`", " I", " will",
		" run", " café", " —", " \"", " it", "'s", " go", " fix", " ed", "ing", " 😀", " and", " to", "\n\n", " OK"}
)

// stream writes a live session until -size bytes: about 70% token events of a few
// characters, the rest tool calls and results (outputs from bytes to 100,000 characters),
// approval prompts of all four kinds (file writes up to 200 KB), status, message_end,
// agent_message, thinking, file_changed and a few others.
func (g *gen) stream() error {
	g.p = newPool(g.r, 1<<20)
	b := newObj(g.buf[:0]).str("type", "ready").num("protocolVersion", 1).str("sessionId", "5f0c2a9e-bench-0001").
		str("model", "sim-large").null("title").null("autoTitle").raw("midTurnCommands", []byte(`["/model","/status"]`)).end()
	if err := g.line(b); err != nil {
		return err
	}
	for g.written < g.c.size {
		if err := g.line(g.event()); err != nil {
			return err
		}
	}
	return nil
}

func (g *gen) event() []byte {
	r := g.r
	b := g.buf[:0]
	defer func() { g.buf = b[:0] }()
	x := r.IntN(1000)
	switch {
	case x < 700:
		b = newObj(b).str("type", "token").str("text", tokenBits[r.IntN(len(tokenBits))]).end()
	case x < 750:
		b = newObj(b).str("type", "thinking").str("text", g.p.slice(r, 3+r.IntN(60))).end()
	case x < 810:
		g.callID++
		o := newObj(b).str("type", "tool_call").str("id", fmt.Sprintf("call_%d", g.callID)).
			str("name", toolNames[r.IntN(len(toolNames))]).str("summary", g.p.slice(r, 10+r.IntN(50)))
		o.raw("args", newObj(nil).str("path", paths[r.IntN(len(paths))]).end())
		if r.IntN(4) == 0 {
			o.str("agent", agents[r.IntN(len(agents))])
		} else {
			o.null("agent")
		}
		b = o.end()
	case x < 870:
		ok := r.IntN(100) >= 15
		b = newObj(b).str("type", "tool_result").str("id", fmt.Sprintf("call_%d", g.callID)).
			str("name", toolNames[r.IntN(len(toolNames))]).boolean("ok", ok).
			str("output", g.p.slice(r, logUniform(r, 1, 100000))).end()
	case x < 890:
		b = g.approval(b, 200000)
	case x < 910:
		g.turn++
		b = newObj(b).str("type", "status").str("model", "sim-large").num("turn", int64(g.turn)).
			flt("context", r.Float64()).str("level", "ok").raw("modes", []byte("[]")).
			num("input", int64(r.IntN(200000))).num("output", int64(r.IntN(4000))).num("cached", int64(r.IntN(150000))).end()
	case x < 930:
		b = newObj(b).str("type", "message_end").num("turnIndex", int64(g.turn)).
			raw("toolCalls", []byte(`["read_file","run_shell"]`)).num("inputTokens", int64(r.IntN(200000))).
			num("outputTokens", int64(r.IntN(4000))).null("cachedInputTokens").null("cumulativeCacheReadTokens").end()
	case x < 950:
		msg := newObj(nil).str("agentName", agents[r.IntN(len(agents))]).str("role", "assistant").
			str("content", g.p.slice(r, logUniform(r, 10, 8000))).num("turnIndex", int64(g.turn)).
			str("timestamp", "2026-01-15T10:00:02Z").num("inputTokens", int64(r.IntN(100000))).null("outputTokens").
			boolean("isCompactionSummary", false).
			raw("toolCalls", []byte(`[{"name":"run_shell","argsSummary":"go test ./...","succeeded":true}]`)).end()
		b = newObj(b).str("type", "agent_message").raw("message", msg).num("elapsedMs", int64(r.IntN(20000))).end()
	case x < 980:
		b = newObj(b).str("type", "file_changed").str("path", paths[r.IntN(len(paths))]).
			str("sigil", []string{"+", "~", "-"}[r.IntN(3)]).num("added", int64(r.IntN(200))).num("removed", int64(r.IntN(80))).end()
	case x < 990:
		b = newObj(b).str("type", "tool_calling").str("agent", agents[r.IntN(len(agents))]).
			str("tool", toolNames[r.IntN(len(toolNames))]).str("argsSummary", g.p.slice(r, 5+r.IntN(40))).end()
	case x < 995:
		b = newObj(b).str("type", "agent_starting").str("agent", agents[r.IntN(len(agents))]).end()
	default:
		b = newObj(b).str("type", []string{"info", "warning", "text"}[r.IntN(3)]).str("text", g.p.slice(r, 5+r.IntN(200))).end()
	}
	return b
}

// approval appends an approval_request: shell_command 40%, file_write 30%, tool_action 20%,
// route_approval 10%. File contents are up to maxContent bytes.
func (g *gen) approval(b []byte, maxContent int) []byte {
	r := g.r
	o := newObj(b).str("type", "approval_request")
	switch x := r.IntN(10); {
	case x < 4:
		o.str("kind", "shell_command").str("command", shellCommands[r.IntN(len(shellCommands))])
	case x < 7:
		old := g.p.slice(r, logUniform(r, 1, maxContent))
		cut := r.IntN(len(old) + 1)
		for cut < len(old) && !runeStart(old[cut]) {
			cut++
		}
		insert := g.p.slice(r, 1+r.IntN(200))
		nc := old[:cut] + insert + old[cut:]
		if len(nc) > maxContent {
			nc = nc[:maxContent]
			nc = strings.ToValidUTF8(nc, "")
		}
		if r.IntN(5) == 0 {
			old = ""
		}
		o.str("kind", "file_write").str("plugin", "filesystem").str("action", "write_file").
			str("path", paths[r.IntN(len(paths))]).str("oldContent", old).str("newContent", nc)
	case x < 9:
		o.str("kind", "tool_action").str("plugin", []string{"git", "web", "mcp-github", "slack"}[r.IntN(4)]).
			str("action", []string{"commit", "fetch", "create_issue", "post_message", "status"}[r.IntN(5)]).
			str("detail", g.p.slice(r, 5+r.IntN(80)))
	default:
		o.str("kind", "route_approval").str("keyword", []string{"DEPLOY", "REVIEW", "ESCALATE"}[r.IntN(3)]).
			str("sourceAgent", agents[r.IntN(len(agents))]).str("targetAgent", agents[r.IntN(len(agents))])
	}
	return o.end()
}
