package policy

import (
	"encoding/json"
	"fmt"

	"github.com/fuseraft/fr/pkg/wire"
)

// kindFields are the string fields of each known kind a prompt may carry, required or not
// (wire.DecodeApprovalRequest): a prompt without a required one is malformed and denied
// before any condition runs.
var kindFields = map[string][]struct {
	name     string
	required bool
}{
	wire.KindShellCommand:  {{"command", true}},
	wire.KindToolAction:    {{"plugin", true}, {"action", true}, {"detail", false}},
	wire.KindFileWrite:     {{"path", true}, {"newContent", true}, {"oldContent", false}, {"plugin", false}, {"action", false}},
	wire.KindRouteApproval: {{"sourceAgent", true}, {"targetAgent", true}, {"keyword", false}},
}

// probeValues are values of a field a condition is tried on besides a plain word: empty, one
// word, words with two blanks between them (split(" ")[1] is then ""), JSON that is not an
// object.
var probeValues = []string{"", "a", "a  b", "a b c", "1", "[]"}

// lintConditions warns about when conditions that fail on prompts fuseraft may send: each is
// run on prompts of each kind its rule applies to, with its optional fields left out or null
// and each field given a few ordinary values (probeValues). A condition that fails on one
// (`.detail | fromjson`, `.command | split(" ")[1] | test(...)`, `.keyword | ascii_downcase`)
// counts then as a match for deny and ask rules and as no match for allow rules: rarely what
// its author meant. This finds what a few prompts show, not every failure: a condition may
// still fail on a prompt none of them is like.
func lintConditions(p *Policy, add func(int, string, string, ...any)) {
	for _, r := range p.Rules {
		if r.When == nil {
			continue
		}
		kinds := knownKinds
		if r.Kind != "" {
			kinds = []string{r.Kind}
		}
		if why := conditionFails(r, kinds); why != "" {
			effect := "no match for this allow rule"
			if r.Decision != Allow {
				effect = "a match for this " + r.Decision.String() + " rule"
			}
			add(r.Line, r.Name, "rule %q: when %q fails on the prompt %s; a failed condition counts as %s: "+
				"give missing fields a default (.x // \"\") or catch the error (try ... catch false)", r.Name, r.WhenSrc, why, effect)
		}
	}
}

// conditionFails tries rule r's condition on the probe prompts of kinds and describes the
// first that makes it fail ("" when none does).
func conditionFails(r *Rule, kinds []string) string {
	for _, kind := range kinds {
		fields := kindFields[kind]
		base := map[string]any{"type": wire.TypeApproval, "kind": kind}
		for _, f := range fields {
			if f.required {
				base[f.name] = "x"
			}
		}
		try := func(ev map[string]any) string {
			if err := runProbe(r, ev); err != nil {
				shown := copyMap(ev)
				delete(shown, "type")
				b, _ := json.Marshal(shown)
				return fmt.Sprintf("%s (%v)", b, err)
			}
			return ""
		}
		if why := try(base); why != "" {
			return why
		}
		for _, f := range fields {
			ev := copyMap(base)
			if !f.required {
				ev[f.name] = nil
				if why := try(ev); why != "" {
					return why
				}
			}
			for _, v := range probeValues {
				if v == "" && f.required && f.name != "newContent" {
					continue // malformed: denied before conditions run
				}
				ev[f.name] = v
				if why := try(ev); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// runProbe runs r's condition on ev within the bounds of a prompt's conditions; the error it
// gave, if any.
func runProbe(r *Rule, ev map[string]any) error {
	var clock whenClock
	defer clock.stop()
	it := r.When.RunWithContext(clock.start(), ev)
	out, ok := it.Next()
	if !ok {
		return nil
	}
	if err, isErr := out.(error); isErr {
		return err
	}
	return nil
}
