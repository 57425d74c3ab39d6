package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// reference classifies b the slow, sure way: json.Valid, then a full decode.
func reference(b []byte) (valid, object, typed bool, typ string) {
	if !json.Valid(b) {
		return
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return true, false, false, ""
	}
	m, object := v.(map[string]any)
	typ, typed = m["type"].(string)
	return true, object, object && typed, typ
}

func check(t *testing.T, b []byte) {
	t.Helper()
	valid, object, typed, typ := reference(b)
	sh := Scan(b)
	if sh.Valid != valid || (valid && (sh.Object != object || sh.Typed != typed)) {
		t.Fatalf("Scan(%q) = %+v; want valid %v object %v typed %v", b, sh, valid, object, typed)
	}
	if typed && (sh.Type() != typ || !sh.TypeIs(typ)) {
		t.Fatalf("Scan(%q) type %q, want %q", b, sh.Type(), typ)
	}
	if valid && object {
		if q, sure := QuickType(b); !sure || q.Typed != typed || (typed && q.Type() != typ) {
			t.Fatalf("QuickType(%q) = %+v %v; want typed %v %q", b, q, sure, typed, typ)
		}
	}
}

func TestScan(t *testing.T) {
	for _, s := range []string{
		`{"type":"token","text":"hi"}`, `{"text":"\"type\":\"x\"","type":"token"}`, `{ "type" : "a" }`,
		`{"\u0074ype":"hello"}`, `{"type":"tool\u005Fresult"}`, `{"type":"a","type":"b"}`, `{"type":"a","type":1}`,
		`{"m":{"type":"inner"}}`, `{"type":5}`, `[1]`, `"type"`, `{}`, ``, `noise`, `{"type":"x"`, `{"type":"x"}x`,
		`{"a":01}`, `{"a":1.}`, `{"a":-0.5e+3,"type":"n"}`, "{\"type\":\"t\x01\"}", "{\"type\":\"t\xff\"}",
		`{"type":"\ud83d\ude00"}`, `{"type":"\ud800"}`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	} {
		check(t, []byte(s))
	}
}

func TestUnquote(t *testing.T) {
	for _, s := range []string{`"plain"`, `"\u0022q\u002B"`, `"\n\t\\\/"`, `"caf\u00E9 \ud83d\ude00"`, `"\ud800x"`, "\"\xff\"",
		// runs longer than eight bytes around escapes, valid and invalid UTF-8 mixed
		`"func main() {\n\tfmt.Println(\"héllo — 日本語 😀\")\n}\n"`,
		"\"abcdefghijklmno\xe2\x82\xacpqrstuvwxyz0123\xff\xfe\xe2\x82 tail after bad bytes\\\\\"",
		"\"\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80 emoji run then ascii run of some length\"",
		`"0123456789abcdef\\0123456789abcdef\/0123456789"`} {
		var want string
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(err)
		}
		if got, ok := Unquote([]byte(s)); !ok || got != want {
			t.Errorf("Unquote(%s) = %q %v, want %q", s, got, ok, want)
		}
	}
	if _, ok := Unquote([]byte(`"\x"`)); ok {
		t.Error("bad escape accepted")
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range []string{`{"type":"x"}`, `{"\u0074ype":"y"}`, `{"a":{"type":"n"},"type":"t"}`, `[1]`, `x`, `{"type":"a","type":"b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { check(t, b) })
}

func FuzzUnquote(f *testing.F) {
	f.Add([]byte(`"a\u0022b"`))
	f.Add([]byte("\"abcdefghij\\n\xe2\x82\xac\xff 日本語 0123456789\""))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want string
		err := json.Unmarshal(b, &want)
		// Unquote takes exactly one quoted string, no space around it.
		if err != nil || len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
			return
		}
		if got, ok := Unquote(b); !ok || got != want {
			t.Fatalf("Unquote(%q) = %q %v, want %q", b, got, ok, want)
		}
	})
}
