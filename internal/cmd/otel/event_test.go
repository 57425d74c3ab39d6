package otel

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fuseraft/fr/pkg/wire"
)

// quickSeeds are lines decodeQuick must decode itself, and some it must leave to encoding/json.
var quickSeeds = []string{
	`{"type":"tool_result","id":"c1","ok":true,"output":"a \"big\" output\n"}`,
	`{"type":"ready","protocolVersion":1,"sessionId":"s-1","model":"m","agents":["a","b"],"task":"t","config":null}`,
	`{"type":"message_end","turnIndex":3,"inputTokens":100,"outputTokens":20,"cachedInputTokens":null}`,
	`{"type":"agent_message","message":{"agentName":"coder","role":"assistant","toolCalls":[{"name":"x","succeeded":false}]},"elapsedMs":1200}`,
	`{"type":"result","succeeded":false,"errorMessage":"b\u00e9d\n","exitCode":2,"elapsedSeconds":1.5e1,"lastAgent":"r"}`,
	`{"type":"approval_request","kind":"file_write","action":"edit","path":"/x","oldContent":"a","newContent":"b","frArrivedAt":"2026-01-01T00:00:00Z"}`,
	`{"type":"file_changed","path":"p","sigil":"M","added":1,"removed":-0}`,
	`{"type":"status","status":"ok","Status":"folded"}`,
	`{"type":"x","turnIndex":1.0}`, `{"type":"x","exitCode":99999999999999999999}`, `{"type":"x","id":5}`,
	`{"type":"x","sessionId":"a","sessionId":null,"ok":true,"ok":null}`, `{"type":"x","sess\u0069onId":"a"}`,
	`{"type":"x","agents":[1]}`, `{"type":"x","message":{"turnIndex":"1"}}`, `{"type":"x","elapsedSeconds":"1"}`,
	"{\"type\":\"approval_request\",\"command\":\"a\xffb\"}", `{"type":"x","ſessionId":"a","Kind":"k"}`,
	` { "type" : "tool_call" , "name" : "n" , "args" : {"a":[1,{"b":"}"}]} , "summary":"s" } `,
}

// FuzzDecodeQuick holds decodeQuick to encoding/json (decodeMembers): whatever line the mapping
// decodes, when decodeQuick says it decoded it, encoding/json decodes it without error to the
// same event.
func FuzzDecodeQuick(f *testing.F) {
	for _, s := range quickSeeds {
		f.Add([]byte(s))
	}
	// lines far longer than the usual: a long escaped output, a long name, deep skipped values
	f.Add([]byte(`{"type":"tool_result","id":"c1","ok":true,"output":"` + strings.Repeat(`a\"\u00e9\n`, 1<<16) + `"}`))
	f.Add([]byte(`{"type":"agent_starting","agent":"` + strings.Repeat("é", 1<<17) + `"}`))
	f.Add([]byte(`{"type":"tool_call","name":"n","args":` + strings.Repeat(`[{"a":`, 2000) + `1` + strings.Repeat(`}]`, 2000) + `,"id":"c"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if wire.ParseLine(raw).Kind != wire.EventLine {
			return
		}
		var quick, slow event
		if !decodeQuick(raw, &quick) {
			return
		}
		if err := decodeMembers(raw, &slow); err != nil {
			t.Fatalf("decodeQuick took %s, encoding/json: %v", raw, err)
		}
		if !reflect.DeepEqual(quick, slow) {
			t.Fatalf("%s:\nquick %+v\n slow %+v", raw, quick, slow)
		}
	})
}

// TestDecodeQuickTakesSessions: the fast path is the one the recorded sessions take (every
// line of testdata/sessions), not a path fuzzed but never used.
func TestDecodeQuickTakesSessions(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "sessions", "*.jsonl"))
	n := 0
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			raw := sc.Bytes()
			if wire.ParseLine(raw).Kind != wire.EventLine {
				continue
			}
			var quick, slow event
			if !decodeQuick(raw, &quick) {
				t.Errorf("%s: decodeQuick left %s to encoding/json", name, raw)
				continue
			}
			if err := decodeMembers(raw, &slow); err != nil || !reflect.DeepEqual(quick, slow) {
				t.Errorf("%s: %s: quick %+v, slow %+v (%v)", name, raw, quick, slow, err)
			}
			n++
		}
		f.Close()
	}
	if n < 50 {
		t.Fatalf("only %d event lines in testdata/sessions", n)
	}
}
