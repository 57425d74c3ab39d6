package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/pkg/wire"
)

func init() {
	// a when that never ends is cut off after a number of steps; the tests need not wait long
	// for it, and the time bound is one only a hang reaches, however loaded the machine
	whenSteps = 200_000
	whenTimeout = time.Minute
}

func FuzzLoad(f *testing.F) {
	cf, _ := loadCases(f)
	for _, src := range cf.Policies {
		f.Add([]byte(src))
	}
	examples, _ := filepath.Glob("../../../../examples/*.yaml")
	for _, e := range examples {
		if b, err := os.ReadFile(e); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("version: 1\nrules: [{name: a, decision: allow, shell: ['a [', '**', '$']}]\n"))
	f.Add([]byte("version: 1\nrules:\n  - {name: a, decision: allow, when: 'def f: f; f'}\n"))
	f.Add([]byte("{version: 1, rules: [{name: x, decision: deny, file: {paths: '{a,b}/**', max_size: 1GiB}}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Load(data, "fuzz.yaml")
		if err != nil {
			if _, ok := err.(Errors); !ok {
				t.Fatalf("not an Errors: %T %v", err, err)
			}
			return
		}
		Lint(p)
		d, err := NewDecider(p, "/repo")
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range []string{
			`{"type":"approval_request","kind":"shell_command","command":"git status && rm -rf / | x"}`,
			`{"type":"approval_request","kind":"file_write","path":"src/a.go","oldContent":"a\n","newContent":"b\n"}`,
			`{"type":"approval_request","kind":"tool_action","plugin":"p","action":"a","detail":"d"}`,
			`{"type":"approval_request","kind":"route_approval","keyword":"k","sourceAgent":"s","targetAgent":"t"}`,
			`{"type":"approval_request","kind":"other"}`,
		} {
			dec := d.Decide([]byte(ev))
			if dec.Verdict == Allow && dec.Kind == "other" && dec.Decider != ByRule {
				t.Fatalf("unknown kind allowed by %s", dec.Decider)
			}
		}
		d.AnswerQuestion([]byte(`{"type":"question","question":"q?","options":["a"],"allowOther":true}`))
	})
}

var shellFuzzPolicy = `version: 1
default: deny
rules:
  - {name: echo, decision: allow, shell: [echo]}
  - {name: git-status, decision: allow, shell: ["git status"]}
  - {name: no-rm, decision: deny, shell: [rm]}
`

// FuzzShellCommand: whatever the command, it is allowed only if every simple command in it is
// one the policy allows, with nothing that could change what runs; rm anywhere is denied.
func FuzzShellCommand(f *testing.F) {
	for _, s := range []string{
		"echo hi", "git status", "git status; rm -rf /", "git status && curl x | sh", "echo $(rm -rf /)",
		"echo `rm -rf /`", "bash -c \"rm -rf /\"", "sh -c 'rm x'", "env X=1 rm", "/bin/rm x", "\\rm x",
		"command rm x", "git status\nrm -rf /", "echo hi > f", "echo *", "sudo rm x", "xargs rm",
		"find . -exec rm {} \\;", "eval 'rm x'", "f() { rm x; }; f", "echo $'\\x72m'", "a=$(rm x)",
		"echo <(rm x)", "time rm x", "nohup nice -n 1 timeout 5 env -i rm x", "bash -c 'bash -c \"rm x\"'",
		"echo hi | (rm x)", "{ rm x; }", "if echo; then rm x; fi", "echo ${x:-$(rm y)}", "echo \"$(rm x)\"",
		"cat <<EOF\n$(rm x)\nEOF", "r\\m x", "'r'm x", "e\"\"cho hi", "PATH=. echo", "echo hi &> f",
		"(( x ))", "let x", "[[ $x -eq 1 ]]", "echo ${a[x]} ${!x} ${x:y}", "a[x]=1", "test -v 'a[$(id)]'",
		"/usr/bin/time -o f echo", "[ -f x ]", "for ((i=0;i<2;i++)); do echo; done",
	} {
		f.Add(s)
	}
	p := mustLoad(f, shellFuzzPolicy)
	f.Fuzz(func(t *testing.T, cmd string) {
		d, _ := NewDecider(p, "/repo")
		ev, _ := json.Marshal(map[string]string{"type": "approval_request", "kind": "shell_command", "command": cmd})
		dec := d.Decide(ev)
		if dec.Request != nil {
			cmd = dec.Request.Command // as JSON carried it (invalid UTF-8 is replaced)
		}
		parts := Analyze(cmd)
		sawRm := false
		for _, part := range parts {
			if part.Base == "rm" || part.Name == "rm" {
				sawRm = true
			}
		}
		if sawRm && dec.Verdict != Deny {
			t.Fatalf("%q has rm but is %s by %s", cmd, dec.Verdict, dec.Decider)
		}
		if dec.Verdict != Allow {
			return
		}
		judged := 0
		for _, part := range parts {
			if part.DenyOnly {
				continue
			}
			judged++
			ok := part.Flags == 0 && len(part.Words) > 0 &&
				(part.Name == "echo" || part.Name == "git" && len(part.Words) > 1 && part.Words[1] == "status" && !part.dyn(1))
			if !ok {
				t.Fatalf("%q allowed, but its part %q (words %q, flags %d) is not allowed", cmd, part.Text, part.Words, part.Flags)
			}
		}
		if judged == 0 {
			t.Fatalf("%q allowed with nothing judged", cmd)
		}
	})
}

func FuzzDecideEvent(f *testing.F) {
	f.Add([]byte(`{"type":"approval_request","kind":"shell_command","command":"ls"}`))
	f.Add([]byte(`{"type":"approval_request","kind":"file_write","path":"../x","newContent":"x"}`))
	f.Add([]byte(`{"type":"approval_request","kind":null}`))
	f.Add([]byte(`{"type":"question","question":"?","options":null}`))
	f.Add([]byte(`[`))
	cf, pols := loadCases(f)
	_ = cf
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, p := range pols {
			d, _ := NewDecider(p, "/repo")
			dec := d.Decide(raw)
			if dec.Decider == ByMalformed && dec.Verdict != Deny {
				t.Fatalf("malformed prompt not denied: %+v", dec)
			}
			d.AnswerQuestion(raw)
		}
	})
}

// FuzzDecodeRequest: the one-pass decoder agrees with wire.DecodeApprovalRequest.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"type":"approval_request","kind":"shell_command","command":"ls"}`,
		`{"type":"approval_request","kind":"shell_command","command":"a","command":"b"}`,
		`{"type":"approval_request","kind":"shell_command","Command":"rm","command":"ls"}`,
		`{"type":"approval_request","kind":"shell_command","comm\u0061nd":"x"}`,
		`{"type":"approval_request","kind":"shell_command","comm\u0061nd":"rm","command":"ls"}`,
		`{"type":"approval_request","kind":"shell_command","Comm\u0061nd":"rm","command":"ls"}`,
		`{"type":"approval_request","kind":"file_write","path":"a\u0022b","oldContent":null,"newContent":"x\ny"}`,
		`{"type":"approval_request","kind":"file_write","path":"a","newContent":5}`,
		`{"type":"approval_request","kind":"tool_action","plugin":"p","action":"a","detail":{"x":[1,"}"]}}`,
		`{"type":"approval_request","kind":"route_approval","keyword":null,"sourceAgent":"s","targetAgent":"t"}`,
		`{"type":"approval_request","kind":"x\xffy"}`, `[1]`,
		"{\"type\":\"approval_request\",\"kind\":\"shell_command\",\"command\":\"ls\",\"x\":\"\xff\"}",
		`{"type":"approval_request","kind":"shell_command","command":"ls","x":"caf\u00e9 é \ud800"}`,
		`{"kind":"shell_command","command":"\u00e9\ud83d\ude00\ud800x\\/\"\b\f\r\t\u002B\/"}`,
		`{"kind":"shell_command","command":"\ud800\ud800 \udc00 caf\u00E9 \u0000"}`, `{`, ` {"kind" : "tool_action" , "plugin":"p","action":"a"} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, errA := decodeRequest(raw, scanned{})
		b, errB := wire.DecodeApprovalRequest(raw)
		c, errC := (&event{raw: raw}).request()
		if (errC == nil) != (errB == nil) || (errC != nil && errC.Error() != errB.Error()) {
			t.Fatalf("%q: errors %v / %v", raw, errC, errB)
		}
		if errC == nil {
			c.Raw = nil
		}
		if (errA == nil) != (errB == nil) || (errA != nil && errA.Error() != errB.Error()) {
			t.Fatalf("%q: errors %v / %v", raw, errA, errB)
		}
		if errA == nil {
			a.Raw, b.Raw = nil, nil
			if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(c, b) {
				t.Fatalf("%q:\n%+v\n%+v\n%+v", raw, *a, *b, *c)
			}
		}
		// a file's contents left to be decoded when needed decodes to the same
		var lf fields
		if l, _, pending, errL := decodeRequestFields(raw, scanned{}, &lf, true); errL == nil && errB == nil {
			if pending&oldPending != 0 {
				l.OldContent, _ = jsonscan.Unquote(lf.v[fOldContent])
			}
			if pending&newPending != 0 {
				l.NewContent, _ = jsonscan.Unquote(lf.v[fNewContent])
			}
			l.Raw = nil
			b.Raw = nil
			if !reflect.DeepEqual(l, b) {
				t.Fatalf("%q (old content decoded later):\n%+v\n%+v", raw, *l, *b)
			}
		} else if (errL == nil) != (errB == nil) {
			t.Fatalf("%q: errors %v / %v (old content decoded later)", raw, errL, errB)
		}
		// a line the reader already found valid is not validated again, with the same result;
		// nor are its text flags looked for again, as the reader learned them
		if jsonscan.Scan(raw).Valid {
			for _, sc := range []scanned{{valid: true}, lineScanned(wire.ParseLine(raw))} {
				v, errV := decodeRequest(raw, sc)
				if (errV == nil) != (errB == nil) || (errV != nil && errV.Error() != errB.Error()) {
					t.Fatalf("%q: errors %v / %v (known %+v)", raw, errV, errB, sc)
				}
				if errV == nil {
					v.Raw = nil
					if !reflect.DeepEqual(v, b) {
						t.Fatalf("%q (known %+v):\n%+v\n%+v", raw, sc, *v, *b)
					}
				}
			}
		}
	})
}

// FuzzDecideText: a prompt whose text is not UTF-8 (raw bytes or an escaped lone surrogate)
// is never allowed, even by a policy that allows every known kind.
func FuzzDecideText(f *testing.F) {
	f.Add([]byte(`{"type":"approval_request","kind":"shell_command","command":"ls"}`))
	f.Add([]byte("{\"type\":\"approval_request\",\"kind\":\"shell_command\",\"command\":\"ls\xff\"}"))
	f.Add([]byte(`{"type":"approval_request","kind":"tool_action","plugin":"p","action":"a","detail":"\ud800"}`))
	f.Add([]byte(`{"type":"approval_request","kind":"route_approval","sourceAgent":"a","targetAgent":"b","x":"\\ud800"}`))
	p := mustLoad(f, "version: 1\nrules:\n  - {name: all, decision: allow}\n")
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, _ := NewDecider(p, "/repo")
		if dec := d.Decide(raw); dec.Verdict == Allow && !wire.ValidText(raw) {
			t.Fatalf("%q is not UTF-8 text but allowed by %s", raw, dec.Decider)
		}
	})
}

// request decodes the approval_request from the event's decoded value (see event.value),
// with the same results as decodeRequest: a third decoder, which FuzzDecodeRequest compares
// with the other two.
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
