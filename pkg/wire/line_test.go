package wire

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantKind Kind
		wantType string
	}{
		{"event", `{"type":"token","text":"hi"}`, EventLine, "token"},
		{"type not first", `{"text":"hi","type":"token"}`, EventLine, "token"},
		{"whitespace around colon", `{ "type" : "token" }`, EventLine, "token"},
		{"leading and trailing space", "  {\"type\":\"ready\"}\t", EventLine, "ready"},
		{".NET escaped key", `{"\u0074ype":"hello"}`, EventLine, "hello"},
		{".NET escaped value, uppercase hex", `{"type":"tool\u005Fresult"}`, EventLine, "tool_result"},
		{"type inside a string value is not the type", `{"text":"\"type\":\"approval_request\"","type":"token"}`, EventLine, "token"},
		{"nested type does not count", `{"message":{"type":"inner"}}`, OtherJSON, ""},
		{"nested type then top-level type", `{"message":{"type":"inner"},"type":"agent_message"}`, EventLine, "agent_message"},
		{"duplicate keys: last wins", `{"type":"a","type":"b"}`, EventLine, "b"},
		{"duplicate keys: last not a string", `{"type":"a","type":1}`, OtherJSON, ""},
		{"type is a number", `{"type":1}`, OtherJSON, ""},
		{"type is null", `{"type":null}`, OtherJSON, ""},
		{"empty type string is still an event", `{"type":""}`, EventLine, ""},
		{"array", `[{"type":"token"}]`, OtherJSON, ""},
		{"string", `"type"`, OtherJSON, ""},
		{"number", `42`, OtherJSON, ""},
		{"empty object", `{}`, OtherJSON, ""},
		{"plain text", `Session saved.`, Noise, ""},
		{"empty line", ``, Noise, ""},
		{"truncated JSON", `{"type":"token","text":"hi`, Noise, ""},
		{"two objects on one line", `{"type":"a"}{"type":"b"}`, Noise, ""},
		{"values of every kind before type", `{"a":[1,{"b":"}"}],"c":true,"d":null,"e":-1.5e3,"f":"\\\"","type":"x"}`, EventLine, "x"},
		{"escaped quote before type key", `{"a":"\u0022","type":"status"}`, EventLine, "status"},
		{"token as fr-sim floods it", `{"type":"token","text":"hello "}`, EventLine, "token"},
		{"not UTF-8: not JSON", "{\"type\":\"token\",\"text\":\"\xff\xfe\xc3\"}", Noise, ""},
		{"not UTF-8, untyped", "{\"text\":\"\xc3\"}", Noise, ""},
		{"not UTF-8 in a key", "{\"\xff\":1,\"type\":\"status\"}", Noise, ""},
		{"UTF-8 is JSON", "{\"type\":\"token\",\"text\":\"h\xc3\xa9 \xf0\x9f\x98\x80\"}", EventLine, "token"},
		{"a prompt not UTF-8 stays a prompt", "{\"type\":\"approval_request\",\"kind\":\"shell_command\",\"command\":\"rm \xff\"}", EventLine, "approval_request"},
		{"a question not UTF-8 stays a prompt", "{\"type\":\"question\",\"text\":\"\xfe?\"}", EventLine, "question"},
		{"escape at the end of a line", `{"type":"token","text":"\n"}`, EventLine, "token"},
		{"escaped quote at the end of a line", `{"type":"token","text":"hi\"}`, Noise, ""},
		{"truncated in the last string", `{"type":"token","text":"hel`, Noise, ""},
		{"truncated in an escape", `{"type":"token","text":"\u00`, Noise, ""},
		{"control character in a short string", "{\"type\":\"token\",\"text\":\"a\tb\"}", Noise, ""},
		{"invalid UTF-8 in the type: not JSON", "{\"type\":\"tok\xffen\"}", Noise, ""},
		{"UTF-8 in the type", `{"type":"café"}`, EventLine, "café"},
		{"lone surrogate in the type", `{"type":"\ud800"}`, EventLine, "\ufffd"},
		{"escaped key, then the plain one", `{"typ\u0065":"a","type":"b"}`, EventLine, "b"},
		{"plain key, then an escaped one", `{"type":"a","typ\u0065":"b"}`, EventLine, "b"},
		{"key that only starts with type", `{"types":"a"}`, OtherJSON, ""},
		{"numbers, literals and nesting after type", `{"type":"status","turn":1,"context":0.7,"ok":true,"x":null,"modes":[],"a":{"b":[1]}}`, EventLine, "status"},
		{"bad number after type", `{"type":"status","turn":01}`, Noise, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := ParseLine([]byte(tt.in))
			if l.Kind != tt.wantKind || l.Type != tt.wantType {
				t.Errorf("ParseLine(%s) = %v %q, want %v %q", tt.in, l.Kind, l.Type, tt.wantKind, tt.wantType)
			}
			if string(l.Raw) != tt.in {
				t.Errorf("Raw changed: %q", l.Raw)
			}
			ev, ok := l.Event()
			if ok != (tt.wantKind == EventLine) || (ok && (ev.Type != l.Type || string(ev.Raw) != tt.in)) {
				t.Errorf("Event() = %+v, %v", ev, ok)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	if EventLine.String() != "event" || OtherJSON.String() != "json" || Noise.String() != "noise" {
		t.Error("Kind names changed")
	}
}

func TestLineClone(t *testing.T) {
	buf := []byte(`{"type":"x"}`)
	l := ParseLine(buf).Clone()
	buf[2] = 'X'
	if string(l.Raw) != `{"type":"x"}` {
		t.Errorf("Clone still aliases the buffer: %s", l.Raw)
	}
}

func TestDotNetEscapesDecode(t *testing.T) {
	// Lines as fuseraft's .NET encoder writes them: pure ASCII, \uXXXX with uppercase hex.
	line := `{"type":"text","text":"say \u0022hi\u0022 \u002B 1 \u003C2\u003E \u0026 it\u0027s \u0060x\u0060 \u2026 caf\u00E9 \uD83D\uDE00"}`
	l := ParseLine([]byte(line))
	if l.Kind != EventLine || l.Type != "text" {
		t.Fatalf("got %v %q", l.Kind, l.Type)
	}
	var m Message
	ev, _ := l.Event()
	if err := ev.Decode(&m); err != nil {
		t.Fatal(err)
	}
	want := "say \"hi\" + 1 <2> & it's `x` … café 😀"
	if m.Text != want {
		t.Errorf("decoded %q, want %q", m.Text, want)
	}
	if string(ev.Raw) != line {
		t.Error("raw bytes changed by decoding")
	}
}

func TestEventDecodeError(t *testing.T) {
	ev := Event{Type: "status", Raw: []byte(`{"type":"status","turn":"three"}`)}
	var s Status
	if err := ev.Decode(&s); err == nil {
		t.Fatal("want an error for a string turn")
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{`{"type":"x"}`, `{"\u0074ype":"y"}`, `{"a":{"type":"n"},"type":"t"}`, `[1]`, `noise`, `{"type":"a","type":"b"}`, `{"type":"\uD800"}`,
		`{"type":"token","text":"hello "}`, `{"type":"token","text":"hi\"}`, `{"typ\u0065":"a","type":"b"}`, `{"type":"status","turn":1,"modes":[]}`,
		"{\"type\":\"approval_request\",\"command\":\"\xff\"}", "{\"type\":\"token\",\"text\":\"\xc3\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l := ParseLine(b)
		// Reference: a full decode into a map (last duplicate wins, as in encoding/json).
		if !json.Valid(b) {
			if l.Kind != Noise {
				t.Fatalf("%q: kind %v, want noise", b, l.Kind)
			}
			return
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%q: valid JSON that does not decode: %v", b, err)
		}
		m, isObj := v.(map[string]any)
		typ, isStr := m["type"].(string)
		if !utf8.Valid(b) {
			// JSON text is UTF-8: anything else is noise, but for a prompt, which must be
			// answered (NotText).
			if isObj && isStr && (typ == TypeApproval || typ == TypeQuestion) {
				if l.Kind != EventLine || l.Type != typ || !l.NotText() {
					t.Fatalf("%q: got %v %q, want a prompt that is not text", b, l.Kind, l.Type)
				}
			} else if l.Kind != Noise {
				t.Fatalf("%q: got %v, want noise (not UTF-8)", b, l.Kind)
			}
			return
		}
		if l.NotText() {
			t.Fatalf("%q: UTF-8 taken for not text", b)
		}
		// encoding/json matches keys exactly in a map, so this is the exact reference.
		if isObj && isStr {
			if l.Kind != EventLine || l.Type != typ {
				t.Fatalf("%q: got %v %q, want event %q", b, l.Kind, l.Type, typ)
			}
		} else if l.Kind != OtherJSON {
			t.Fatalf("%q: got %v, want json", b, l.Kind)
		}
	})
}

func TestTopLevelStringInvalidJSON(t *testing.T) {
	for _, in := range []string{`{0`, `{"type"`, `{"type":`, `{"a":"\`, ``, `{`, `{"type":"x"`} {
		if v, ok := TopLevelString([]byte(in), "type"); ok {
			t.Errorf("TopLevelString(%q) = %q, true; want false", in, v)
		}
	}
	if v, ok := TopLevelString([]byte(`{"type":"x"}`), "type"); !ok || v != "x" {
		t.Error("valid input")
	}
}

// BenchmarkParseLine classifies short lines as a flood is made of; ns/op is per line.
func BenchmarkParseLine(b *testing.B) {
	for _, bm := range []struct{ name, line string }{
		{"token", `{"type":"token","text":"hello "}`},
		{"token-esc", `{"type":"token","text":"\n\n"}`},
		{"thinking", `{"type":"thinking","text":"a value == naïve parser in age"}`},
		{"status", `{"type":"status","model":"sim-large","turn":1,"context":0.728,"level":"ok","modes":[],"input":32139,"output":854,"cached":138176}`},
		{"tool_call", `{"type":"tool_call","id":"call_1","name":"write_file","summary":"{ 😀\n\t== tokens config ` + "`raw`" + ` ra","args":{"path":"config/.env"},"agent":null}`},
	} {
		line := []byte(bm.line)
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for range b.N {
				parseSink = ParseLine(line)
			}
		})
	}
}

var parseSink Line

func TestNotText(t *testing.T) {
	for in, want := range map[string]bool{
		"{\"type\":\"approval_request\",\"kind\":\"shell_command\",\"command\":\"rm \xff\"}": true,
		"{\"type\":\"question\",\"text\":\"\xfe?\"}":                                         true,
		`{"type":"question","text":"ok?"}`:                                                   false,
		"{\"type\":\"token\",\"text\":\"\xff\"}":                                             false, // Noise already
	} {
		if got := ParseLine([]byte(in)).NotText(); got != want {
			t.Errorf("NotText(%q) = %v", in, got)
		}
	}
	if r := Refusal(TypeQuestion); r.Type != TypeQuestionResponse || string(r.Line) != string(QuestionResponse(nil)) {
		t.Errorf("Refusal(question) = %s", r.Line)
	}
	if r := Refusal(TypeApproval); r.Type != TypeApprovalResponse || string(r.Line) != string(ApprovalResponse(false)) {
		t.Errorf("Refusal(approval_request) = %s", r.Line)
	}
}
