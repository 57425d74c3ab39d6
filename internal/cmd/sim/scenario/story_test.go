package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The built-in scenario is what a newcomer sees first: whatever they answer, the story it
// tells must follow the answers. TestStoryFollowsAnswers plays every part of it (the chat's
// turns in order, with and without questions; the run; each serve task) under every
// combination of answers to its prompts (allow or deny each approval; each option, a skip and,
// where allowed, other text for each question) and checks what it says against them.

// storyEvent is one event of a played story, or one prompt with the answer it was given.
type storyEvent struct {
	ev     map[string]any
	turn   int
	answer string // for prompts: allow, deny, an option, (skip), (other)
}

func (e storyEvent) typ() string         { s, _ := e.ev["type"].(string); return s }
func (e storyEvent) str(k string) string { s, _ := e.ev[k].(string); return s }

// storyPeer answers the n-th prompt with choice[n] (0 past the end), and records how many
// answers each prompt had, so that every path can be walked.
type storyPeer struct {
	choice []int
	asked  int
	widths []int
	turn   int
	events []storyEvent
}

type storyAnswer struct{ label, line string }

func promptAnswers(ev map[string]any) []storyAnswer {
	if ev["type"] == "approval_request" {
		return []storyAnswer{{"allow", `{"type":"approval_response","approved":true}`},
			{"deny", `{"type":"approval_response","approved":false}`}}
	}
	var out []storyAnswer
	opts, _ := ev["options"].([]any)
	for _, o := range opts {
		b, _ := json.Marshal(o)
		out = append(out, storyAnswer{fmt.Sprint(o), `{"type":"question_response","answer":` + string(b) + `}`})
	}
	out = append(out, storyAnswer{"(skip)", `{"type":"question_response","answer":null}`})
	if other, _ := ev["allowOther"].(bool); other {
		out = append(out, storyAnswer{"(other)", `{"type":"question_response","answer":"something else"}`})
	}
	return out
}

func (p *storyPeer) Emit(line []byte) error {
	var ev map[string]any
	_ = json.Unmarshal(line, &ev)
	p.events = append(p.events, storyEvent{ev: ev, turn: p.turn})
	return nil
}

func (p *storyPeer) Ask(_ context.Context, prompt []byte) ([]byte, error) {
	var ev map[string]any
	if err := json.Unmarshal(prompt, &ev); err != nil {
		return nil, err
	}
	answers := promptAnswers(ev)
	pick := 0
	if p.asked < len(p.choice) {
		pick = p.choice[p.asked]
	}
	p.widths = append(p.widths, len(answers))
	p.asked++
	p.events = append(p.events, storyEvent{ev: ev, turn: p.turn, answer: answers[pick].label})
	return []byte(answers[pick].line), nil
}

// eachPath calls play with a fresh peer for every combination of answers play's prompts can
// get, and check with the story it told.
func eachPath(t *testing.T, play func(p *storyPeer) *Outcome, check func(path string, events []storyEvent, out *Outcome)) int {
	t.Helper()
	todo := [][]int{nil}
	n := 0
	for len(todo) > 0 {
		choice := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		p := &storyPeer{choice: choice}
		out := play(p)
		full := append([]int(nil), choice...)
		for len(full) < len(p.widths) {
			full = append(full, 0)
		}
		for j := len(choice); j < len(p.widths); j++ {
			for alt := 1; alt < p.widths[j]; alt++ {
				next := append(append([]int(nil), full[:j]...), alt)
				todo = append(todo, next)
			}
		}
		var labels []string
		for _, e := range p.events {
			if e.answer != "" {
				labels = append(labels, fmt.Sprintf("%s %s", promptName(e), e.answer))
			}
		}
		check(strings.Join(labels, "; "), p.events, out)
		n++
		if n > 10000 {
			t.Fatal("more than 10000 paths: the walk does not end")
		}
	}
	return n
}

// promptName names a prompt by what it asks.
func promptName(e storyEvent) string {
	if e.typ() == "question" {
		return fmt.Sprintf("%q", e.str("question"))
	}
	for _, k := range []string{"command", "path", "targetAgent"} {
		if v := e.str(k); v != "" {
			return e.str("kind") + " " + v
		}
	}
	return e.str("kind") + " " + e.str("plugin") + "/" + e.str("action")
}

// reporter is where checkStory reports: a *testing.T, or a recorder in the test of the check.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// claim is something a story may say only when an action was allowed (done), or only when it
// was not (notDone). The action is the approval prompt that match selects.
type claim struct {
	action  string
	match   func(e storyEvent) bool
	done    *regexp.Regexp
	notDone *regexp.Regexp
}

func approvalOf(kind, key, value string) func(e storyEvent) bool {
	return func(e storyEvent) bool {
		return e.typ() == "approval_request" && e.str("kind") == kind && strings.HasPrefix(e.str(key), value)
	}
}

// storyClaims are the built-in scenario's sayings about its actions.
var storyClaims = []claim{
	{action: "go test", match: approvalOf("shell_command", "command", "go test"),
		done:    regexp.MustCompile(`(?i)tests pass|ok  \texample\.com`),
		notDone: regexp.MustCompile(`(?i)won't run them|tests (were|have) not (been )?run|go test was denied|tests were not run`)},
	{action: "write parser.go", match: approvalOf("file_write", "path", "parser.go"),
		done:    regexp.MustCompile(`wrote parser\.go|Parse. now keeps quoted|Parse keeps quoted words together|\[main [0-9a-f]+\] parser:`),
		notDone: regexp.MustCompile(`parser\.go (is unchanged|as it was)|writes? to parser\.go`)},
	{action: "write parser_test.go", match: approvalOf("file_write", "path", "parser_test.go"),
		done:    regexp.MustCompile(`TestParseQuoted in parser_test\.go`),
		notDone: regexp.MustCompile(`parser_test\.go were denied`)},
	{action: "commit", match: approvalOf("tool_action", "action", "commit"),
		done:    regexp.MustCompile(`(?i)\bfiles? committed|\[main [0-9a-f]+\]`),
		notDone: regexp.MustCompile(`(?i)uncommitted|not committed`)},
	{action: "route to deployer", match: approvalOf("route_approval", "targetAgent", "deployer"),
		done:    regexp.MustCompile(`Tagged v`),
		notDone: regexp.MustCompile(`deployer was denied`)},
}

// sayings are the texts of a story a person reads, by the event they come in.
func sayings(e storyEvent) []string {
	var s []string
	switch e.typ() {
	case "token", "info":
		s = append(s, e.str("text"))
	case "tool_result":
		s = append(s, e.str("output"))
	case "agent_message":
		if m, ok := e.ev["message"].(map[string]any); ok {
			c, _ := m["content"].(string)
			s = append(s, c)
		}
	}
	return s
}

// checkStory checks one played story against its answers; final is the result's lastMessage
// and error, said after everything else.
func checkStory(t reporter, part, path string, events []storyEvent, final []string) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s, answers [%s]: %s", part, path, fmt.Sprintf(format, args...))
	}
	// The answers so far to each action (allowed, denied), and the turn's text so far (a
	// reply is streamed word by word: claims are matched against the whole).
	state := map[string]string{}
	replyTurn, reply := -1, ""
	deniedWrites := map[string]bool{}
	refusedTurn := -1 // a question of this turn was answered no
	var openCall map[string]any
	checkText := func(text string) {
		for _, c := range storyClaims {
			if c.done.MatchString(text) && state[c.action] != "allow" {
				fail("%q says %s was done, but it was %s", text, c.action, orNever(state[c.action]))
			}
			if c.notDone.MatchString(text) && state[c.action] == "allow" {
				fail("%q says %s was not done, but it was allowed", text, c.action)
			}
		}
	}
	for _, e := range events {
		if e.turn != replyTurn {
			checkText(reply)
			replyTurn, reply = e.turn, ""
		}
		if e.answer != "" {
			// What was streamed before a prompt was said before its answer.
			checkText(reply)
			reply = ""
		}
		switch e.typ() {
		case "approval_request":
			if refusedTurn == e.turn {
				fail("after a no, %s is asked for anyway", promptName(e))
			}
			for _, c := range storyClaims {
				if c.match(e) {
					state[c.action] = e.answer
				}
			}
			if e.str("kind") == "file_write" {
				deniedWrites[e.str("path")] = e.answer != "allow"
			}
			if openCall != nil {
				openCall["answer"] = e.answer
			}
		case "question":
			if e.answer == "no" {
				refusedTurn = e.turn
			}
		case "tool_call":
			if refusedTurn == e.turn {
				fail("after a no, the tool %s is called anyway", e.str("name"))
			}
			openCall = map[string]any{"id": e.str("id")}
		case "tool_result":
			if openCall != nil && openCall["id"] == e.str("id") {
				ok, _ := e.ev["ok"].(bool)
				if a, asked := openCall["answer"].(string); asked && ok != (a == "allow") {
					fail("the tool %s was answered %s, and its result says ok=%v", e.str("name"), a, ok)
				}
				openCall = nil
			}
		case "file_changed":
			if deniedWrites[e.str("path")] {
				fail("%s changed after its write was denied", e.str("path"))
			}
		case "file_changes":
			changes, _ := e.ev["changes"].([]any)
			for _, c := range changes {
				m, _ := c.(map[string]any)
				if p, _ := m["path"].(string); deniedWrites[p] {
					fail("%s listed as changed after its write was denied", p)
				}
			}
		}
		for _, s := range sayings(e) {
			if e.typ() == "token" {
				reply += s
				continue
			}
			checkText(s)
		}
	}
	checkText(reply)
	for _, s := range final {
		checkText(s)
	}
}

func orNever(answer string) string {
	if answer == "" {
		return "never asked"
	}
	return "answered " + answer
}

func finalSayings(out *Outcome, r Result) []string {
	res := r.Over(out.Result)
	var s []string
	if res != nil && res.LastMessage != nil {
		s = append(s, *res.LastMessage)
	}
	if out.Failed != nil {
		s = append(s, *out.Failed)
	}
	return s
}

func TestStoryFollowsAnswers(t *testing.T) {
	s := Default()
	for _, questions := range []bool{true, false} {
		part := fmt.Sprintf("repl (questions %v)", questions)
		n := eachPath(t, func(p *storyPeer) *Outcome {
			pl := &Player{Peer: p, Questions: questions, NoDelays: true}
			var last Outcome
			for i, turn := range s.Repl.Turns {
				p.turn = i
				out, err := pl.Play(context.Background(), turn.Steps)
				if err != nil {
					t.Fatal(err)
				}
				last = out
			}
			return &last
		}, func(path string, events []storyEvent, _ *Outcome) {
			checkStory(t, part, path, events, nil)
		})
		t.Logf("%s: %d paths", part, n)
	}
	n := eachPath(t, func(p *storyPeer) *Outcome {
		out, err := (&Player{Peer: p, Questions: true, NoDelays: true}).Play(context.Background(), s.Run.Steps)
		if err != nil {
			t.Fatal(err)
		}
		return &out
	}, func(path string, events []storyEvent, out *Outcome) {
		checkStory(t, "run", path, events, finalSayings(out, s.Run.Result))
	})
	t.Logf("run: %d paths", n)
	for i, task := range s.Serve.Tasks {
		part := fmt.Sprintf("serve task %d", i)
		n := eachPath(t, func(p *storyPeer) *Outcome {
			out, err := (&Player{Peer: p, Questions: true, NoDelays: true}).Play(context.Background(), task.Steps)
			if err != nil {
				t.Fatal(err)
			}
			return &out
		}, func(path string, events []storyEvent, out *Outcome) {
			checkStory(t, part, path, events, finalSayings(out, task.Result))
		})
		t.Logf("%s: %d paths", part, n)
	}
}

// The checks themselves catch what they are for: a story that says a denied commit was made.
func TestStoryCheckCatchesContradictions(t *testing.T) {
	bad := []storyEvent{
		{ev: map[string]any{"type": "tool_call", "id": "c", "name": "git_commit"}},
		{ev: map[string]any{"type": "approval_request", "kind": "tool_action", "plugin": "git", "action": "commit"}, answer: "deny"},
		{ev: map[string]any{"type": "tool_result", "id": "c", "name": "git_commit", "ok": false}},
		{ev: map[string]any{"type": "info", "text": "1 file committed."}},
	}
	rec := &recorder{}
	checkStory(rec, "test", "commit deny", bad, nil)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "says commit was done") {
		t.Errorf("a denied commit reported as made: got %q", rec.errs)
	}
	rec = &recorder{}
	refused := []storyEvent{
		{ev: map[string]any{"type": "question", "question": "Commit the change?"}, answer: "no"},
		{ev: map[string]any{"type": "approval_request", "kind": "tool_action", "plugin": "git", "action": "commit"}, answer: "allow"},
	}
	checkStory(rec, "test", "no then commit", refused, nil)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "after a no") {
		t.Errorf("a no followed by the thing refused: got %q", rec.errs)
	}
}
