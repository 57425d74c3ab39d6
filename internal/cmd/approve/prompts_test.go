package approve

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Every prompt gets exactly one answer, whatever its bytes: fuseraft waits for it.
func TestEveryPromptOneAnswer(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\nrules:\n  - {name: ls, decision: allow, shell: [ls]}\n")
	const sh = `{"type":"approval_request","kind":"shell_command","command":`
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	for _, c := range []struct {
		name, line string
		approved   bool
	}{
		{"plain", sh + `"ls"}`, true},
		{"nested arrays past encoding/json's limit in a field not read", sh + `"ls","x":` + deep("[", "]", 10001) + `}`, false},
		{"a million nested arrays", sh + `"ls","x":` + deep("[", "]", 1000000) + `}`, false},
		{"a million nested objects", sh + `"ls","x":` + deep(`{"a":`, "}", 1000000) + `}`, false},
		{"a million brackets never closed", sh + `"ls","x":` + strings.Repeat("[", 1000000) + `}`, false},
		{"nesting where the command goes", sh + deep("[", "]", 100000) + `}`, false},
		{"cut short", sh + `"ls"`, false},
		{"invalid UTF-8 in the command", sh + "\"ls\xff\"}", false},
		{"invalid UTF-8 in a field not read", sh + "\"ls\",\"x\":\"\xfe\"}", false},
		{"a lone surrogate", sh + `"ls \ud800"}`, false},
		{"a lone surrogate in a field not read", sh + `"ls","x":"\udc00"}`, false},
		{"the command twice", sh + `"rm -rf /","command":"ls"}`, false},
		{"the command in another case", `{"type":"approval_request","kind":"shell_command","Command":"rm -rf /","command":"ls"}`, false},
		{"the kind twice", `{"type":"approval_request","kind":"shell_command","command":"rm -rf /","kind":"tool_action","plugin":"ls","action":"ls"}`, false},
		{"the same command twice", sh + `"ls","command":"ls"}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := c.line + "\n" + sh + `"ls"}` + "\n"
			code, out, errs := runApprove(t, in, "--policy", pol)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != 2 {
				t.Fatalf("%d answers to 2 prompts: %q", len(lines), out)
			}
			want := `{"type":"approval_response","approved":false}`
			if c.approved {
				want = `{"type":"approval_response","approved":true}`
			}
			if lines[0] != want || lines[1] != `{"type":"approval_response","approved":true}` {
				t.Errorf("answers %q, want %s then an allow", lines, want)
			}
		})
	}
	// a question that cannot be decoded is skipped, not left waiting
	code, out, _ := runApprove(t, `{"type":"question","question":"go on?","options":`+deep("[", "]", 20000)+`}`+"\n", "--policy", pol)
	if code != 0 || out != `{"type":"question_response","answer":null}`+"\n" {
		t.Errorf("undecodable question: exit %d, %q", code, out)
	}
}

// FuzzPromptLine: whatever follows "type":"approval_request" on a line, fr-approve writes
// exactly one answer to it (and still answers the next prompt), and never an allow when the
// line's text is not UTF-8, even under a policy that allows everything.
func FuzzPromptLine(f *testing.F) {
	for _, s := range []string{
		`"kind":"shell_command","command":"ls"}`, "\"kind\":\"shell_command\",\"command\":\"ls\xff\"}",
		`"kind":"shell_command","command":"\ud800"}`, `"kind":"file_write","path":"a","newContent":"x"}`,
		`"kind":"shell_command","command":[[[[[[`, `"kind":"tool_action","plugin":"p","action":"a"`,
		`"kind":"shell_command","command":"ls","command":"rm"}`, `"x":{"a":[1,2,{"b":"}"}]}}`, `}`, ``,
	} {
		f.Add([]byte(s))
	}
	pol := writeFile(f, f.TempDir(), "p.yaml", "version: 1\nrules:\n  - {name: all, decision: allow}\n")
	const next = `{"type":"approval_request","kind":"shell_command","command":"ls"}`
	f.Fuzz(func(t *testing.T, data []byte) {
		rest := strings.ReplaceAll(string(data), "\n", " ")
		if strings.Contains(strings.ToLower(rest), "type") || strings.Contains(rest, `\u`) {
			t.Skip() // it could name another type
		}
		line := `{"type":"approval_request",` + rest
		code, out, errs := runApprove(t, line+"\n"+next+"\n", "--policy", pol)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", line, code, errs)
		}
		answers := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(answers) != 2 || answers[1] != `{"type":"approval_response","approved":true}` {
			t.Fatalf("%q: answers %q, want one for it and an allow for the next", line, answers)
		}
		if !utf8.ValidString(line) && answers[0] != `{"type":"approval_response","approved":false}` {
			t.Fatalf("%q is not UTF-8 but got %s", line, answers[0])
		}
	})
}
