package scenario

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDotNetJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"plain"}`, `{"a":"plain"}`},
		{`{"a":"say \"hi\""}`, `{"a":"say \u0022hi\u0022"}`},
		{`{"a":"1+1"}`, `{"a":"1\u002B1"}`},
		{`{"a":"<b> & 'c' ` + "`d`" + `"}`, `{"a":"\u003Cb\u003E \u0026 \u0027c\u0027 \u0060d\u0060"}`},
		{`{"a":"\u003cb\u003e"}`, `{"a":"\u003Cb\u003E"}`},
		{`{"a":"line\nnext\r\ttab\b\f\\"}`, `{"a":"line\nnext\r\ttab\b\f\\"}`},
		{`{"a":"\u000a\u0009\u005c"}`, `{"a":"\n\t\\"}`},
		{`{"a":"\u0041\/"}`, `{"a":"A/"}`},
		{`{"a":"…é"}`, `{"a":"\u2026\u00E9"}`},
		{`{"a":"😀"}`, `{"a":"\uD83D\uDE00"}`},
		{`{"a":"\u001b[0m"}`, `{"a":"\u001B[0m"}`},
		{"{\"a\":\"\x7f\"}", `{"a":"\u007F"}`},
		{"{\"a\":\"\xff\"}", `{"a":"\uFFFD"}`},
		{`{"k+":1, "n": [true, null, -1.5e3]}`, `{"k\u002B":1, "n": [true, null, -1.5e3]}`},
		{`{"path":"/home/a b"}`, `{"path":"/home/a b"}`},
	} {
		if got := string(DotNetJSON([]byte(tc.in))); got != tc.want {
			t.Errorf("DotNetJSON(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func FuzzDotNetJSON(f *testing.F) {
	for _, s := range []string{`{"a":"x\"+<>&'` + "`" + `"}`, `"…😀\u00e9"`, `[1,"\ud83d\ude00",{"":null}]`, `"\ud800"`, "\"\x7f\x01\"", `{"type":"token","text":"a\\b\/c"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		out := DotNetJSON(b)
		for i, c := range out {
			if c >= 0x80 {
				t.Fatalf("non-ASCII byte %#x at %d in %q", c, i, out)
			}
		}
		var x, y any
		if err := json.Unmarshal(b, &x); err != nil {
			return
		}
		if err := json.Unmarshal(out, &y); err != nil {
			t.Fatalf("output does not decode: %v\nin  %q\nout %q", err, b, out)
		}
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("meaning changed\nin  %q\nout %q", b, out)
		}
	})
}

func TestObjectKeepsOrder(t *testing.T) {
	o := NewObject("type", "token", "text", "a<b")
	o.Set("z", 1)
	o.SetFirst("first", nil)
	if got := string(o.Bytes()); got != `{"first":null,"type":"token","text":"a<b","z":1}` {
		t.Errorf("got %s", got)
	}
}
