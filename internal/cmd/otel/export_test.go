package otel

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// hexIDsSlow is hexIDs the long way, as --otlp-file first did it: the JSON decoded, its ids
// rewritten in the tree, and encoded again.
func hexIDsSlow(b []byte) ([]byte, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
					if raw, err := base64.StdEncoding.DecodeString(s); err == nil {
						x[k] = hex.EncodeToString(raw)
					}
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return json.Marshal(v)
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	if d.More() {
		t.Fatalf("more than one value in %s", b)
	}
	return v
}

func TestOTLPJSONIDs(t *testing.T) {
	tid, _ := hex.DecodeString("0af7651916cd43dd8448eb211c80319c")
	sid, _ := hex.DecodeString("b7ad6b7169203331")
	pid, _ := hex.DecodeString("00f067aa0ba902b7")
	req := &coltrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{
		Spans: []*tracepb.Span{{TraceId: tid, SpanId: sid, ParentSpanId: pid, Name: "a \"b\" c", Kind: tracepb.Span_SPAN_KIND_INTERNAL,
			Links: []*tracepb.Span_Link{{TraceId: tid, SpanId: pid}}}},
	}}}}}
	b, err := otlpJSON(req)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(b, "\n") {
		t.Errorf("not one line: %s", b)
	}
	for _, s := range []string{`"traceId":"0af7651916cd43dd8448eb211c80319c"`, `"spanId":"b7ad6b7169203331"`,
		`"parentSpanId":"00f067aa0ba902b7"`, `"spanId":"00f067aa0ba902b7"`, `"name":"a \"b\" c"`, `"kind":1`} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("%s lacks %s", b, s)
		}
	}
	pj, _ := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(req)
	slow, err := hexIDsSlow(pj)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := decodeAny(t, b), decodeAny(t, slow); !reflect.DeepEqual(got, want) {
		t.Errorf("got %s\nwant %s", b, slow)
	}
}

// FuzzHexIDs holds the one-pass rewrite of --otlp-file's ids to the decode-rewrite-encode one:
// for any JSON, the same value.
func FuzzHexIDs(f *testing.F) {
	for _, s := range []string{`{"traceId":"CvdlGRbNQ92ESOshHIAxnA==","spanId": "t61rcWkgMzE=","x":[{"parentSpanId":"APBnqgupArc="}]}`,
		`{"a":"traceId","b":{"traceId":"not base64!"},"spanId":1,"parentSpanId":null}`,
		`{"trace\u0049d":"AAEC", "spanId":"AA\u003d\u003d", "s":"a\\\"b:\"" , "k":["spanId",":"]}`,
		`{"traceId":{"spanId":"AAEC"}, "spanId":["AAEC"]}`, `[1, 2.50, "x y", true]`, `"spanId"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		slow, err := hexIDsSlow(in)
		if err != nil {
			return
		}
		fast := hexIDs(in)
		if !json.Valid(fast) {
			t.Fatalf("hexIDs(%s) = %s, not JSON", in, fast)
		}
		if got, want := decodeAny(t, fast), decodeAny(t, slow); !reflect.DeepEqual(got, want) {
			t.Fatalf("hexIDs(%s)\n got %s\nwant %s", in, fast, slow)
		}
	})
}
