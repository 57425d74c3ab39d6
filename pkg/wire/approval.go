package wire

import (
	"encoding/json"
	"errors"
	"fmt"
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
// not an error (check KnownKind).
func DecodeApprovalRequest(raw []byte) (*ApprovalRequest, error) {
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
	return r, nil
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
