package policy

import (
	"strings"

	"github.com/fuseraft/fr/internal/jsonscan"

	"github.com/fuseraft/fr/pkg/wire"
)

// decodeRequest gives what wire.DecodeApprovalRequest gives, in one pass over the event
// instead of three (file contents can be megabytes). Anything unusual (invalid JSON, a field
// of the wrong type, a missing field) is handed to wire.DecodeApprovalRequest, so errors are
// exactly its errors. FuzzDecodeRequest checks that the two agree. Like it, a prompt whose text
// is not UTF-8, or whose deciding fields are given twice or in another case, is malformed:
// readers could take it two ways.
func decodeRequest(raw []byte) (*wire.ApprovalRequest, error) {
	// scan accepts only a valid JSON object, as encoding/json.Valid would.
	var f fields
	if !wire.ValidText(raw) || !f.scan(raw) {
		return wire.DecodeApprovalRequest(raw)
	}
	r := &wire.ApprovalRequest{Raw: raw}
	ok := f.str(fKind, &r.Kind, true)
	switch r.Kind {
	case wire.KindShellCommand:
		ok = ok && f.str(fCommand, &r.Command, true)
	case wire.KindToolAction:
		ok = ok && f.str(fPlugin, &r.Plugin, true) && f.str(fAction, &r.Action, true) && f.str(fDetail, &r.Detail, false)
	case wire.KindFileWrite:
		ok = ok && f.str(fPlugin, &r.Plugin, false) && f.str(fAction, &r.Action, false) && f.str(fPath, &r.Path, true) &&
			f.str(fOldContent, &r.OldContent, false) && f.str(fNewContent, &r.NewContent, true)
	case wire.KindRouteApproval:
		ok = ok && f.str(fKeyword, &r.Keyword, false) && f.str(fSourceAgent, &r.SourceAgent, true) && f.str(fTargetAgent, &r.TargetAgent, true)
	}
	if !ok {
		return wire.DecodeApprovalRequest(raw)
	}
	return r, nil
}

const (
	fKind = iota
	fCommand
	fPlugin
	fAction
	fDetail
	fPath
	fOldContent
	fNewContent
	fKeyword
	fSourceAgent
	fTargetAgent
	nFields
)

var fieldNames = [nFields]string{"kind", "command", "plugin", "action", "detail", "path", "oldContent", "newContent",
	"keyword", "sourceAgent", "targetAgent"}

// fields holds the raw value of each field of interest; odd marks a field given twice with
// different values, or under a key that differs from its name only in case.
type fields struct {
	v   [nFields][]byte
	odd [nFields]bool
}

// scan records the raw value of each field of interest (the last one, when a key repeats);
// false when raw is not one valid JSON object.
func (f *fields) scan(raw []byte) bool {
	return jsonscan.Fields(raw, func(key, v []byte) bool {
		for n, name := range fieldNames {
			switch {
			case string(key) == name:
				if f.v[n] != nil && !sameValue(f.v[n], v) {
					f.odd[n] = true
				}
				f.v[n] = v
			case len(key) == len(name) && strings.EqualFold(string(key), name):
				f.odd[n] = true
			}
		}
		return true
	})
}

// sameValue reports whether two raw JSON values mean the same.
func sameValue(a, b []byte) bool {
	if string(a) == string(b) {
		return true
	}
	sa, okA := jsonscan.Unquote(a)
	sb, okB := jsonscan.Unquote(b)
	return okA && okB && a[0] == '"' && b[0] == '"' && sa == sb
}

// str decodes field n into dst; false means "let wire decide" (missing, null, not a string,
// given two ways).
func (f *fields) str(n int, dst *string, required bool) bool {
	if f.odd[n] {
		return false
	}
	v := f.v[n]
	if v == nil || string(v) == "null" {
		return !required
	}
	if v[0] != '"' {
		return false
	}
	s, ok := jsonscan.Unquote(v)
	*dst = s
	// wire refuses an empty required field (but for a file's new content).
	return ok && !(required && s == "" && n != fNewContent)
}

// request decodes the approval_request from the event's decoded value (see event.value),
// with the same results as decodeRequest.
func (e *event) request() (*wire.ApprovalRequest, error) {
	v, err := e.value()
	m, ok := v.(map[string]any)
	if err != nil || !ok || !wire.ValidText(e.raw) {
		return wire.DecodeApprovalRequest(e.raw)
	}
	var f fields
	f.scan(e.raw)
	r := &wire.ApprovalRequest{Raw: e.raw}
	get := func(name string, dst *string, required bool) bool {
		for n, fn := range fieldNames {
			if fn == name && f.odd[n] {
				return false
			}
		}
		v, ok := m[name]
		if !ok || v == nil {
			return !required
		}
		s, ok := v.(string)
		*dst = s
		return ok && !(required && s == "" && name != "newContent")
	}
	ok = get("kind", &r.Kind, true)
	switch r.Kind {
	case wire.KindShellCommand:
		ok = ok && get("command", &r.Command, true)
	case wire.KindToolAction:
		ok = ok && get("plugin", &r.Plugin, true) && get("action", &r.Action, true) && get("detail", &r.Detail, false)
	case wire.KindFileWrite:
		ok = ok && get("plugin", &r.Plugin, false) && get("action", &r.Action, false) && get("path", &r.Path, true) &&
			get("oldContent", &r.OldContent, false) && get("newContent", &r.NewContent, true)
	case wire.KindRouteApproval:
		ok = ok && get("keyword", &r.Keyword, false) && get("sourceAgent", &r.SourceAgent, true) && get("targetAgent", &r.TargetAgent, true)
	}
	if !ok {
		return wire.DecodeApprovalRequest(e.raw)
	}
	return r, nil
}

// quickKind guesses the kind of a prompt without validating it, to pick a way of decoding
// it; both ways give the same result.
func quickKind(raw []byte) string {
	var f fields
	if !f.scan(raw) || f.v[fKind] == nil {
		return ""
	}
	k, _ := jsonscan.Unquote(f.v[fKind])
	return k
}
