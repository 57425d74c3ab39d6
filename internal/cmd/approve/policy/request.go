package policy

import (
	"strings"

	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/pkg/wire"
)

// scanned is what a scan of a prompt's bytes learned: the reader's (wire.ParseLine, whose
// Line carries it), so that deciding does not look for it again.
type scanned struct {
	valid bool // valid JSON
	known bool // text is known
	text  int  // jsonscan.TextFlags, with CheckedUTF8 when the bytes over 0x7f are UTF-8
}

// lineScanned is what the reader learned of the line l.
func lineScanned(l wire.Line) scanned {
	flags, ok := l.TextFlags()
	return scanned{valid: l.Kind == wire.EventLine || ok, known: ok, text: flags}
}

// decodeRequest gives what wire.DecodeApprovalRequest gives, in one pass over the event
// instead of three (file contents can be megabytes). Anything unusual (invalid JSON, a field
// of the wrong type, a missing field) is handed to wire.DecodeApprovalRequest, so errors are
// exactly its errors. FuzzDecodeRequest checks that the two agree. Like it, a prompt whose text
// is not UTF-8, or whose deciding fields are given twice or in another case, is malformed:
// readers could take it two ways.
//
// sc is what is known of raw already: what is not (that it is valid JSON, with the project's
// scanner, which accepts exactly what encoding/json.Valid accepts; its text flags) is looked
// for first.
func decodeRequest(raw []byte, sc scanned) (*wire.ApprovalRequest, error) {
	var f fields
	r, _, _, err := decodeRequestFields(raw, sc, &f, false)
	return r, err
}

// pending marks the file contents of a file_write that decodeRequestFields left undecoded:
// JSON strings (which always decode) whose raw values f.v holds, decoded by
// Decider.oldContent and Decider.newContent when a rule or a person needs them.
type pending uint8

const (
	oldPending pending = 1 << iota
	newPending
)

// decodeRequestFields is decodeRequest that also returns, in f, the raw values of the fields
// of fieldNames (ok is false when it could not: the request then came from wire). With lazy,
// a file_write's oldContent and newContent are left undecoded when they are strings (pend).
func decodeRequestFields(raw []byte, sc scanned, f *fields, lazy bool) (req *wire.ApprovalRequest, ok bool, pend pending, err error) {
	*f = fields{}
	flags := sc.text
	if !sc.known {
		flags = jsonscan.TextFlags(raw)
	}
	f.noEscapeU = flags&jsonscan.EscapeU == 0
	if !(sc.valid || jsonscan.Scan(raw).Valid) || !jsonscan.ValidText(raw, flags) {
		req, err = wire.DecodeApprovalRequest(raw)
		return req, false, 0, err
	}
	if !f.scan(raw) {
		req, err = wire.DecodeApprovalRequest(raw)
		return req, false, 0, err
	}
	r := &wire.ApprovalRequest{Raw: raw}
	ok = f.kind(&r.Kind)
	switch r.Kind {
	case wire.KindShellCommand:
		ok = ok && f.str(fCommand, &r.Command, true)
	case wire.KindToolAction:
		ok = ok && f.str(fPlugin, &r.Plugin, true) && f.str(fAction, &r.Action, true) && f.str(fDetail, &r.Detail, false)
	case wire.KindFileWrite:
		ok = ok && f.str(fPlugin, &r.Plugin, false) && f.str(fAction, &r.Action, false) && f.str(fPath, &r.Path, true)
		if lazy && f.lazyString(fNewContent) {
			pend |= newPending
		} else {
			ok = ok && f.str(fNewContent, &r.NewContent, true)
		}
		if lazy && f.lazyString(fOldContent) {
			pend |= oldPending
		} else {
			ok = ok && f.str(fOldContent, &r.OldContent, false)
		}
	case wire.KindRouteApproval:
		ok = ok && f.str(fKeyword, &r.Keyword, false) && f.str(fSourceAgent, &r.SourceAgent, true) && f.str(fTargetAgent, &r.TargetAgent, true)
	}
	if !ok {
		req, err = wire.DecodeApprovalRequest(raw)
		return req, false, 0, err
	}
	return r, true, pend, nil
}

// lazyString reports whether field n is a string given once: it decodes to a string
// whenever it is needed (the event is valid JSON), and str would take it.
func (f *fields) lazyString(n int) bool {
	v := f.v[n]
	return !f.odd[n] && v != nil && v[0] == '"'
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
// noEscapeU says the whole event holds no backslash followed by u.
type fields struct {
	v         [nFields][]byte
	odd       [nFields]bool
	noEscapeU bool
}

// scan records the raw value of each field of interest (the last one, when a key repeats).
// raw must be valid JSON; false when it is not an object. jsonscan.Fields gives each key
// unescaped, and finds the end of long strings (file contents) a block at a time.
func (f *fields) scan(raw []byte) bool {
	return jsonscan.Fields(raw, func(key, v []byte) bool {
		ascii := jsonscan.IsASCII(key)
		for n, name := range fieldNames {
			if len(key) != len(name) {
				continue
			}
			switch {
			case string(key) == name:
				if f.v[n] != nil && !sameValue(f.v[n], v) {
					f.odd[n] = true
				}
				f.v[n] = v
			case ascii && asciiEqualFold(key, name), !ascii && strings.EqualFold(string(key), name):
				f.odd[n] = true
			}
		}
		return true
	})
}

// asciiEqualFold is strings.EqualFold for ASCII a and name of the same length.
func asciiEqualFold[T string | []byte](a T, name string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], name[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
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

// kind is str for the required kind, which is most often one of the known kinds, written
// plainly: their names need no string made.
func (f *fields) kind(dst *string) bool {
	if !f.odd[fKind] {
		switch v := f.v[fKind]; string(v) {
		case `"` + wire.KindShellCommand + `"`:
			*dst = wire.KindShellCommand
			return true
		case `"` + wire.KindToolAction + `"`:
			*dst = wire.KindToolAction
			return true
		case `"` + wire.KindFileWrite + `"`:
			*dst = wire.KindFileWrite
			return true
		case `"` + wire.KindRouteApproval + `"`:
			*dst = wire.KindRouteApproval
			return true
		}
	}
	return f.str(fKind, dst, true)
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
