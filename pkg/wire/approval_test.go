package wire

import (
	"errors"
	"testing"
)

func TestDecodeApprovalRequestRefusesTwoReadings(t *testing.T) {
	const sh = `{"type":"approval_request","kind":"shell_command",`
	for _, c := range []struct {
		name, raw string
		ok        bool
	}{
		{"plain", sh + `"command":"ls"}`, true},
		{"a surrogate pair", sh + `"command":"ls \ud83d\ude00"}`, true},
		{"an escaped backslash before u", sh + `"command":"ls \\ud800"}`, true},
		{"the same value twice", sh + `"command":"ls","command":"l\u0073"}`, true},
		{"a field of another kind in another case", sh + `"command":"ls","Path":"x","path":"y"}`, true},
		{"raw invalid UTF-8", sh + "\"command\":\"ls\xff\"}", false},
		{"invalid UTF-8 in another field", sh + "\"command\":\"ls\",\"x\":\"\xc0\xaf\"}", false},
		{"a lone high surrogate", sh + `"command":"ls \ud800"}`, false},
		{"a lone low surrogate", sh + `"command":"\udc00"}`, false},
		{"a high surrogate then a letter", sh + `"command":"\ud800\u0041"}`, false},
		{"two commands", sh + `"command":"rm -rf /","command":"ls"}`, false},
		{"an escaped key", sh + `"command":"rm -rf /","comm\u0061nd":"ls"}`, false},
		{"a key in another case", sh + `"Command":"rm -rf /","command":"ls"}`, false},
		{"two kinds", `{"kind":"tool_action","kind":"shell_command","command":"ls"}`, false},
	} {
		_, err := DecodeApprovalRequest([]byte(c.raw))
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrMalformedPrompt)) {
			t.Errorf("%s: %s: error %v", c.name, c.raw, err)
		}
	}
}
