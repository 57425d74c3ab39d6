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

// scanByFields is Scan as Fields does it, member by member with every key unescaped: the exact
// path Scan's own walk must agree with, down to RawType and TypeEsc.
func scanByFields(b []byte) (sh Shape) {
	i := skipWS(b, 0)
	if i >= len(b) {
		return sh
	}
	if b[i] != '{' {
		end, ok := valueEnd(b, i, 0)
		sh.Valid = ok && skipWS(b, end) == len(b)
		return sh
	}
	ok := Fields(b, func(key, raw []byte) bool {
		if string(key) == "type" {
			if raw[0] == '"' {
				sh.Typed, sh.RawType, sh.TypeEsc = true, raw, !IsASCII(raw[1:len(raw)-1]) || bytes.IndexByte(raw, '\\') >= 0
			} else {
				sh.Typed, sh.RawType, sh.TypeEsc = false, nil, false
			}
		}
		return true
	})
	if !ok {
		return Shape{}
	}
	sh.Valid, sh.Object = true, true
	return sh
}

func check(t *testing.T, b []byte) {
	t.Helper()
	valid, object, typed, typ := reference(b)
	sh := Scan(b)
	if want := scanByFields(b); sh.Valid != want.Valid || sh.Object != want.Object || sh.Typed != want.Typed ||
		!bytes.Equal(sh.RawType, want.RawType) || (sh.RawType == nil) != (want.RawType == nil) || sh.TypeEsc != want.TypeEsc {
		t.Fatalf("Scan(%q) = %+v; Fields says %+v", b, sh, want)
	}
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
		// Short lines, where strings end within a word of the line's end.
		`{"type":"token","text":"hello "}`, `{"type":"token","text":"hello "} `, `{"type":"token","text":"hello "`,
		`{"type":"token","text":"hello \"}`, `{"type":"token","text":"hello\\"}`, `{"type":"token","text":"\u00e9"}`,
		`{"type":"token","text":"\u00e"}`, `{"type":"token","text":"\"}`, `{"type":"t"}`, `{"type":"t\"}`, `{"type":"\`,
		`{"type":"token","text":"hi"}`, `{"t":"x"}`, `{"type":""}`, `{"":""}`, `{"type"`, `{"type":`, `{"type":"`, `{"`, `{`,
		"{\"type\":\"tok\x00\"}", "{\"type\":\"token\",\"text\":\"hi\x1f\"}", "{\"type\":\"token\",\"text\":\"hi\x7f\"}",
		"{\"type\":\"tok\xe9\"}", "{\"type\":\"tok\xc3\xa9n\"}", "{\"ty\xffe\":\"x\"}", "{\"type\":\"\xed\xa0\x80\"}",
		`{"type":"\ud800","type":"\udc00x"}`, `{"type":"a","type":"b","type":{"type":"c"}}`, `{"type":"a","typ\u0065":"b"}`,
		`{"typ\u0065":"a","type":"b"}`, `{"\u0074\u0079\u0070\u0065":1}`, `{"type\u0000":"x"}`, `{"\"type":"x"}`, `{"type ":"x"}`,
		`{"types":"x"}`, `{"typ":"x"}`, `{"TYPE":"x"}`, `{"type":"x",}`, `{"type":"x" "a":1}`, `{"type":"x":1}`, `{"type"::"x"}`,
		`{"type":"x","n":1e5,"t":true,"f":false,"z":null,"a":[],"o":{}}`, `{"n":-}`, `{"n":-0}`, `{"n":1e}`, `{"t":tru}`, `{"t":nul}`,
		"\t{\"type\" :\r\n\"x\" }\n", `{"type":"x"}}`, `{"a":[{"type":"x"}]}`, `{"a":"` + strings.Repeat("x", 70) + `","type":"y"}`,
		`{"type":"` + strings.Repeat("é", 40) + `"}`, `{"type":"` + strings.Repeat("a", 61) + `\"}`, `{"type":"` + strings.Repeat("a", 61) + `"`,
		`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `,"type":"x"}`, `{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	} {
		check(t, []byte(s))
	}
}

// TestScanShortLinesMutated checks Scan on every truncation of short lines as fuseraft writes
// them, and on each with one byte replaced, anywhere, by a byte that makes scanning hard.
func TestScanShortLinesMutated(t *testing.T) {
	lines := []string{`{"type":"token","text":"hello "}`, `{"type":"token","text":"\n\n"}`, `{"text":" café","type":"token"}`,
		`{"type":"status","model":"sim-large","turn":1,"context":0.728,"modes":[],"input":32139}`, `{"\u0074ype":"t\u00e9"}`,
		`{"type":"tool_call","id":"c","args":{"path":"a.go"},"agent":null}`, `{ "type" : "x" , "type" : "y" }`}
	repl := []byte("\"\\u0aA:,{}[] \t\n\x00\x1f\x7f\x80\xc3\xed\xffe-.1tfn")
	for _, l := range lines {
		for n := 0; n <= len(l); n++ {
			check(t, []byte(l[:n]))
		}
		for i := range len(l) {
			for _, c := range repl {
				b := []byte(l)
				b[i] = c
				check(t, b)
			}
		}
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
	for _, s := range []string{`{"type":"x"}`, `{"\u0074ype":"y"}`, `{"a":{"type":"n"},"type":"t"}`, `[1]`, `x`, `{"type":"a","type":"b"}`,
		`{"type":"token","text":"hello "}`, `{"type":"token","text":"hello \"}`, `{"type":"t\u00e9","text":"\n"}`, "{\"type\":\"t\x01\"}",
		`{"type":"status","turn":1,"context":0.728,"modes":[],"a":{"b":[true,null]}}`, `{"typ\u0065":"a","type":1}`} {
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
