package otel

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/fuseraft/fr/internal/prices"
	"github.com/fuseraft/fr/internal/redact"
)

// recorder is a sink that keeps what the mapping makes.
type recorder struct {
	spans   []*span
	logs    []*logRecord
	metrics []point
}

type point struct {
	name  string
	v     float64
	attrs []attribute.KeyValue
}

func (r *recorder) span(s *span)     { r.spans = append(r.spans, s) }
func (r *recorder) log(l *logRecord) { r.logs = append(r.logs, l) }
func (r *recorder) metric(name string, v float64, attrs ...attribute.KeyValue) {
	r.metrics = append(r.metrics, point{name, v, attrs})
}

func (r *recorder) named(name string) []*span {
	var out []*span
	for _, s := range r.spans {
		if s.name == name {
			out = append(out, s)
		}
	}
	return out
}

func (r *recorder) byID(id trace.SpanID) *span {
	for _, s := range r.spans {
		if s.id == id {
			return s
		}
	}
	return nil
}

func (r *recorder) sum(name string, match ...attribute.KeyValue) float64 {
	total := 0.0
	for _, p := range r.metrics {
		if p.name == name && hasAll(p.attrs, match) {
			total += p.v
		}
	}
	return total
}

func hasAll(attrs, want []attribute.KeyValue) bool {
	for _, w := range want {
		if !slices.Contains(attrs, w) {
			return false
		}
	}
	return true
}

func attr(s *span, key string) (attribute.Value, bool) {
	var v attribute.Value
	found := false
	for _, a := range s.attrs {
		if string(a.Key) == key {
			v, found = a.Value, true
		}
	}
	return v, found
}

func attrString(s *span, key string) string {
	v, _ := attr(s, key)
	return v.Emit()
}

// mapLines runs the mapping over lines, one a millisecond from a fixed start.
func mapLines(t *testing.T, o mapOptions, inputs ...[]string) *recorder {
	t.Helper()
	r := &recorder{}
	m := newMapper(o, r)
	at := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	for i, lines := range inputs {
		in := m.input("input" + string(rune('a'+i)))
		for _, l := range lines {
			at = at.Add(time.Millisecond)
			in.line([]byte(l), at)
		}
	}
	m.finishAll()
	return r
}

func readSession(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sessions", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// checkTree checks that every span but the roots has its parent among the spans, in the
// same trace, and that every link points at a span of the trace.
func checkTree(t *testing.T, r *recorder) {
	t.Helper()
	for _, s := range r.spans {
		if !s.id.IsValid() || !s.traceID.IsValid() {
			t.Errorf("span %q has an invalid id", s.name)
		}
		if s.end.Before(s.start) {
			t.Errorf("span %q ends before it starts", s.name)
		}
		if s.parent.IsValid() && !s.remote {
			p := r.byID(s.parent)
			if p == nil {
				t.Errorf("span %q: parent %s not exported", s.name, s.parent)
			} else if p.traceID != s.traceID {
				t.Errorf("span %q: parent in another trace", s.name)
			}
		}
		for _, l := range s.links {
			if r.byID(l) == nil {
				t.Errorf("span %q: link to %s, which is not exported", s.name, l)
			}
		}
	}
	seen := map[trace.SpanID]bool{}
	for _, s := range r.spans {
		if seen[s.id] {
			t.Errorf("span id %s used twice (%q)", s.id, s.name)
		}
		seen[s.id] = true
	}
}

func TestChatMapping(t *testing.T) {
	r := mapLines(t, mapOptions{}, readSession(t, "chat.jsonl"))
	checkTree(t, r)
	roots := r.named("invoke_agent")
	if len(roots) != 1 {
		t.Fatalf("%d invoke_agent roots, want 1", len(roots))
	}
	root := roots[0]
	if got := attrString(root, "gen_ai.conversation.id"); got != "5f0c2a9e-sim-repl-0001" {
		t.Errorf("conversation id %q", got)
	}
	if got := attrString(root, "gen_ai.request.model"); got != "sim-small" {
		t.Errorf("model %q", got)
	}
	if want := traceIDFor("5f0c2a9e-sim-repl-0001"); root.traceID != want {
		t.Errorf("trace id %s, want the one derived from the session id %s", root.traceID, want)
	}
	turns := r.named("chat sim-small")
	if len(turns) != 5 {
		t.Fatalf("%d chat turns, want 5", len(turns))
	}
	for _, tr := range turns {
		if tr.parent != root.id {
			t.Errorf("turn not under the root")
		}
		if _, ok := attr(tr, "gen_ai.usage.input_tokens"); !ok {
			t.Errorf("turn without gen_ai.usage.input_tokens")
		}
	}
	if v, _ := attr(turns[1], "gen_ai.usage.cache_read.input_tokens"); v.AsInt64() != 1200 {
		t.Errorf("turn 2 cached tokens %v, want 1200", v.AsInt64())
	}
	if v, _ := attr(turns[0], "fr.reply.chunks"); v.AsInt64() != 22 {
		t.Errorf("turn 1 reply chunks %d, want 22", v.AsInt64())
	}
	// tool calls: paired by id, status from ok, under their turn and linked to it
	shell := r.named("execute_tool run_shell")
	if len(shell) != 1 || shell[0].status != codes.Error || shell[0].parent != turns[1].id {
		t.Fatalf("run_shell: %+v", shell)
	}
	if len(shell[0].links) != 0 {
		t.Errorf("run_shell has links %v: its turn, the model call that made it, is its parent", shell[0].links)
	}
	if got := attrString(shell[0], "gen_ai.tool.call.id"); got != "call_2" {
		t.Errorf("tool call id %q", got)
	}
	if reads := r.named("execute_tool read_file"); len(reads) != 2 || reads[0].status != codes.Ok || reads[0].id == reads[1].id {
		t.Errorf("read_file twice (the same call id in two turns): %d spans", len(reads))
	}
	// approvals: a span each, linked to the tool call it gates, decision unknown without --audit
	apps := r.named("approval shell_command")
	if len(apps) != 1 || !slices.Contains(apps[0].links, shell[0].id) || attrString(apps[0], "fr.approval.decision") != "unknown" {
		t.Fatalf("approval shell_command: %+v", apps)
	}
	if n := len(r.named("approval file_write")) + len(r.named("approval tool_action")); n != 2 {
		t.Errorf("%d other approvals, want 2", n)
	}
	// no content without --capture-content
	for _, s := range r.spans {
		for _, a := range s.attrs {
			switch a.Key {
			case "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "fr.reply", "fr.approval.summary":
				t.Errorf("span %q carries %s without --capture-content", s.name, a.Key)
			}
		}
	}
	for _, l := range r.logs {
		if l.body != "" {
			t.Errorf("log %s has a body without --capture-content", l.eventName)
		}
	}
	// metrics
	if got := r.sum(metricTokens, attribute.String("gen_ai.token.type", "input")); got != 1800+2400+3000+3600+4200 {
		t.Errorf("input tokens %v", got)
	}
	if got := r.sum(metricToolCalls, attribute.String("fr.outcome", "error")); got != 2 {
		t.Errorf("failed tool calls %v, want 2", got)
	}
	if got := r.sum(metricApprovals); got != 3 {
		t.Errorf("approvals %v, want 3", got)
	}
	if got := r.sum(metricSessions, attribute.String("fr.outcome", "ended")); got != 1 {
		t.Errorf("sessions ended %v, want 1", got)
	}
	// logs: every event but the streamed chunks, each tied to a span of the trace
	events := 0
	for _, l := range readSession(t, "chat.jsonl") {
		if !strings.Contains(l, `"type":"token"`) && !strings.Contains(l, `"type":"thinking"`) {
			events++
		}
	}
	replies := 0
	for _, l := range r.logs {
		if l.eventName == "fuseraft.reply" {
			replies++
			continue
		}
		if l.traceID != root.traceID || r.byID(l.spanID) == nil {
			t.Errorf("log %s not tied to a span of the trace", l.eventName)
		}
	}
	if got := len(r.logs) - replies; got != events {
		t.Errorf("%d event log records, want %d", got, events)
	}
	if replies != 5 {
		t.Errorf("%d fuseraft.reply records, want 5", replies)
	}
}

func TestRunMapping(t *testing.T) {
	r := mapLines(t, mapOptions{}, readSession(t, "run.jsonl"))
	checkTree(t, r)
	root := r.named("invoke_workflow")
	if len(root) != 1 || root[0].status != codes.Ok {
		t.Fatalf("root: %+v", root)
	}
	if got := attrString(root[0], "gen_ai.usage.input_tokens"); got != "98000" {
		t.Errorf("root input tokens %s", got)
	}
	for _, agent := range []string{"planner", "coder", "reviewer", "deployer"} {
		sp := r.named("invoke_agent " + agent)
		if len(sp) != 1 || sp[0].parent != root[0].id || attrString(sp[0], "gen_ai.agent.name") != agent {
			t.Errorf("agent %s: %d spans", agent, len(sp))
		}
	}
	coder := r.named("invoke_agent coder")[0]
	if got := attrString(coder, "gen_ai.usage.output_tokens"); got != "310" {
		t.Errorf("coder output tokens %s", got)
	}
	reviewer := r.named("invoke_agent reviewer")[0]
	if _, ok := attr(reviewer, "gen_ai.usage.input_tokens"); ok {
		t.Errorf("reviewer's null tokens exported as a number")
	}
	sh := r.named("execute_tool run_shell")
	if len(sh) != 1 || sh[0].parent != coder.id {
		t.Fatalf("run_shell: %+v", sh)
	}
	if sh[0].status != codes.Ok {
		t.Errorf("run_shell status %v, want ok from agent_message.toolCalls[].succeeded", sh[0].status)
	}
	route := r.named("approval route_approval")
	if len(route) != 1 {
		t.Fatalf("%d route approvals", len(route))
	}
}

func TestFailedRunMapping(t *testing.T) {
	r := mapLines(t, mapOptions{}, readSession(t, "run-failed.jsonl"))
	checkTree(t, r)
	root := r.named("invoke_workflow")
	if len(root) != 1 || root[0].status != codes.Error || root[0].statusMsg != "route reviewer -> deployer denied" {
		t.Fatalf("root: %+v", root)
	}
	if got := attrString(root[0], "error.type"); got != "failed" {
		t.Errorf("error.type %q", got)
	}
	if got := r.sum(metricSessions, attribute.String("fr.outcome", "failed")); got != 1 {
		t.Errorf("failed sessions %v", got)
	}

	// a run that failed before it started: only a result, sessionId null
	r = mapLines(t, mapOptions{}, readSession(t, "run-unstarted.jsonl"))
	if len(r.spans) != 1 || r.spans[0].name != "invoke_workflow" || r.spans[0].status != codes.Error {
		t.Fatalf("unstarted run: %+v", r.spans)
	}
	again := mapLines(t, mapOptions{}, readSession(t, "run-unstarted.jsonl"))
	if again.spans[0].traceID != r.spans[0].traceID {
		t.Errorf("the same unstarted run exported twice got two traces")
	}
}

func TestDaemonMapping(t *testing.T) {
	r := mapLines(t, mapOptions{}, readSession(t, "daemon.jsonl"))
	checkTree(t, r)
	root := r.named("invoke_workflow")
	if len(root) != 1 || attrString(root[0], "gen_ai.conversation.id") != "sim-eb81a556cedac11d" || root[0].status != codes.Ok {
		t.Fatalf("root: %+v", root)
	}
	if got := attrString(root[0], "fr.session.kind"); got != "task" {
		t.Errorf("kind %q", got)
	}
	tools := 0
	for _, s := range r.spans {
		if strings.HasPrefix(s.name, "execute_tool ") {
			tools++
			if s.status != codes.Unset {
				t.Errorf("a daemon's tool call %q has a status: the daemon does not report outcomes", s.name)
			}
		}
	}
	if tools != 4 {
		t.Errorf("%d tool spans, want 4", tools)
	}
	if n := len(r.named("approval shell_command")) + len(r.named("approval file_write")); n != 4 {
		t.Errorf("%d approvals, want 4", n)
	}
	if got := r.sum(metricToolCalls, attribute.String("fr.outcome", "unknown")); got != 4 {
		t.Errorf("tool calls of unknown outcome %v", got)
	}
}

func TestFleetMapping(t *testing.T) {
	r := mapLines(t, mapOptions{}, readSession(t, "fleet.jsonl"))
	checkTree(t, r)
	roots := r.named("invoke_workflow")
	if len(roots) != 2 {
		t.Fatalf("%d roots, want 2 (two tasks interleaved)", len(roots))
	}
	if roots[0].traceID == roots[1].traceID {
		t.Errorf("two tasks share a trace")
	}
	for _, root := range roots {
		var children int
		for _, s := range r.spans {
			if s.traceID == root.traceID && s != root {
				children++
			}
		}
		if children != 9 { // an agent, 4 tool calls, 4 approvals
			t.Errorf("task %s: %d spans under it, want 9", attrString(root, "fr.task.id"), children)
		}
		if attrString(root, "host.name") == "" {
			t.Errorf("task without host.name")
		}
	}
	// the fleet's task is the daemon's task: the same session, the same trace
	d := mapLines(t, mapOptions{}, readSession(t, "daemon.jsonl"))
	if d.named("invoke_workflow")[0].traceID != roots[0].traceID {
		t.Errorf("the same session read from a daemon and from the fleet landed in two traces")
	}
}

func TestIDsAreStable(t *testing.T) {
	a := mapLines(t, mapOptions{}, readSession(t, "chat.jsonl"))
	b := mapLines(t, mapOptions{}, readSession(t, "chat.jsonl"))
	if len(a.spans) != len(b.spans) {
		t.Fatalf("%d spans, then %d", len(a.spans), len(b.spans))
	}
	for i := range a.spans {
		if a.spans[i].id != b.spans[i].id || a.spans[i].traceID != b.spans[i].traceID {
			t.Errorf("span %d (%s) has other ids the second time", i, a.spans[i].name)
		}
	}
}

func TestTraceparent(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
	r := mapLines(t, mapOptions{parent: parent}, readSession(t, "run.jsonl"), readSession(t, "chat.jsonl"))
	for _, s := range r.spans {
		if s.traceID != tid {
			t.Fatalf("span %q not in the TRACEPARENT's trace", s.name)
		}
	}
	for _, name := range []string{"invoke_workflow", "invoke_agent"} {
		roots := r.named(name)
		if len(roots) != 1 || roots[0].parent != sid || !roots[0].remote {
			t.Errorf("%s: not a child of the TRACEPARENT's span", name)
		}
	}
	checkTree(t, r)
}

func TestCaptureContent(t *testing.T) {
	red, err := redact.New(redact.Options{Values: []string{"s3cr3t-value"}})
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"type":"ready","protocolVersion":1,"sessionId":"c1","model":"m","title":null,"autoTitle":null,"midTurnCommands":[]}`,
		`{"type":"turn_start","text":""}`,
		`{"type":"token","text":"the key is s3cr3t-value"}`,
		`{"type":"tool_call","id":"t1","name":"run_shell","summary":"echo","args":{"command":"echo s3cr3t-value"},"agent":null}`,
		`{"type":"tool_result","id":"t1","name":"run_shell","ok":true,"output":"s3cr3t-value\n"}`,
		`{"type":"message_end","turnIndex":0,"toolCalls":["run_shell"],"inputTokens":10,"outputTokens":5}`,
	}
	r := mapLines(t, mapOptions{capture: true, red: red}, lines)
	tool := r.named("execute_tool run_shell")[0]
	if got := attrString(tool, "gen_ai.tool.call.arguments"); got != `{"command":"echo [REDACTED]"}` {
		t.Errorf("arguments %q", got)
	}
	if got := attrString(tool, "gen_ai.tool.call.result"); got != "[REDACTED]\n" {
		t.Errorf("result %q", got)
	}
	if got := attrString(r.named("chat m")[0], "fr.reply"); got != "the key is [REDACTED]" {
		t.Errorf("reply %q", got)
	}
	for _, l := range r.logs {
		if strings.Contains(l.body, "s3cr3t") {
			t.Errorf("log %s body not redacted: %s", l.eventName, l.body)
		}
	}
}

func TestAuditDecisions(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	os.WriteFile(log, []byte(
		`{"time":"2026-01-15T10:00:00Z","session":null,"type":"approval_request","kind":"shell_command","summary":"shell: go test ./...","decision":"allow","decider":"rule","rule":"tests","policy":"p","latencyMs":1,"prev":null,"hash":"x"}`+"\n"+
			`{"time":"2026-01-15T10:00:01Z","session":null,"type":"approval_request","kind":"route_approval","summary":"route","decision":"deny","decider":"person","policy":"p","latencyMs":1,"prev":"x","hash":"y"}`+"\n"), 0o644)
	a, err := readAudit(log)
	if err != nil {
		t.Fatal(err)
	}
	r := mapLines(t, mapOptions{audit: a}, readSession(t, "run-failed.jsonl"))
	sh := r.named("approval shell_command")[0]
	if attrString(sh, "fr.approval.decision") != "allow" || attrString(sh, "fr.approval.decider") != "rule:tests" {
		t.Errorf("shell approval: %v", sh.attrs)
	}
	route := r.named("approval route_approval")[0]
	if attrString(route, "fr.approval.decision") != "deny" || route.status != codes.Error {
		t.Errorf("route approval: %v", route.attrs)
	}
	if got := r.sum(metricApprovals, attribute.String("fr.approval.decision", "deny")); got != 1 {
		t.Errorf("denied approvals %v", got)
	}

	os.WriteFile(log, []byte("not an audit log\n"), 0o644)
	if _, err := readAudit(log); err == nil || !strings.Contains(err.Error(), "not a record") {
		t.Errorf("a file that is not an audit log: %v", err)
	}
}

// TestAuditWrittenWhileRead: fr-approve writes its log while fr-otel reads the session (one
// pipeline); a prompt's decision is looked up when its span ends, at the next event, which
// comes after the answer and so after the record.
func TestAuditWrittenWhileRead(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := readAudit(log) // not there yet
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	m := newMapper(mapOptions{audit: a}, r)
	in := m.input("live")
	at := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	lines := readSession(t, "run.jsonl")
	for _, l := range lines {
		at = at.Add(time.Millisecond)
		in.line([]byte(l), at)
		if strings.Contains(l, `"type":"approval_request"`) {
			kind := "shell_command"
			if strings.Contains(l, "route_approval") {
				kind = "route_approval"
			}
			f, _ := os.OpenFile(log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			// written in two pieces, as a reader may catch a write half done
			rec := `{"time":"t","session":null,"type":"approval_request","kind":"` + kind + `","summary":"s","decision":"allow","decider":"rule","rule":"r-` + kind + `","policy":"p","latencyMs":1,"prev":null,"hash":"h"}`
			f.WriteString(rec[:20])
			a.refresh()
			f.WriteString(rec[20:] + "\n")
			f.Close()
		}
	}
	m.finishAll()
	for _, kind := range []string{"shell_command", "route_approval"} {
		sp := r.named("approval " + kind)
		if len(sp) != 1 || attrString(sp[0], "fr.approval.decider") != "rule:r-"+kind {
			t.Errorf("%s: %v", kind, sp)
		}
	}
}

// TestEventTables maps short sequences and checks one thing each.
func TestEventTables(t *testing.T) {
	ready := `{"type":"ready","protocolVersion":1,"sessionId":"s1","model":"m1","title":null,"autoTitle":null,"midTurnCommands":[]}`
	cases := []struct {
		name  string
		lines []string
		check func(t *testing.T, r *recorder)
	}{
		{"cancelled turn fails its span", []string{ready, `{"type":"turn_start","text":""}`, `{"type":"cancelled"}`},
			func(t *testing.T, r *recorder) {
				tr := r.named("chat m1")
				if len(tr) != 1 || tr[0].status != codes.Error || attrString(tr[0], "error.type") != "cancelled" {
					t.Errorf("turn: %+v", tr)
				}
			}},
		{"tool call never answered ends with its turn, outcome unknown", []string{ready, `{"type":"turn_start","text":""}`,
			`{"type":"tool_call","id":"a","name":"x","summary":"","args":null,"agent":"sub"}`, `{"type":"message_end","turnIndex":0,"toolCalls":[]}`},
			func(t *testing.T, r *recorder) {
				x := r.named("execute_tool x")
				if len(x) != 1 || x[0].status != codes.Unset || attrString(x[0], "gen_ai.agent.name") != "sub" {
					t.Errorf("tool: %+v", x)
				}
			}},
		{"input ends mid-session: spans ended, root marked incomplete", []string{ready, `{"type":"turn_start","text":""}`},
			func(t *testing.T, r *recorder) {
				root := r.named("invoke_agent")
				if len(root) != 1 || attrString(root[0], "fr.incomplete") != "true" || len(r.named("chat m1")) != 1 {
					t.Errorf("spans: %d", len(r.spans))
				}
			}},
		{"noise and unknown events", []string{ready, `plain text`, `{"type":"brand_new","x":1}`, `[1]`, `{"no":"type"}`},
			func(t *testing.T, r *recorder) {
				root := r.named("invoke_agent")[0]
				if len(root.events) != 1 || root.events[0].name != "brand_new" {
					t.Errorf("events: %+v", root.events)
				}
				if len(r.logs) != 2 {
					t.Errorf("%d logs, want ready and brand_new", len(r.logs))
				}
			}},
		{"status changes the model of later turns", []string{ready, `{"type":"status","model":"m2","turn":1,"context":0,"level":"ok","modes":[],"input":0,"output":0,"cached":0}`,
			`{"type":"turn_start","text":""}`, `{"type":"message_end","turnIndex":0,"toolCalls":[]}`},
			func(t *testing.T, r *recorder) {
				if len(r.named("chat m2")) != 1 {
					t.Errorf("no chat m2 turn")
				}
			}},
		{"two chats in one input", []string{ready, `{"type":"session_end"}`, strings.Replace(ready, "s1", "s2", 1)},
			func(t *testing.T, r *recorder) {
				roots := r.named("invoke_agent")
				if len(roots) != 2 || roots[0].traceID == roots[1].traceID {
					t.Errorf("roots: %d", len(roots))
				}
			}},
		{"daemon result for a task of another client", []string{`{"type":"hello","protocolVersion":1,"clientId":null,"readOnly":false,"inFlight":null,"pendingResults":["p1"]}`,
			`{"type":"result","sessionId":"p1","task":"t","succeeded":false,"errorMessage":"boom","lastAgent":"a","lastMessage":null}`},
			func(t *testing.T, r *recorder) {
				root := r.named("invoke_workflow")
				if len(root) != 1 || root[0].status != codes.Error || root[0].traceID != traceIDFor("p1") {
					t.Errorf("roots: %+v", root)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mapLines(t, mapOptions{}, c.lines)
			checkTree(t, r)
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func TestCost(t *testing.T) {
	pt, err := prices.Parse([]byte("version: 1\ndefault: {input: 3, output: 15}\nmodels:\n  m1: {input: 1, output: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"type":"ready","protocolVersion":1,"sessionId":"s1","model":"m1","title":null,"autoTitle":null,"midTurnCommands":[]}`,
		`{"type":"turn_start","text":""}`,
		`{"type":"message_end","turnIndex":0,"toolCalls":[],"inputTokens":1000000,"outputTokens":500000}`,
	}
	r := mapLines(t, mapOptions{prices: pt}, lines)
	if got := r.sum(metricCost, attribute.String("gen_ai.request.model", "m1")); got != 2 {
		t.Errorf("cost %v USD, want 2", got)
	}
	if v, _ := attr(r.named("chat m1")[0], "fr.cost.usd"); v.AsFloat64() != 2 {
		t.Errorf("turn cost %v", v.AsFloat64())
	}
	if r := mapLines(t, mapOptions{}, lines); r.sum(metricCost) != 0 {
		t.Errorf("a cost without --prices")
	}
}
