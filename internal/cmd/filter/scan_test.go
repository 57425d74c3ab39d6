package filter

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/jsonscan"

	"github.com/itchyny/gojq"
)

var tricky = []string{
	`{"type":"token","text":"hi"}`,
	`{"text":"{\"type\":\"approval_request\"}","type":"token"}`,
	`{"text":"type","type" : "token"}`,
	`{ "type"	:	"token" }`,
	`{"\u0074ype":"approval_request"}`,
	`{"type":"approval\u005Frequest"}`,
	`{"type":"token","type":"approval_request"}`,
	`{"type":"approval_request","type":"token"}`,
	`{"type":"approval_request","type":null}`,
	`{"nested":{"type":"approval_request"},"type":"token"}`,
	`{"nested":{"type":"approval_request"}}`,
	`{"type":5}`,
	`["type","approval_request"]`,
	`"type"`,
	`{"type":"token"`,
	`{"type":"token"}x`,
	`{"type":"token",}`,
	`{"type":"tok\u00"}`,
	"{\"type\":\"tok\x01en\"}",
	"{\"type\":\"t\xffk\"}",
	`{"type":"\ud800"}`,
	`{"type":"\ud83d\ude00"}`,
	`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":-0.5e+3}`, `{"a":tru}`, `{"a":[1,2,]}`,
	`  {"type":"token"}  `, `{}`, `[]`, `null`, `1`, ``, ` `, `{"a":"\/\b\f\n\r\t\\"}`,
	`{"a":"\x"}`, `{"a":"` + strings.Repeat(`\u0022`, 20) + `"}`,
	`{"type":"token","text":"` + strings.Repeat("abcdefg\\\"", 50) + `"}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
}

// checkScan compares jsonscan.Scan with the reference, json.Valid and a full decode, and
// fr-filter's decoder and encoder with encoding/json and gojq.
func checkScan(t *testing.T, b []byte) {
	t.Helper()
	sh := jsonscan.Scan(b)
	if valid := json.Valid(b); sh.Valid != valid {
		t.Fatalf("jsonscan.Scan(%q).valid = %v, json.Valid = %v", b, sh.Valid, valid)
	}
	if !sh.Valid {
		return
	}
	if q, sure := jsonscan.QuickType(b); sh.Object && (!sure || q.Typed != sh.Typed || q.Typed && q.Type() != sh.Type()) {
		t.Fatalf("jsonscan.QuickType(%q) = %+v, %v; jsonscan.Scan says %+v", b, q, sure, sh)
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	// The reference: a full decode (encoding/json matches map keys exactly; the last
	// duplicate wins, as in jq).
	m, isObj := v.(map[string]any)
	typ, isStr := m["type"].(string)
	if got := sh.Typed; got != (isObj && isStr) {
		t.Fatalf("jsonscan.Scan(%q).Typed = %v, a full decode says %v", b, got, isObj && isStr)
	}
	if sh.Typed && sh.Type() != typ {
		t.Fatalf("jsonscan.Scan(%q) type %q, a full decode says %q", b, sh.Type(), typ)
	}
	if sh.Typed && !sh.TypeIs(typ) {
		t.Fatalf("TypeIs(%q) false on %q", typ, b)
	}
	if sh.Object != isObj {
		t.Fatalf("jsonscan.Scan(%q).Object = %v", b, sh.Object)
	}
	var dec jsonscan.Decoder
	if got := dec.Decode(b); !reflect.DeepEqual(got, v) {
		t.Fatalf("decode(%q) = %#v, encoding/json = %#v", b, got, v)
	}
	want, _ := gojq.Marshal(v)
	var e encoder
	e.indent = -1
	if got := e.encode(nil, v); !bytes.Equal(got, want) {
		t.Fatalf("encode(%q) = %s, gojq = %s", b, got, want)
	}
}

func TestScanLine(t *testing.T) {
	for _, s := range tricky {
		checkScan(t, []byte(s))
	}
}

func FuzzScanLine(f *testing.F) {
	for _, s := range tricky {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkScan(t, b) })
}

func TestEncodeIndent(t *testing.T) {
	v := map[string]any{"b": []any{1, map[string]any{}, []any{}}, "a": "x\u007f\n"}
	e := encoder{indent: 2}
	want := "{\n  \"a\": \"x\\u007f\\n\",\n  \"b\": [\n    1,\n    {},\n    []\n  ]\n}"
	if got := string(e.encode(nil, v)); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	e = encoder{indent: 1, tab: true}
	if got := string(e.encode(nil, []any{1})); got != "[\n\t1\n]" {
		t.Fatalf("tab: got %q", got)
	}
}

func TestPrefilterShapes(t *testing.T) {
	cases := map[string][]string{
		`select(.type == "token")`:                                    {"token"},
		`select(.type == "token") | .text`:                            {"token"},
		`select("token" == .type)`:                                    {"token"},
		`select(."type" == "a\"b")`:                                   {`a"b`},
		`select(.type == "a" or .type == "b")`:                        {"a", "b"},
		`select((.type == "a" or .type == "b") and .ok)`:              {"a", "b"},
		`select(.type == "tool_result" and .ok == false) | {id,name}`: {"tool_result"},
		`select(.type == "a") | select(.x) | .y`:                      {"a"},
		`select(.ok and .type == "a")`:                                nil,
		`select(.type == "a" or .ok)`:                                 nil,
		`def select(f): .; select(.type == "a")`:                      nil,
		`select(.type? == "a")`:                                       nil,
		`select(.type == "a")?`:                                       nil,
		`select(.type == "\(1)")`:                                     nil,
		`select(.type != "a")`:                                        nil,
		`. as $x | select(.type == "a")`:                              nil,
		`.[] | select(.type == "a")`:                                  nil,
		`select(.type == "a"), 1`:                                     nil,
		`select(.type == .x)`:                                         nil,
		`select(.type == @base64 "a")`:                                nil,
	}
	for q, want := range cases {
		pq, err := gojq.Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := typePrefilter(pq, nil); !reflect.DeepEqual(got, want) {
			t.Errorf("typePrefilter(%s) = %q, want %q", q, got, want)
		}
	}
}
