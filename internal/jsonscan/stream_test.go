package jsonscan

import (
	"bytes"
	"strings"
	"testing"
)

// checkStream feeds b to a Stream in pieces cut at the given sizes (cycled) and fails unless
// the result is Scan's on the whole.
func checkStream(t *testing.T, b []byte, cuts []int) {
	t.Helper()
	want := Scan(b)
	var s Stream
	rest := b
	for k := 0; len(rest) > 0; k++ {
		n := len(rest)
		if len(cuts) > 0 {
			n = min(max(cuts[k%len(cuts)], 1), len(rest))
		}
		s.Write(rest[:n])
		rest = rest[n:]
	}
	got := s.End()
	if got.Valid != want.Valid || want.Valid && (got.Object != want.Object || got.Typed != want.Typed ||
		!bytes.Equal(got.RawType, want.RawType) || got.TypeEsc != want.TypeEsc) {
		t.Fatalf("Stream(%q cut %v) = %+v; Scan gives %+v", b, cuts, got, want)
	}
	if s.Bad() && want.Valid {
		t.Fatalf("Stream(%q) went bad on valid JSON", b)
	}
}

var streamCases = []string{
	`{"type":"token","text":"hi"}`, `{"text":"\"type\":\"x\"","type":"token"}`, `{ "type" : "a" }`,
	`{"\u0074ype":"hello"}`, `{"type":"tool\u005Fresult"}`, `{"type":"a","type":"b"}`, `{"type":"a","type":1}`,
	`{"type":1,"type":"a"}`, `{"m":{"type":"inner"}}`, `{"type":5}`, `[1]`, `[]`, `[ ]`, `[1,]`, `[,1]`, `"type"`, `{}`, `{ }`,
	``, `  `, `noise`, `{"type":"x"`, `{"type":"x"}x`, `{"type":"x"} `, `{"a":01}`, `{"a":1.}`, `{"a":-0.5e+3,"type":"n"}`,
	`-`, `-0`, `0`, `12`, `1.5`, `1e5`, `1E+5`, `1e`, `1.e3`, `0.0e-0`, `00`, `-01`, `1 2`, `true`, `tru`, `nul`, `falsey`,
	`{"a":true,"b":false,"c":null,"type":"é"}`, `{"a":[1,{"type":"no"}],"type":"ok"}`, `{"a":"b",}`, `{"a" "b"}`,
	`{"a":}`, `{:1}`, `{"a":1 "b":2}`, `{"type":"\u00e9"}`, `{"type":"\u00"}`, `{"type":"\x"}`, `{"type":"a\\"}`,
	"{\"type\":\"t\x01\"}", "{\"type\":\"t\xff\"}", "{\"t\xffype\":\"x\"}", `{"type":"\ud83d\ude00"}`, `{"type":"\ud800"}`,
	`{"typ\u0065":"esc key"}`, `{"` + strings.Repeat("k", 40) + `":1,"type":"long key before"}`,
	`{"type":"` + strings.Repeat("\\\"x", 20) + `"}`, `{"a":"` + strings.Repeat("é\\n", 30) + `","type":"t"}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`, `{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	"{\"type\":\"x\"}\n", "\t{\"type\":\"x\"}\r",
}

func TestStream(t *testing.T) {
	for _, s := range streamCases {
		for _, cuts := range [][]int{nil, {1}, {2}, {3}, {7}, {8, 1}, {5, 11, 2}} {
			checkStream(t, []byte(s), cuts)
		}
	}
}

func FuzzStream(f *testing.F) {
	for _, s := range streamCases {
		if len(s) < 200 {
			f.Add([]byte(s), uint8(1), uint8(7))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, c1, c2 uint8) {
		checkStream(t, b, []int{int(c1), int(c2)})
	})
}
