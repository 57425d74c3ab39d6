package approve

import (
	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/pkg/wire"
)

// promptType returns the type of a line that is to be answered: an approval_request or a
// question, including one that is not valid JSON to a decoder (nested deeper than it goes, or
// cut short) but whose top level says it is a prompt. fuseraft waits for an answer to such a
// line too; the policy then denies it (a question is skipped) as malformed.
func promptType(l wire.Line) (string, bool) {
	if l.Kind == wire.EventLine {
		return l.Type, true
	}
	if l.Kind != wire.Noise {
		return "", false
	}
	typ, ok := brokenType(l.Raw)
	if ok && (typ == wire.TypeApproval || typ == wire.TypeQuestion) {
		return typ, true
	}
	return "", false
}

// brokenType reads the top-level "type" string of an object without validating it (the last
// one, when the key repeats, as wire.ParseLine does). Nesting costs nothing: values are skipped
// by counting brackets.
func brokenType(raw []byte) (typ string, ok bool) {
	i := jsonscan.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", false
	}
	for i++; ; {
		i = jsonscan.SkipSpace(raw, i)
		if i < len(raw) && raw[i] == ',' {
			i = jsonscan.SkipSpace(raw, i+1)
		}
		if i >= len(raw) || raw[i] != '"' {
			return typ, ok
		}
		kEnd := jsonscan.SkipString(raw, i)
		key, _ := jsonscan.Unquote(raw[i:kEnd])
		i = jsonscan.SkipSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return typ, ok
		}
		i = jsonscan.SkipSpace(raw, i+1)
		vEnd := jsonscan.SkipValue(raw, i)
		if vEnd <= i {
			return typ, ok
		}
		if key == "type" {
			typ, ok = "", false
			if raw[i] == '"' {
				typ, ok = jsonscan.Unquote(raw[i:vEnd])
			}
		}
		i = vEnd
	}
}
