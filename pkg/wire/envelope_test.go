package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeEnvelope(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantShape string
		wantItems int
		wantErr   string // substring; "" means no error
		version   bool   // the error is a *VersionError
	}{
		{"items", `{"protocolVersion":1,"items":[{"id":"m1","current":true},{"id":"m2","current":false}]}`, "items", 2, "", false},
		{"empty items", `{"protocolVersion":1,"items":[]}`, "items", 0, "", false},
		{"item", `{"protocolVersion":1,"item":{"path":"/x","valid":false,"issues":[],"config":null}}`, "item", 0, "", false},
		{"error", `{"protocolVersion":1,"error":"fuseraft is not configured. Run \u0027fuseraft setup\u0027 to set an API key."}`, "error", 0, "", false},
		{"trailing newline and CRLF", "{\"protocolVersion\":1,\"items\":[]}\r\n", "items", 0, "", false},
		{"unknown extra field is ignored", `{"protocolVersion":1,"items":[],"next":null}`, "items", 0, "", false},
		{"unsupported version", `{"protocolVersion":2,"items":[]}`, "items", 0, "protocolVersion 2; this build of fr supports 1", true},
		{"not JSON", `Error: something broke`, "", 0, "expected a JSON envelope: Error: something broke", false},
		{"empty", ``, "", 0, "expected a JSON envelope: (nothing)", false},
		{"an array", `[1,2]`, "", 0, "expected a JSON envelope", false},
		{"two envelopes", `{"protocolVersion":1,"items":[]}{"protocolVersion":1,"items":[]}`, "", 0, "exactly one", false},
		{"no version", `{"items":[]}`, "", 0, "no protocolVersion", false},
		{"version a string", `{"protocolVersion":"1","items":[]}`, "", 0, "not an integer", false},
		{"items not an array", `{"protocolVersion":1,"items":{}}`, "", 0, "items is not an array", false},
		{"items null", `{"protocolVersion":1,"items":null}`, "", 0, "items is not an array", false},
		{"item null", `{"protocolVersion":1,"item":null}`, "", 0, "item is null", false},
		{"error not a string", `{"protocolVersion":1,"error":{"msg":"x"}}`, "", 0, "error is not a string", false},
		{"neither", `{"protocolVersion":1}`, "", 0, "exactly one of items, item and error", false},
		{"both", `{"protocolVersion":1,"items":[],"error":"x"}`, "", 0, "exactly one of items, item and error", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := DecodeEnvelope([]byte(tt.in))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tt.wantErr)
				}
				var ve *VersionError
				if errors.As(err, &ve) != tt.version {
					t.Fatalf("error type %T", err)
				}
				var pe *ProtocolError
				if !tt.version && !errors.As(err, &pe) {
					t.Fatalf("error type %T, want *ProtocolError", err)
				}
			}
			if tt.wantShape == "" {
				return
			}
			if env == nil {
				t.Fatal("no envelope returned")
			}
			if env.Shape() != tt.wantShape || len(env.Items) != tt.wantItems {
				t.Errorf("shape %s with %d items, want %s with %d", env.Shape(), len(env.Items), tt.wantShape, tt.wantItems)
			}
			if tt.wantShape == "items" && env.Items == nil {
				t.Error("items:[] must decode as an empty, non-nil slice")
			}
		})
	}
}

func TestEnvelopeKeepsItemBytes(t *testing.T) {
	in := `{"protocolVersion":1,"items":[{"sessionId":"s1","task":"fix \u0022the\u0022 bug \u002B tests","workingDirectory":null}]}`
	env, err := DecodeEnvelope([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sessionId":"s1","task":"fix \u0022the\u0022 bug \u002B tests","workingDirectory":null}`
	if string(env.Items[0]) != want {
		t.Errorf("item bytes %s, want %s", env.Items[0], want)
	}
}

func TestEnvelopeErrorText(t *testing.T) {
	env, err := DecodeEnvelope([]byte(`{"protocolVersion":1,"error":"fuseraft is not configured. Run \u0027fuseraft setup\u0027 to set an API key."}`))
	if err != nil {
		t.Fatal(err)
	}
	if *env.Error != "fuseraft is not configured. Run 'fuseraft setup' to set an API key." {
		t.Errorf("error text %q", *env.Error)
	}
}

func TestReadEnvelopeAgreesWithDecode(t *testing.T) {
	for _, in := range []string{
		`{"protocolVersion":1,"items":[{"a":1},{"b":[2,3]}]}`,
		`{"protocolVersion":1,"item":{"configPath":"/p"}}`,
		`{"protocolVersion":1,"error":"boom"}`,
		`{"protocolVersion":1,"items":[]}`,
	} {
		env, err := DecodeEnvelope([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		head, err := ReadEnvelope(strings.NewReader(in), false, func(raw []byte) error {
			got = append(got, string(raw))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if head.Shape != env.Shape() || head.ProtocolVersion != 1 {
			t.Errorf("%s: head %+v", in, head)
		}
		var want []string
		for _, it := range env.Items {
			want = append(want, string(it))
		}
		if env.Item != nil {
			want = append(want, string(env.Item))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: streamed %q, decoded %q", in, got, want)
		}
		if env.Error != nil && (head.Error == nil || *head.Error != *env.Error) {
			t.Errorf("%s: error %v", in, head.Error)
		}
	}
}

func TestReadEnvelopeErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
		allow          bool
	}{
		{"not JSON shows what was seen", "Traceback: oops\n", "expected a JSON envelope: Traceback: oops", false},
		{"no output", "", "got no output", false},
		{"unsupported version", `{"protocolVersion":9,"items":[{"a":1}]}`, "protocolVersion 9", false},
		{"no version", `{"items":[]}`, "no protocolVersion", false},
		{"items not array", `{"protocolVersion":1,"items":3}`, "not an array", false},
		{"item null", `{"protocolVersion":1,"item":null}`, "item is null", false},
		{"error not a string", `{"protocolVersion":1,"error":1}`, "not a string", false},
		{"truncated", `{"protocolVersion":1,"items":[{"a":`, "not valid JSON", false},
		{"trailing garbage", `{"protocolVersion":1,"items":[]} x`, "exactly one", false},
		{"neither shape", `{"protocolVersion":1,"x":[]}`, "exactly one of", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadEnvelope(strings.NewReader(tt.in), tt.allow, func([]byte) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestReadEnvelopeAnyVersion(t *testing.T) {
	n := 0
	head, err := ReadEnvelope(strings.NewReader(`{"protocolVersion":2,"items":[{},{}]}`), true, func([]byte) error { n++; return nil })
	if err != nil || n != 2 || head.ProtocolVersion != 2 {
		t.Fatalf("head %+v, %d items, err %v", head, n, err)
	}
}

func TestReadEnvelopeStop(t *testing.T) {
	n := 0
	_, err := ReadEnvelope(strings.NewReader(`{"protocolVersion":1,"items":[{},{},{}]}`), false, func([]byte) error {
		n++
		if n == 2 {
			return ErrStop
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("%d items, err %v", n, err)
	}
	boom := errors.New("write failed")
	_, err = ReadEnvelope(strings.NewReader(`{"protocolVersion":1,"item":{}}`), false, func([]byte) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the callback's error", err)
	}
}

func TestCheckHandshake(t *testing.T) {
	tests := []struct {
		raw, want string
	}{
		{`{"type":"ready","protocolVersion":1,"sessionId":"s"}`, ""},
		{`{"type":"hello","protocolVersion":2}`, "the hello event speaks protocolVersion 2; this build of fr supports 1"},
		{`{"type":"ready","sessionId":"s"}`, "the ready event has no protocolVersion"},
		{`{"type":"ready","protocolVersion":1.5}`, "not an integer"},
		{`{"type":"ready","protocolVersion":"1"}`, "not an integer"},
		{`{"type":"ready","protocolVersion":null}`, "no protocolVersion"},
		{`{"type":"ready",`, "not valid JSON"},
	}
	for _, tt := range tests {
		l := ParseLine([]byte(tt.raw))
		ev, _ := l.Event()
		err := CheckHandshake(ev)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.raw, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.raw, err, tt.want)
		}
	}
}

func TestVersionErrorDefaultWhere(t *testing.T) {
	e := &VersionError{Seen: 3, Supported: []int{1, 2}}
	if e.Error() != "fuseraft speaks protocolVersion 3; this build of fr supports 1, 2" {
		t.Errorf("got %q", e.Error())
	}
}

func TestProtocolErrorLongInputIsCut(t *testing.T) {
	_, err := DecodeEnvelope([]byte(strings.Repeat("x", 1000)))
	if err == nil || len(err.Error()) > 300 || !strings.HasSuffix(err.Error(), "…") {
		t.Fatalf("error %q", err)
	}
}

func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"protocolVersion":1,"items":[{"a":1}]}`, `{"protocolVersion":1,"item":{}}`,
		`{"protocolVersion":1,"error":"x"}`, `{"protocolVersion":2,"items":[]}`, `{}`, `[]`, `x`,
		`{"protocolVersion":1,"items":[],"items":[{}]}`, `{"protocolVersion":1e0,"items":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		env, derr := DecodeEnvelope(b)
		var items []string
		head, serr := ReadEnvelope(strings.NewReader(string(b)), false, func(raw []byte) error {
			items = append(items, string(raw))
			return nil
		})
		// The streaming decoder is the stricter one (it also refuses a repeated items, item
		// or error key, since it cannot take back what it passed on): whatever it accepts,
		// DecodeEnvelope accepts too, and they agree on what it holds.
		if serr == nil {
			if derr != nil {
				t.Fatalf("%q: ReadEnvelope ok, DecodeEnvelope %v", b, derr)
			}
			if head.Shape != env.Shape() || head.ProtocolVersion != env.ProtocolVersion {
				t.Fatalf("%q: head %+v, env shape %s", b, head, env.Shape())
			}
			if env.Shape() == "items" && len(items) != len(env.Items) {
				t.Fatalf("%q: %d streamed items, %d decoded", b, len(items), len(env.Items))
			}
		}
	})
}
