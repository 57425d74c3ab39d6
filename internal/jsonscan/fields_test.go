package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// checkFields compares Fields with encoding/json: it accepts exactly the valid JSON objects,
// and passes their members in order, keys decoded as encoding/json decodes them.
func checkFields(t *testing.T, b []byte) {
	var keys []string
	var vals [][]byte
	ok := Fields(b, func(k, raw []byte) bool {
		keys = append(keys, string(k))
		vals = append(vals, raw)
		return true
	})
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	want := json.Valid(b) && len(trimmed) > 0 && trimmed[0] == '{'
	if ok != want {
		t.Fatalf("Fields(%q) = %v, want %v", b, ok, want)
	}
	if !ok {
		return
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.Token() // {
	n := 0
	for ; d.More(); n++ {
		tok, _ := d.Token()
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if n >= len(keys) || keys[n] != tok.(string) || !bytes.Equal(vals[n], v) {
			t.Fatalf("Fields(%q): member %d is %q: %s, want %q: %s", b, n, keys, vals, tok, v)
		}
	}
	if n != len(keys) {
		t.Fatalf("Fields(%q) passed %d members, want %d", b, len(keys), n)
	}
}

func TestFields(t *testing.T) {
	for _, s := range []string{`{}`, ` { } `, `{"a":1}`, `{"a" : [1,{"b":"}"}] , "c":null}`, `{"t\u0079pe":"x","type":"y"}`,
		`{"\ud800":1}`, "{\"\xff\":1}", `{"a":1,}`, `{"a":1} x`, `{"a"}`, `[1]`, `"x"`, `{"a":01}`, `{"a":"\x"}`, ``} {
		checkFields(t, []byte(s))
	}
	stopped := 0
	if !Fields([]byte(`{"a":1,"b":2, oops`), func(k, _ []byte) bool { stopped++; return false }) || stopped != 1 {
		t.Errorf("stopping early: ok false or %d calls", stopped)
	}
}

func FuzzFields(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"type":"x","a":{"b":[1,2]}}`, `{"\u0074":"\ud83d\ude00"}`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkFields(t, b) })
}
