package policy

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/fuseraft/fr/pkg/wire"

	"github.com/fuseraft/fr/internal/jsonscan"
	"github.com/fuseraft/fr/internal/testkit"
)

var contentPieces = []string{"a", "x", "package main", "\n", "\t", `"`, `\`, "/", "é", "日本", "😀", " ", "-----BEGIN ",
	"RSA PRIVATE KEY-----", "PRIVATE", "key", "\x00", "\u2028", "\ufffd", "-----BEGIN", "SECRET1"}

// jsonPieces are ways JSON may write parts of a string that encoding/json does not choose.
var jsonPieces = []string{`\u0020`, `\u002d`, `\u00e9`, `\ud83d\ude00`, `\/`, `\u0041`, `\n`, `\"`, `\\`, `\b`, `\f`, `\r`}

// randomContent returns a JSON string (quoted) of random pieces, written every way JSON may.
func randomContent(r *rand.Rand) []byte {
	b := []byte{'"'}
	for k := r.Intn(40); k > 0; k-- {
		if r.Intn(4) == 0 {
			b = append(b, jsonPieces[r.Intn(len(jsonPieces))]...)
			continue
		}
		q, _ := json.Marshal(contentPieces[r.Intn(len(contentPieces))])
		b = append(b, q[1:len(q)-1]...)
	}
	if r.Intn(10) == 0 {
		b = append(b, strings.Repeat("y", r.Intn(300))...)
	}
	return append(b, '"')
}

// TestRawStringSize: the length of a JSON string read without decoding it is the length of
// what jsonscan.Unquote decodes.
func TestRawStringSize(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	qs := [][]byte{[]byte(`""`), []byte(`"\ud800"`), []byte(`"\udc00\ud800x"`), []byte(`"\ud800\u0041"`), []byte(`"a\xffb"`)}
	for i := 0; i < 5000; i++ {
		qs = append(qs, randomContent(r))
	}
	for _, q := range qs {
		s, ok := jsonscan.Unquote(q)
		size, chars, sok := rawStringSize(q)
		if !sok {
			if ok && isUTF8(q) {
				t.Errorf("%s: not sized", q)
			}
			continue
		}
		if !ok || size != len(s) || chars != len([]rune(s)) {
			t.Errorf("%s: %d bytes, %d characters; decoded %d, %d (%v)", q, size, chars, len(s), len([]rune(s)), ok)
		}
	}
}

func isUTF8(b []byte) bool { return strings.ToValidUTF8(string(b), "\x00") == string(b) }

// TestLazyContentsSameDecisions: deciding a file_write with its contents decoded only when
// needed gives the decisions of deciding with them decoded first, for rules with sizes,
// changed lines and conditions on the contents.
func TestLazyContentsSameDecisions(t *testing.T) {
	testkit.WithoutRace(t)
	src := `version: 1
default: deny
rules:
  - {name: big, decision: deny, file: {paths: ["big/**"], max_size: 40}}
  - {name: ask-many, decision: ask, file: {paths: ["ask/**"], max_changed_lines: 2}}
  - {name: key, decision: deny, kind: file_write, when: '(.newContent // "") | test("-----BEGIN [A-Z ]*PRIVATE KEY-----")'}
  - {name: key2, decision: deny, kind: file_write, when: '.newContent | test("BEGIN\\s+RSA")'}
  - {name: nl, decision: ask, kind: file_write, when: '.newContent | test("a\nx")'}
  - {name: quote, decision: ask, kind: file_write, when: '.newContent | test("x\"")'}
  - {name: e, decision: deny, kind: file_write, when: '.newContent | test("é日")'}
  - {name: secret, decision: deny, kind: file_write, when: '.newContent | test("SECRET1|secret2")'}
  - {name: long, decision: deny, kind: file_write, when: '(.newContent // "") | length > 30'}
  - {name: exact, decision: ask, kind: file_write, when: '.newContent | length == 7'}
  - {name: jq, decision: deny, kind: file_write, when: '.newContent | ascii_downcase | contains("key")'}
  - {name: small, decision: allow, file: {paths: ["**"], max_size: 25}}
  - {name: lines, decision: allow, file: {paths: ["src/**"], max_changed_lines: 3}}
  - {name: any, decision: allow, file: {paths: ["any/**"]}}
`
	p := mustLoad(t, src)
	r := rand.New(rand.NewSource(2))
	dirs := []string{"big", "ask", "src", "any", "other"}
	for i := 0; i < 20000; i++ {
		old := "null"
		if r.Intn(3) > 0 {
			old = string(randomContent(r))
		}
		ev := fmt.Sprintf(`{"type":"approval_request","kind":"file_write","path":"%s/f%d","oldContent":%s,"newContent":%s}`,
			dirs[r.Intn(len(dirs))], i%7, old, randomContent(r))
		lazy, _ := NewDecider(p, "/repo")
		eager, _ := NewDecider(p, "/repo")
		got := lazy.DecideLine(wire.ParseLine([]byte(ev)))
		lazyContents = false
		want := eager.DecideLine(wire.ParseLine([]byte(ev)))
		lazyContents = true
		if want.Decider == ByMalformed {
			continue
		}
		if got.Verdict == Ask || want.Verdict == Ask {
			if got.Request.NewContent != want.Request.NewContent || got.Request.OldContent != want.Request.OldContent {
				t.Fatalf("%s: asked with other contents", ev)
			}
		}
		got.Request, want.Request = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\ndecoded when needed: %+v\ndecoded first:       %+v", ev, got, want)
		}
	}
}

// FuzzRawStringSize: the length of any JSON string read without decoding it is that of what
// jsonscan.Unquote decodes.
func FuzzRawStringSize(f *testing.F) {
	for _, s := range []string{`""`, `"a\nb"`, `"\ud83d\ude00"`, `"\ud800"`, `"é\u00e9"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, q []byte) {
		size, chars, ok := rawStringSize(q)
		s, uok := jsonscan.Unquote(q)
		if ok && (!uok || size != len(s) || chars != len([]rune(s))) {
			t.Fatalf("%q: %d bytes, %d characters; decoded %q (%v)", q, size, chars, s, uok)
		}
	})
}
