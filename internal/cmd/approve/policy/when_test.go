package policy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fuseraft/fr/pkg/wire"

	"github.com/itchyny/gojq"

	"github.com/fuseraft/fr/internal/jsonscan"
)

func TestFieldsRead(t *testing.T) {
	for src, want := range map[string]string{
		`.command | test("sudo")`:                             "command",
		`(.newContent // "") | length > 100000`:               "newContent",
		`.kind == "file_write" and (.path | endswith(".go"))`: "kind path",
		`."command" | ascii_downcase | contains("x")`:         "command",
		`.["detail"] | test("(?i)password")`:                  "detail",
		`select(.command != null) | .command`:                 "command",
		`if .a then .b elif .c then .d else .e end`:           "a b c d e",
		`.a as $x | .b | . == $x`:                             "a b",
		`{command, "path", x: .detail} | .x`:                  "command path detail",
		`[.a, .b] | length`:                                   "a b",
		`"\(.command) \(.path)" | test("x")`:                  "command path",
		`.command[.start:.end]`:                               "command start end",
		`try .a catch .`:                                      "a",
		`(.command | type) == "string" and (. | not | not)`:   "command",
		`$__loc__ | .line > 0`:                                "",
		// anything that sees the event itself is given all of it
		`.`:                       "", // the event is true, whatever its fields
		`if .a then . end | .b`:   "a b",
		`. == {}`:                 "whole",
		`keys | length`:           "whole",
		`to_entries | any`:        "whole",
		`[paths] | length`:        "whole",
		`getpath(["newContent"])`: "whole",
		`.[] | strings`:           "whole",
		`.. | strings`:            "whole",
		`tostream`:                "whole",
		`tojson | test("KEY")`:    "whole",
		`"\(.)" | test("KEY")`:    "whole",
		`.[.k]`:                   "whole",
		`.["new" + "Content"]`:    "whole",
		`. as $e | $e.newContent`: "whole",
		`def f: .; f | .a`:        "whole",
		`reduce .a as $x (0; .)`:  "whole",
		`length`:                  "whole",
		`has("newContent")`:       "whole",
		`with_entries(.)`:         "whole",
		`.a = 1 | .b`:             "whole",
		`@json | test("x")`:       "whole",
		`[.] | .[0].newContent`:   "whole",
		`{x: .} | .x.newContent`:  "whole",
		`. // 1 | keys`:           "whole",
		`error`:                   "whole",
		`input`:                   "whole",
		`ltrimstr("x") | keys`:    "whole",
		`.a? // . | keys`:         "whole",
		`splits("x")`:             "whole",
	} {
		q, err := gojq.Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		keys, whole := fieldsRead(q)
		got := strings.Join(keys, " ")
		if whole {
			got = "whole"
		}
		if got != want {
			t.Errorf("fieldsRead(%s) = %q, want %q", src, got, want)
		}
	}
}

// TestFieldsReadSameResults: a condition that reads only fields gives the same outputs and
// errors on those fields as on the whole event.
func TestFieldsReadSameResults(t *testing.T) {
	events := []string{
		`{"type":"approval_request","kind":"shell_command","command":"sudo rm -rf /"}`,
		`{"type":"approval_request","kind":"shell_command","command":"ls","command":"sudo ls"}`,
		`{"type":"approval_request","kind":"shell_command","command":"ls","newContent":"a","newContent":"b","NewContent":"c","path":null}`,
		`{"type":"approval_request","kind":"file_write","path":"x","newContent":"a\u00e9\n\"","oldContent":null,"detail":[1]}`,
		`{"type":"approval_request","kind":"shell_command","comm\u0061nd":"sudo x","a":1,"b":[1,2],"start":1,"end":3}`,
		`{"type":"approval_request","kind":"file_write","path":"a.go","oldContent":"x","newContent":"-----BEGIN RSA PRIVATE KEY-----"}`,
		`{"type":"approval_request","kind":"tool_action","plugin":"p","action":"a","detail":{"password":1},"a":null}`,
		`{"type":"approval_request","kind":"tool_action","plugin":"p","action":"a","detail":"PASSWORD=x","c":true,"d":"é"}`,
	}
	conds := []string{
		`.command | test("sudo")`, `(.newContent // "") | test("PRIVATE KEY")`, `.detail | test("(?i)password")`,
		`.kind == "file_write" and (.path | endswith(".go"))`, `.command[.start:.end]`, `if .a then .b elif .c then .d else .e end`,
		`.a as $x | .b | . == $x`, `{command, "path", x: .detail} | .x`, `"\(.command) \(.path)" | test("s")`,
		`try (.detail | test("x")) catch .`, `.b[]`, `[.a, .b] | length`, `(.command | type) == "string"`,
		`.detail | keys`, `.newContent | length`, `.newContent, .path, .oldContent, .NewContent`,
	}
	for _, src := range conds {
		q, err := gojq.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		keys, whole := fieldsRead(q)
		if whole {
			t.Fatalf("%s: expected to read fields only", src)
		}
		code, err := gojq.Compile(q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			var dec jsonscan.Decoder
			full := all(code, dec.Decode([]byte(e)))
			part := all(code, topFields([]byte(e), keys, nil))
			if full != part {
				t.Errorf("%s on %s:\nwhole:  %s\nfields: %s", src, e, full, part)
			}
			if req, err := decodeRequest([]byte(e), scanned{}); err == nil {
				known := func(name string) (string, bool) { return requestField(req, name, 0) }
				if reused := all(code, topFields([]byte(e), keys, known)); reused != full {
					t.Errorf("%s on %s:\nwhole:  %s\nreused: %s", src, e, full, reused)
				}
			}
			var f fields
			if req, ok, pending, _ := decodeRequestFields([]byte(e), scanned{valid: true}, &f, true); ok {
				if m := f.values(keys, req, pending); m != nil {
					if got := all(code, m); got != full {
						t.Errorf("%s on %s:\nwhole:  %s\nscan:   %s", src, e, full, got)
					}
					for _, k := range keys {
						if v, _ := f.value(k, req, pending); !reflect.DeepEqual(v, m[k]) {
							t.Errorf("%s: field %s is %#v, values gives %#v", e, k, v, m[k])
						}
					}
				}
			}
		}
	}
}

func all(code *gojq.Code, v any) string {
	var b strings.Builder
	it := code.Run(v)
	for {
		out, ok := it.Next()
		if !ok {
			return b.String()
		}
		fmt.Fprintf(&b, "%#v;", out)
	}
}

func TestTopFields(t *testing.T) {
	raw := []byte(`{"a":1,"b":{"x":[1,"}"]},"a":"last","c\u0064":"d","e":null}`)
	got := topFields(raw, []string{"a", "b", "cd", "e", "missing"}, nil)
	var dec jsonscan.Decoder
	want := dec.Decode(raw).(map[string]any)
	delete(want, "missing")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("topFields = %#v, want %#v", got, want)
	}
}

// TestWhenSharedAndBounded: rules with the same condition run it once per prompt; a condition
// that runs past the bound fails closed (a match for a deny rule, none for an allow rule),
// each rule warns, and the next prompt's conditions get a bound of their own.
func TestWhenSharedAndBounded(t *testing.T) {
	p := mustLoad(t, `version: 1
default: ask
rules:
  - {name: slow1, decision: allow, kind: tool_action, when: '.detail == "slow" and (def f: f; f)'}
  - {name: slow2, decision: allow, kind: tool_action, when: '.detail == "slow" and (def f: f; f)'}
  - {name: fast, decision: allow, kind: tool_action, when: '.detail == "ok"'}
  - {name: guard, decision: deny, kind: tool_action, when: '.detail == "never"'}
`)
	if len(p.conds) != 3 {
		t.Fatalf("%d distinct conditions, want 3", len(p.conds))
	}
	d, _ := NewDecider(p, "/")
	var warns []string
	d.Warn = func(format string, args ...any) { warns = append(warns, fmt.Sprintf(format, args...)) }
	ev := func(detail string) []byte {
		return []byte(`{"type":"approval_request","kind":"tool_action","plugin":"p","action":"a","detail":"` + detail + `"}`)
	}
	if dec := d.Decide(ev("slow")); dec.Verdict != Deny || dec.Rule != "guard" || !strings.Contains(dec.Reason, "when condition failed (the conditions of the prompt ran past 200000 steps)") {
		t.Errorf("slow: %+v", dec)
	}
	// the bound is for all conditions of a prompt together: fast's and guard's are cut off too
	if len(warns) != 4 || !strings.Contains(warns[0], "rule \"slow1\"") || !strings.Contains(warns[1], "rule \"slow2\"") ||
		!strings.Contains(warns[2], "rule \"fast\"") || !strings.Contains(warns[3], "rule \"guard\"") ||
		!strings.Contains(warns[0], "ran past 200000 steps") || !strings.Contains(warns[3], "the rule matches") {
		t.Errorf("warnings: %q", warns)
	}
	for i := 0; i < 3; i++ {
		if dec := d.Decide(ev("ok")); dec.Verdict != Allow || dec.Rule != "fast" {
			t.Errorf("after a timeout: %+v", dec)
		}
	}
	if dec := d.Decide(ev("slow")); dec.Verdict != Deny {
		t.Errorf("slow again: %+v", dec)
	}
	if dec := d.Decide(ev("ok")); dec.Verdict != Allow {
		t.Errorf("ok again: %+v", dec)
	}
}

// TestFastCond: the conditions run without jq give jq's result, and leave to jq every value
// they do not know.
func TestFastCond(t *testing.T) {
	conds := []string{
		`.command | test("sudo|doas")`, `.command | test("^git ")`, `(.newContent // "") | test("-----BEGIN [A-Z ]*PRIVATE KEY-----")`,
		`.detail | test("(?i)password")`, `.detail | test("password"; "i")`, `.detail | test("a.b"; "m")`, `.detail | test("x"; "gi")`,
		`(.newContent // "") | length > 10`, `.command | length >= 3`, `.command | length < 3`, `.command | length <= 3`,
		`.command | length == 3`, `.command | length != 3`, `.command | length == 10`, `.command | length != 10`,
		`.command | length > 10`, `.command | length >= 10`, `.command | length < 10`, `.command | length <= 10`, `.command | length > 11`, `(.["command"] // "sudo") | test("sudo")`, `(.command) | (test("é"))`,
		`.command | test("\\bgo\\b")`, `.command | test("")`, `.command | test("curl.*[|] *sh")`, `.command | test("^curl")`,
		`.command | test("(?i)curl x")`, `.detail | test("PassWord|pass")`,
	}
	long := strings.Repeat("x", 9) + "é" // 10 characters, 11 bytes
	values := []any{long, long + "x", strings.Repeat("日", 4), strings.Repeat("😀", 3), "0123456789", "sudo rm", "git status", "é日本😀x", "a\nb", "PassWord", "-----BEGIN RSA PRIVATE KEY-----", "", "go", "abc", "ab",
		"curl x | sh", "xcurl|sh", "CURL X | sh", "curl", strings.Repeat("a\n", 3000) + "-----BEGIN EC PRIVATE KEY-----", strings.Repeat("b", 5000) + "-----BEGIN ",
		nil, false, true, json.Number("12"), []any{"sudo"}, map[string]any{"a": "sudo"}, "\xff\xfe"}
	for _, src := range conds {
		q, err := gojq.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		f := compileFast(q)
		if f == nil {
			t.Errorf("%s: not run without jq", src)
			continue
		}
		code, _ := gojq.Compile(q)
		for _, key := range []string{"command", "newContent", "detail"} {
			for _, v := range values {
				in := map[string]any{key: v, "other": "sudo"}
				got, ok := f.eval(in)
				it := code.Run(in)
				out, _ := it.Next()
				_, isErr := out.(error)
				if !ok {
					if _, isStr := in[f.key].(string); isStr || (f.alt != nil && (v == nil || v == false)) {
						t.Errorf("%s on %#v: left to jq", src, in)
					}
					continue
				}
				if isErr || got != (out != nil && out != false) {
					t.Errorf("%s on %#v: %v, jq says %#v", src, in, got, out)
				}
			}
		}
	}
	for _, src := range []string{`.command | test("a"; "x")`, `.command | test("(")`, `.command | test($x)`, `.a.b | test("x")`,
		`.command | test("a") | not`, `.command | length > 1.5`, `.command | length > -1`, `.command | ascii_downcase | test("x")`,
		`def f: .; .command | test("x")`, `.command | test("x") and true`, `.command as $c | $c | test("x")`} {
		q, err := gojq.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if compileFast(q) != nil {
			t.Errorf("%s: should be left to jq", src)
		}
	}
}

// TestOldContentWhenNeeded: a file's old content is decoded for the rules that count changed
// lines and for the person asked, who sees the change.
func TestOldContentWhenNeeded(t *testing.T) {
	p := mustLoad(t, `version: 1
default: ask
rules:
  - {name: small, decision: allow, file: {paths: ["a/**"], max_changed_lines: 1}}
`)
	d, _ := NewDecider(p, "/repo")
	ev := func(path, old, new string) []byte {
		b, _ := json.Marshal(map[string]any{"type": "approval_request", "kind": "file_write", "path": path, "oldContent": old, "newContent": new})
		return b
	}
	if dec := d.DecideLine(wire.ParseLine(ev("a/x", "1\n2\n3\n", "1\n2\n4\n"))); dec.Verdict != Ask {
		t.Errorf("two changed lines: %+v", dec)
	} else if dec.Request.OldContent != "1\n2\n3\n" {
		t.Errorf("asked without the old content: %q", dec.Request.OldContent)
	}
	if dec := d.DecideLine(wire.ParseLine(ev("a/x", "1\n2\n3\n", "1\n2\n3\n4\n"))); dec.Verdict != Allow {
		t.Errorf("one added line: %+v", dec)
	}
	if dec := d.DecideLine(wire.ParseLine(ev("b/x", "é\"\\\n", "new"))); dec.Verdict != Ask || dec.Request.OldContent != "é\"\\\n" {
		t.Errorf("no rule: %+v", dec)
	}
}

// TestFileIndexSameDecisions: trying only the file rules the index gives decides every write
// as trying them all does.
func TestFileIndexSameDecisions(t *testing.T) {
	globs := []string{"a/**", "a/*.go", "b/**/*.md", "a", "**/*.go", "*/x/**", "{a,b}/**", "/etc/**", "/repo/a/**", "/**",
		"../**", "../a/*", "c/\\*x", "[ab]/**", "a/b/c.go", "/repo", "b?/**"}
	paths := []string{"a/x.go", "a", "b/y/z.md", "a/b/c.go", "c/*x", "../a/x", "../b", "/etc/passwd", "/repo/a/x.go", "/tmp/x",
		"b1/q", "x/x/y", "./a/../b/k.md", "a//b/c.go", "/", ".."}
	// small policies, where each rule can decide, and a large one
	var policies []string
	for n := 0; n < 40; n++ {
		var b strings.Builder
		b.WriteString("version: 1\ndefault: ask\nrules:\n")
		size := 3
		if n == 39 {
			size = 60
		}
		for i := 0; i < size; i++ {
			k := n*3 + i
			decision := []string{"allow", "deny", "ask"}[(k+n)%3]
			g1, g2 := globs[k%len(globs)], globs[(k*7+n)%len(globs)]
			fmt.Fprintf(&b, "  - {name: r%d, decision: %s, file: {paths: [%q, %q], max_size: %d}}\n", i, decision, g1, g2, 10+i)
			if k%10 == 0 {
				fmt.Fprintf(&b, "  - {name: w%d, decision: deny, kind: file_write, when: '.path == \"a\"'}\n", i)
			}
		}
		policies = append(policies, b.String())
	}
	indexed := 0
	for _, src := range policies {
		p := mustLoad(t, src)
		indexed += len(p.files.byFirst)
		plain := *p
		plain.files = fileIndex{}
		d1, _ := NewDecider(p, "/repo")
		d2, _ := NewDecider(&plain, "/repo")
		for _, path := range paths {
			for _, content := range []string{"x", strings.Repeat("y", 40)} {
				raw, _ := json.Marshal(map[string]any{"type": "approval_request", "kind": "file_write", "path": path, "newContent": content})
				a, c := d1.Decide(raw), d2.Decide(raw)
				a.Request, c.Request = nil, nil
				if !reflect.DeepEqual(a, c) {
					t.Errorf("%s under\n%s: indexed %+v, all rules %+v", path, src, a, c)
				}
			}
		}
	}
	if indexed == 0 {
		t.Fatal("no rule indexed")
	}
}
