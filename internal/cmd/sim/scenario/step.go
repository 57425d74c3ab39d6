package scenario

import (
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fuseraft/fr/pkg/wire"
)

// Step is one thing a turn, run or task does. Exactly one action key is set per step:
//
//	emit:     {type: token, text: "hi"}       any event, fields in the order written
//	raw:      'any line'                      written byte for byte (noise, pre-escaped JSON)
//	tokens:   "text streamed in word chunks"  token events (every: 20ms between chunks)
//	thinking: "text"                          thinking events, like tokens
//	delay:    20ms
//	approval: {kind: shell_command, command: "make"}   then allow: [steps] deny: [steps]
//	question: {question: "?", options: [a, b], allowOther: false}
//	          then answers: {a: [steps], b: [steps]} default: [steps] (skip or other text)
//	crash:    {exitCode: 134, message: "...", partial: '{"type":"tok'}
//	flood:    {count: 100000, type: token, text: "x"}
//	big:      {event: tool_result | tool_call | file_write, bytes: 50000000, path: "..."}
//	          (file_write is an approval: allow: / deny: apply)
//	fail:     "message"   the run or task fails with this errorMessage; the steps stop here
//	result:   {lastMessage: "..."}  fixes those fields of the run's or task's result from here
//	          on, over its result: (a branch telling how a denial changed the outcome)
//	hangup:   true        serve: drop the client's connection here
type Step struct {
	Line int // where the step starts in its file

	Emit     *Object
	Raw      *string
	Tokens   *string
	Thinking *string
	Every    Duration // between token or thinking chunks
	Delay    *Duration
	Approval *Object
	Allow    []Step
	Deny     []Step
	Question *Object
	Answers  map[string][]Step
	Default  []Step
	Crash    *Crash
	Flood    *Flood
	Big      *Big
	Fail     *string
	Result   *Result
	Hangup   bool
}

// Crash ends the process abruptly, as an unhandled exception does.
type Crash struct {
	ExitCode int    `yaml:"exitCode"`
	Message  string `yaml:"message"`
	// Partial is written to stdout without a line end just before dying.
	Partial string `yaml:"partial"`
}

// Flood sends Count events of one type as fast as the client reads them.
type Flood struct {
	Count int    `yaml:"count"`
	Type  string `yaml:"type"`
	Text  string `yaml:"text"`
}

// Big sends one very large event.
type Big struct {
	Event string `yaml:"event"`
	Bytes int    `yaml:"bytes"`
	Path  string `yaml:"path"`
}

type stepYAML struct {
	Emit     yaml.Node         `yaml:"emit"`
	Raw      *string           `yaml:"raw"`
	Tokens   *string           `yaml:"tokens"`
	Thinking *string           `yaml:"thinking"`
	Every    *Duration         `yaml:"every"`
	Delay    *Duration         `yaml:"delay"`
	Approval yaml.Node         `yaml:"approval"`
	Allow    []Step            `yaml:"allow"`
	Deny     []Step            `yaml:"deny"`
	Question yaml.Node         `yaml:"question"`
	Answers  map[string][]Step `yaml:"answers"`
	Default  []Step            `yaml:"default"`
	Crash    *Crash            `yaml:"crash"`
	Flood    *Flood            `yaml:"flood"`
	Big      *Big              `yaml:"big"`
	Fail     *string           `yaml:"fail"`
	Result   *Result           `yaml:"result"`
	Hangup   bool              `yaml:"hangup"`
}

var actionKeys = []string{"emit", "raw", "tokens", "thinking", "delay", "approval", "question", "crash", "flood", "big", "fail", "result", "hangup"}

// UnmarshalYAML reads one step strictly: one action, and only the keys that action takes.
func (s *Step) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return lineErr(n.Line, "a step is a mapping with one of: %s", strings.Join(actionKeys, ", "))
	}
	if err := checkKeys(n, typeOfStepYAML, "step"); err != nil {
		return err
	}
	var y stepYAML
	if err := n.Decode(&y); err != nil {
		return err
	}
	act, err := stepAction(n)
	if err != nil {
		return err
	}
	*s = Step{Line: n.Line, Raw: y.Raw, Tokens: y.Tokens, Thinking: y.Thinking, Delay: y.Delay,
		Allow: y.Allow, Deny: y.Deny, Answers: y.Answers, Default: y.Default, Crash: y.Crash,
		Flood: y.Flood, Big: y.Big, Fail: y.Fail, Result: y.Result, Hangup: y.Hangup}
	if y.Every != nil {
		s.Every = *y.Every
	}
	switch act {
	case "emit":
		return s.readEmit(&y.Emit)
	case "approval":
		return s.readApproval(&y.Approval)
	case "question":
		return s.readQuestion(&y.Question)
	}
	return s.check(act, n.Line)
}

// allowedWith are the keys a step's action goes with.
var allowedWith = map[string][]string{
	"tokens": {"every"}, "thinking": {"every"},
	"approval": {"allow", "deny"}, "big": {"allow", "deny"},
	"question": {"answers", "default"},
}

// stepAction returns the one action of the step n, once the step's other keys are known to
// go with it.
func stepAction(n *yaml.Node) (string, error) {
	keys := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys[n.Content[i].Value] = n.Content[i].Line
	}
	var actions []string
	for _, k := range actionKeys {
		if _, ok := keys[k]; ok {
			actions = append(actions, k)
		}
	}
	switch len(actions) {
	case 1:
	case 0:
		return "", lineErr(n.Line, "step has no action (one of: %s)", strings.Join(actionKeys, ", "))
	default:
		return "", lineErr(n.Line, "step has %d actions (%s); give each its own step", len(actions), strings.Join(actions, ", "))
	}
	act := actions[0]
	for k, line := range keys {
		if k != act && !slices.Contains(allowedWith[act], k) {
			return "", lineErr(line, "%q does not go with %q in a step", k, act)
		}
	}
	return act, nil
}

func (s *Step) readEmit(y *yaml.Node) error {
	var err error
	if s.Emit, err = nodeObject(y); err != nil {
		return err
	}
	if _, ok := s.Emit.String("type"); !ok {
		return lineErr(y.Line, "an emitted event needs a string \"type\"")
	}
	return nil
}

func (s *Step) readApproval(y *yaml.Node) error {
	var err error
	if s.Approval, err = nodeObject(y); err != nil {
		return err
	}
	if _, ok := s.Approval.String("kind"); !ok {
		return lineErr(y.Line, "an approval needs a string \"kind\" (shell_command, tool_action, file_write, route_approval, or any other)")
	}
	s.Approval.SetFirst("type", wire.TypeApproval)
	return nil
}

func (s *Step) readQuestion(y *yaml.Node) error {
	var err error
	if s.Question, err = nodeObject(y); err != nil {
		return err
	}
	if _, ok := s.Question.String("question"); !ok {
		return lineErr(y.Line, "a question needs a string \"question\"")
	}
	s.Question.SetFirst("type", wire.TypeQuestion)
	if _, ok := s.Question.Get("options"); !ok {
		s.Question.Set("options", []string{})
	}
	if _, ok := s.Question.Get("allowOther"); !ok {
		s.Question.Set("allowOther", true)
	}
	return nil
}

// check checks the fields of the action act of a step at line, and fills in their defaults.
func (s *Step) check(act string, line int) error {
	switch act {
	case "flood":
		if s.Flood.Count <= 0 {
			return lineErr(line, "flood.count must be at least 1")
		}
		if s.Flood.Type == "" {
			s.Flood.Type = wire.TypeToken
		}
	case "big":
		switch s.Big.Event {
		case "tool_result", "tool_call", "file_write":
		default:
			return lineErr(line, "big.event must be tool_result, tool_call or file_write, not %q", s.Big.Event)
		}
		if s.Big.Bytes <= 0 {
			return lineErr(line, "big.bytes must be at least 1")
		}
	case "result":
		if s.Result == nil {
			return lineErr(line, "result takes a mapping of result fields")
		}
	case "hangup":
		if !s.Hangup {
			return lineErr(line, "hangup takes true")
		}
	}
	return nil
}

var typeOfStepYAML = typeOf[stepYAML]()

// AnswerKeys returns the question's answer branches, sorted.
func (s *Step) AnswerKeys() []string {
	var k []string
	for a := range s.Answers {
		k = append(k, a)
	}
	sort.Strings(k)
	return k
}
