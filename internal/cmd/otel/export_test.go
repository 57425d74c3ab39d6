package otel

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
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
	// far longer than the usual export: many spans, long escaped values
	long := `{"resourceSpans":[` + strings.Repeat(`{"traceId":"CvdlGRbNQ92ESOshHIAxnA==","spanId":"t61rcWkgMzE=","name":"`+strings.Repeat(`\"é`, 500)+`"},`, 2000) + `{}]}`
	f.Add([]byte(long))
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

// otlpSeeds are export requests with every kind of member quickJSON writes.
func otlpSeeds() []proto.Message {
	tid, _ := hex.DecodeString("0af7651916cd43dd8448eb211c80319c")
	sid, _ := hex.DecodeString("b7ad6b7169203331")
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	attrs := []*commonpb.KeyValue{
		{Key: "s", Value: str("a \"quoted\"\n\ttext\x01 é ✓")},
		{Key: "empty", Value: str("")},
		{Key: "b", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}},
		{Key: "i", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: -1 << 62}}},
		{Key: "d", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 0.0000012}}},
		{Key: "nan", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: math.NaN()}}},
		{Key: "inf", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: math.Inf(-1)}}},
		{Key: "bytes", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1, 255}}}},
		{Key: "arr", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{str("x"), {}}}}}},
		{Key: "kv", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{{Key: "k", Value: str("v")}, {}}}}}},
		{Key: "novalue"},
	}
	res := &resourcepb.Resource{Attributes: attrs[:2], DroppedAttributesCount: 3}
	scope := &commonpb.InstrumentationScope{Name: "fr", Version: "1.0", Attributes: attrs[2:3]}
	return []proto.Message{
		&coltrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{Resource: res, SchemaUrl: "u", ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: scope, SchemaUrl: "v",
			Spans: []*tracepb.Span{
				{TraceId: tid, SpanId: sid, ParentSpanId: sid, TraceState: "a=b", Flags: 257, Name: "execute_tool read",
					Kind: tracepb.Span_SPAN_KIND_INTERNAL, StartTimeUnixNano: 1764800000000000000, EndTimeUnixNano: math.MaxUint64,
					Attributes: attrs, DroppedAttributesCount: 1, DroppedEventsCount: 2, DroppedLinksCount: 3,
					Events: []*tracepb.Span_Event{{TimeUnixNano: 5, Name: "file_changed", Attributes: attrs[:1], DroppedAttributesCount: 4}, {}},
					Links:  []*tracepb.Span_Link{{TraceId: tid, SpanId: sid, TraceState: "x=y", Attributes: attrs[1:2], Flags: 1}, {}},
					Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "denied"}},
				{Status: &tracepb.Status{}},
				{},
			}}, {}}}, {}}},
		&collogs.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{Resource: &resourcepb.Resource{}, ScopeLogs: []*logspb.ScopeLogs{{
			Scope: scope,
			LogRecords: []*logspb.LogRecord{
				{TimeUnixNano: 1, ObservedTimeUnixNano: 2, SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_ERROR, SeverityText: "ERROR",
					Body: str("{\"type\":\"error\"}"), Attributes: attrs, DroppedAttributesCount: 1, Flags: 1, TraceId: tid, SpanId: sid,
					EventName: "fuseraft.error"},
				{Body: &commonpb.AnyValue{}},
				{},
			}}}}}},
	}
}

// checkQuickJSON fails when quickJSON writes msg otherwise than protojson and hexIDs do.
func checkQuickJSON(t *testing.T, msg proto.Message, mustTake bool) {
	t.Helper()
	fast, ok := quickJSON(msg)
	if !ok {
		if mustTake {
			t.Fatalf("quickJSON left %v to protojson", msg)
		}
		return
	}
	slow, err := slowJSON(msg)
	if err != nil {
		t.Fatalf("quickJSON wrote %s where protojson fails: %v", fast, err)
	}
	var got, want any
	if err := json.Unmarshal(fast, &got); err != nil {
		t.Fatalf("quickJSON wrote %s: %v", fast, err)
	}
	if err := json.Unmarshal(slow, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("quickJSON:\n%s\nprotojson:\n%s", fast, slow)
	}
}

func TestQuickJSON(t *testing.T) {
	for _, m := range otlpSeeds() {
		checkQuickJSON(t, m, true)
	}
	bad := &collogs.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{
		LogRecords: []*logspb.LogRecord{{SeverityText: "a\xffb"}}}}}}}
	if _, ok := quickJSON(bad); ok {
		t.Error("quickJSON wrote text that is not UTF-8")
	}
}

// FuzzQuickJSON holds the hand-written OTLP JSON of spans and log records to protojson's, for
// any export request the protobuf decoder makes of the input.
func FuzzQuickJSON(f *testing.F) {
	for i, m := range otlpSeeds() {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(i%2 == 0, b)
	}
	f.Fuzz(func(t *testing.T, traces bool, b []byte) {
		var msg proto.Message = &collogs.ExportLogsServiceRequest{}
		if traces {
			msg = &coltrace.ExportTraceServiceRequest{}
		}
		if proto.Unmarshal(b, msg) != nil {
			return
		}
		checkQuickJSON(t, msg, false)
	})
}

// FuzzQuickJSONValues is FuzzQuickJSON for the values a span and a log record carry, which the
// protobuf decoder rarely makes of random input: any text, number and bytes.
func FuzzQuickJSONValues(f *testing.F) {
	f.Add("execute_tool read", "gen_ai.tool.name", "a \"b\"\n\x01é", int64(-5), 0.25, []byte{0, 255}, uint64(1764800000000000000))
	f.Add("", "", "\u2028<>&", int64(0), math.Inf(1), []byte(nil), uint64(0))
	f.Add(strings.Repeat("n", 1<<16), "k", strings.Repeat("\"\x01é\u2028", 1<<15), int64(1), 1e300, bytes.Repeat([]byte{0, 255}, 1<<15), uint64(1))
	f.Fuzz(func(t *testing.T, name, key, text string, n int64, d float64, raw []byte, at uint64) {
		kvs := []*commonpb.KeyValue{
			{Key: key, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: text}}},
			{Key: text, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: n}}},
			{Key: name, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: d}}},
			{Key: key, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: raw}}},
		}
		span := &tracepb.Span{TraceId: raw, SpanId: raw, Name: name, Kind: tracepb.Span_SpanKind(n % 7), StartTimeUnixNano: at,
			EndTimeUnixNano: at + uint64(n), Attributes: kvs, Flags: uint32(n),
			Events: []*tracepb.Span_Event{{TimeUnixNano: at, Name: text, Attributes: kvs[1:]}},
			Status: &tracepb.Status{Message: text, Code: tracepb.Status_StatusCode(n % 3)}}
		rec := &logspb.LogRecord{TimeUnixNano: at, ObservedTimeUnixNano: uint64(n), SeverityNumber: logspb.SeverityNumber(n % 25),
			SeverityText: name, Body: kvs[0].Value, Attributes: kvs, TraceId: raw, SpanId: raw, EventName: key}
		mustTake := utf8.ValidString(name) && utf8.ValidString(key) && utf8.ValidString(text)
		checkQuickJSON(t, &coltrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{span}}}}}}, mustTake)
		checkQuickJSON(t, &collogs.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{LogRecords: []*logspb.LogRecord{rec}}}}}}, mustTake)
	})
}
