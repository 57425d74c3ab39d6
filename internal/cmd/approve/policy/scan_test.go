package policy

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/fuseraft/fr/internal/jsonscan"
)

// scanMembers is scan as it was written with jsonscan.Members, which passes keys quoted: the
// reference scan is compared with.
func (f *fields) scanMembers(raw []byte) bool {
	return jsonscan.Members(raw, func(key, v []byte) bool {
		if kb, plain := plainKey(key); plain {
			// the common case, without unquoting: an ASCII key without escapes
			for n, name := range fieldNames {
				if len(kb) != len(name) {
					continue
				}
				if string(kb) == name {
					if f.v[n] != nil && !sameValue(f.v[n], v) {
						f.odd[n] = true
					}
					f.v[n] = v
				} else if asciiEqualFold(kb, name) {
					f.odd[n] = true
				}
			}
			return true
		}
		k, ok := jsonscan.Unquote(key)
		if !ok {
			return false
		}
		for n, name := range fieldNames {
			switch {
			case k == name:
				if f.v[n] != nil && !sameValue(f.v[n], v) {
					f.odd[n] = true
				}
				f.v[n] = v
			case len(k) == len(name) && strings.EqualFold(k, name):
				f.odd[n] = true
			}
		}
		return true
	})
}

// plainKey returns the bytes of a quoted key that is ASCII and holds no escape.
func plainKey(q []byte) ([]byte, bool) {
	if len(q) < 2 {
		return nil, false
	}
	kb := q[1 : len(q)-1]
	for _, c := range kb {
		if c == '\\' || c >= 0x80 {
			return nil, false
		}
	}
	return kb, true
}

var scanKeys = []string{`"kind"`, `"Kind"`, `"KIND"`, `"command"`, `"comm\u0061nd"`, `"Comm\u0041nd"`, `"newContent"`,
	`"newcontent"`, `"oldContent"`, `"path"`, `"pat\u0068"`, `"\u212aind"`, `"ſourceAgent"`, `"sourceAgent"`, `"targetAgent"`,
	`"detail"`, `"plugin"`, `"action"`, `"keyword"`, `"type"`, `"x"`, `"é"`, `"kind "`, `"ki\nnd"`, `""`}

var scanValues = []string{`"shell_command"`, `"file_write"`, `"ls"`, `"l\u0073"`, `null`, `1`, `[1,"}"]`, `{"kind":"x"}`,
	`"a\"b"`, `""`, `true`, `"é"`}

// TestScanSameAsMembers: the fields found with jsonscan.Fields are those found with
// jsonscan.Members and keys unquoted, for objects of keys in every case and escape, repeated.
func TestScanSameAsMembers(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for i := 0; i < 30000; i++ {
		var b strings.Builder
		b.WriteString("{")
		for k := r.Intn(8); k > 0; k-- {
			b.WriteString(scanKeys[r.Intn(len(scanKeys))] + ":" + scanValues[r.Intn(len(scanValues))])
			if k > 1 {
				b.WriteString(", "[:1+r.Intn(2)])
			}
		}
		b.WriteString("}")
		raw := []byte(b.String())
		if !json.Valid(raw) {
			continue
		}
		checkScan(t, raw)
	}
	for _, s := range []string{`[1]`, `"x"`, `{}`, ` { "kind" : "x" } `} {
		checkScan(t, []byte(s))
	}
}

func checkScan(t *testing.T, raw []byte) {
	t.Helper()
	var got, want fields
	okG, okW := got.scan(raw), want.scanMembers(raw)
	if okG != okW || (okG && !reflect.DeepEqual(got, want)) {
		t.Fatalf("%s: %v %+v, with Members %v %+v", raw, okG, got, okW, want)
	}
}

// FuzzScan: on any valid JSON, scan finds what scanMembers finds.
func FuzzScan(f *testing.F) {
	f.Add([]byte(`{"kind":"shell_command","Kind":"x","comm\u0061nd":"ls","command":"ls"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if json.Valid(raw) {
			checkScan(t, raw)
		}
	})
}
