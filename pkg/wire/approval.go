package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fuseraft/fr/internal/jsonscan"
)

// Approval kinds of the protocol page, section "Prompts". New kinds may be added in any
// release: a client that does not know a kind shows it and asks, or denies. Never approve it.
const (
	KindShellCommand  = "shell_command"
	KindToolAction    = "tool_action"
	KindFileWrite     = "file_write"
	KindRouteApproval = "route_approval"
)

// KnownKind reports whether kind is one of the four kinds this build knows.
func KnownKind(kind string) bool {
	switch kind {
	case KindShellCommand, KindToolAction, KindFileWrite, KindRouteApproval:
		return true
	}
	return false
}

// ApprovalRequest is an approval_request of any kind. The fields of the known kinds are decoded
// into the matching members; Raw keeps the whole event, so a kind this build does not know is
// still shown as it came.
type ApprovalRequest struct {
	Kind string

	// shell_command
	Command string
	// tool_action and file_write
	Plugin, Action string
	// tool_action
	Detail string
	// file_write: render it as a diff
	Path, OldContent, NewContent string
	// route_approval
	Keyword, SourceAgent, TargetAgent string

	Raw []byte
}

// ErrMalformedPrompt is wrapped by DecodeApprovalRequest for a prompt that lacks the fields its
// kind needs. Such a prompt must be denied.
var ErrMalformedPrompt = errors.New("malformed prompt")

// DecodeApprovalRequest decodes an approval_request event. A known kind whose fields are
// missing or of the wrong type gives an error wrapping ErrMalformedPrompt; an unknown kind is
// not an error (check KnownKind). So does a prompt that two readers could read two ways: one
// that is not UTF-8 anywhere (raw bytes, or an escaped lone surrogate such as \ud800, which
// decoders replace with U+FFFD), or whose kind, or a field of its kind, is given twice with
// different values or under a key that differs from the field's name only in case.
func DecodeApprovalRequest(raw []byte) (*ApprovalRequest, error) {
	if !ValidText(raw) {
		return nil, fmt.Errorf("%w: not valid UTF-8 (raw bytes, or an escaped lone surrogate)", ErrMalformedPrompt)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedPrompt, err)
	}
	r := &ApprovalRequest{Raw: raw}
	// required fields must be present and, but for contents, not empty.
	str := func(name string, dst *string, required bool) error {
		v, ok := m[name]
		if !ok || string(v) == "null" {
			if required {
				return fmt.Errorf("%w: %s without %q", ErrMalformedPrompt, r.kindOrType(), name)
			}
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("%w: %s field %q is not a string", ErrMalformedPrompt, r.kindOrType(), name)
		}
		if required && *dst == "" && name != "newContent" {
			return fmt.Errorf("%w: %s with an empty %q", ErrMalformedPrompt, r.kindOrType(), name)
		}
		return nil
	}
	if err := str("kind", &r.Kind, true); err != nil {
		return nil, err
	}
	type field struct {
		name     string
		dst      *string
		required bool
	}
	var fields []field
	switch r.Kind {
	case KindShellCommand:
		fields = []field{{"command", &r.Command, true}}
	case KindToolAction:
		fields = []field{{"plugin", &r.Plugin, true}, {"action", &r.Action, true}, {"detail", &r.Detail, false}}
	case KindFileWrite:
		fields = []field{{"plugin", &r.Plugin, false}, {"action", &r.Action, false}, {"path", &r.Path, true},
			{"oldContent", &r.OldContent, false}, {"newContent", &r.NewContent, true}}
	case KindRouteApproval:
		fields = []field{{"keyword", &r.Keyword, false}, {"sourceAgent", &r.SourceAgent, true}, {"targetAgent", &r.TargetAgent, true}}
	}
	for _, f := range fields {
		if err := str(f.name, f.dst, f.required); err != nil {
			return nil, err
		}
	}
	names := []string{"kind"}
	for _, f := range fields {
		names = append(names, f.name)
	}
	if err := ambiguousKeys(raw, names); err != nil {
		return nil, err
	}
	return r, nil
}

// ambiguousKeys reports a key of the object raw (valid JSON) that names one of names twice
// with different values, or in another case.
func ambiguousKeys(raw []byte, names []string) error {
	seen := map[string]string{}
	i := jsonscan.SkipSpace(raw, 0)
	for i < len(raw) && raw[i] != '}' {
		i = jsonscan.SkipSpace(raw, i+1) // '{' or ','
		if i >= len(raw) || raw[i] != '"' {
			break // {}
		}
		kEnd := jsonscan.SkipString(raw, i)
		k, _ := jsonscan.Unquote(raw[i:kEnd])
		i = jsonscan.SkipSpace(raw, jsonscan.SkipSpace(raw, kEnd)+1) // ':'
		vEnd := jsonscan.SkipValue(raw, i)
		v := string(raw[i:vEnd])
		if s, ok := jsonscan.Unquote(raw[i:vEnd]); ok && v != "" && v[0] == '"' {
			v = "s" + s
		}
		i = jsonscan.SkipSpace(raw, vEnd)
		for _, n := range names {
			if !strings.EqualFold(k, n) {
				continue
			}
			if k != n {
				return fmt.Errorf("%w: a key %q besides %q", ErrMalformedPrompt, k, n)
			}
			if prev, dup := seen[n]; dup && prev != v {
				return fmt.Errorf("%w: %q given twice, with different values", ErrMalformedPrompt, n)
			}
			seen[n] = v
		}
	}
	return nil
}

func (r *ApprovalRequest) kindOrType() string {
	if r.Kind == "" {
		return "approval_request"
	}
	return r.Kind + " approval_request"
}

// Summary is a one-line description of the request for people and audit logs.
func (r *ApprovalRequest) Summary() string {
	switch r.Kind {
	case KindShellCommand:
		return "shell: " + r.Command
	case KindToolAction:
		s := "tool: " + r.Plugin + "." + r.Action
		if r.Detail != "" {
			s += " " + r.Detail
		}
		return s
	case KindFileWrite:
		return "write: " + r.Path
	case KindRouteApproval:
		s := "route: " + r.SourceAgent + " -> " + r.TargetAgent
		if r.Keyword != "" {
			s += " (" + r.Keyword + ")"
		}
		return s
	}
	return "unknown kind " + fmt.Sprintf("%q", r.Kind)
}

// ValidText reports whether the JSON text raw is UTF-8 throughout and escapes no UTF-16
// surrogate that is not half of a pair (\ud800 alone, or \udc00 first): text that every JSON
// reader decodes to the same characters, where others replace bytes with U+FFFD.
func ValidText(raw []byte) bool {
	return jsonscan.ValidText(raw, jsonscan.TextFlags(raw))
}
