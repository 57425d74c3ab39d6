package otel

import (
	"encoding/base64"
	"encoding/hex"
	"math"
	"strconv"
	"unicode/utf8"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// The OTLP JSON of spans and log records written by hand: what protojson and hexIDs make of
// them (the same members and values), without protojson's reflection, which was most of what
// --otlp-file cost. A message with anything it does not know (unknown fields, string indexes,
// entity references, text that is not UTF-8) is left to protojson: quickJSON returns false.
// FuzzQuickJSON holds it to protojson.

// jw writes JSON; ok turns false at the first thing it leaves to protojson.
type jw struct {
	b  []byte
	ok bool
}

// quickJSON is otlpJSON for trace and log export requests.
func quickJSON(msg proto.Message) ([]byte, bool) {
	w := &jw{ok: true}
	switch m := msg.(type) {
	case *coltrace.ExportTraceServiceRequest:
		w.known(m)
		w.b = append(w.b, '{')
		w.list("resourceSpans", len(m.ResourceSpans), func(i int) { w.resourceSpans(m.ResourceSpans[i]) })
	case *collogs.ExportLogsServiceRequest:
		w.known(m)
		w.b = append(w.b, '{')
		w.list("resourceLogs", len(m.ResourceLogs), func(i int) { w.resourceLogs(m.ResourceLogs[i]) })
	default:
		return nil, false
	}
	w.b = append(w.b, '}')
	return w.b, w.ok
}

// known notes a message with unknown fields as one to leave to protojson.
func (w *jw) known(m proto.Message) {
	if len(m.ProtoReflect().GetUnknown()) > 0 {
		w.ok = false
	}
}

// name writes "name": after a comma unless it opens its object.
func (w *jw) name(n string) {
	if c := w.b[len(w.b)-1]; c != '{' {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, n...)
	w.b = append(w.b, '"', ':')
}

func (w *jw) list(n string, count int, each func(int)) {
	if count == 0 {
		return
	}
	w.name(n)
	w.b = append(w.b, '[')
	for i := range count {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		each(i)
	}
	w.b = append(w.b, ']')
}

func (w *jw) str(n, s string) {
	if s != "" {
		w.name(n)
		w.quote(s)
	}
}

func (w *jw) u32(n string, v uint32) {
	if v != 0 {
		w.name(n)
		w.b = strconv.AppendUint(w.b, uint64(v), 10)
	}
}

func (w *jw) i32(n string, v int32) {
	if v != 0 {
		w.name(n)
		w.b = strconv.AppendInt(w.b, int64(v), 10)
	}
}

// u64 is a 64-bit number, quoted as protojson quotes them.
func (w *jw) u64(n string, v uint64) {
	if v != 0 {
		w.name(n)
		w.b = append(w.b, '"')
		w.b = strconv.AppendUint(w.b, v, 10)
		w.b = append(w.b, '"')
	}
}

func (w *jw) id(n string, v []byte) {
	if len(v) > 0 {
		w.name(n)
		w.b = append(w.b, '"')
		w.b = hex.AppendEncode(w.b, v)
		w.b = append(w.b, '"')
	}
}

func (w *jw) quote(s string) {
	if !utf8.ValidString(s) {
		w.ok = false
		return
	}
	const hexDigits = "0123456789abcdef"
	w.b = append(w.b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		w.b = append(w.b, s[start:i]...)
		switch c {
		case '"', '\\':
			w.b = append(w.b, '\\', c)
		case '\n':
			w.b = append(w.b, '\\', 'n')
		case '\r':
			w.b = append(w.b, '\\', 'r')
		case '\t':
			w.b = append(w.b, '\\', 't')
		default:
			w.b = append(w.b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	w.b = append(w.b, s[start:]...)
	w.b = append(w.b, '"')
}

func (w *jw) resource(r *resourcepb.Resource) {
	if r == nil {
		return
	}
	w.known(r)
	if len(r.EntityRefs) > 0 {
		w.ok = false
	}
	w.name("resource")
	w.b = append(w.b, '{')
	w.attrs("attributes", r.Attributes)
	w.u32("droppedAttributesCount", r.DroppedAttributesCount)
	w.b = append(w.b, '}')
}

func (w *jw) scope(s *commonpb.InstrumentationScope) {
	if s == nil {
		return
	}
	w.known(s)
	w.name("scope")
	w.b = append(w.b, '{')
	w.str("name", s.Name)
	w.str("version", s.Version)
	w.attrs("attributes", s.Attributes)
	w.u32("droppedAttributesCount", s.DroppedAttributesCount)
	w.b = append(w.b, '}')
}

func (w *jw) attrs(n string, kvs []*commonpb.KeyValue) {
	w.list(n, len(kvs), func(i int) { w.keyValue(kvs[i]) })
}

func (w *jw) keyValue(kv *commonpb.KeyValue) {
	w.b = append(w.b, '{')
	if kv != nil {
		w.known(kv)
		if kv.KeyStrindex != 0 {
			w.ok = false
		}
		w.str("key", kv.Key)
		if kv.Value != nil {
			w.name("value")
			w.anyValue(kv.Value)
		}
	}
	w.b = append(w.b, '}')
}

func (w *jw) anyValue(v *commonpb.AnyValue) {
	w.known(v)
	w.b = append(w.b, '{')
	switch x := v.Value.(type) {
	case nil:
	case *commonpb.AnyValue_StringValue:
		w.name("stringValue")
		w.quote(x.StringValue)
	case *commonpb.AnyValue_BoolValue:
		w.name("boolValue")
		w.b = strconv.AppendBool(w.b, x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		w.name("intValue")
		w.b = append(w.b, '"')
		w.b = strconv.AppendInt(w.b, x.IntValue, 10)
		w.b = append(w.b, '"')
	case *commonpb.AnyValue_DoubleValue:
		w.name("doubleValue")
		w.float(x.DoubleValue)
	case *commonpb.AnyValue_BytesValue:
		w.name("bytesValue")
		w.b = append(w.b, '"')
		w.b = base64.StdEncoding.AppendEncode(w.b, x.BytesValue)
		w.b = append(w.b, '"')
	case *commonpb.AnyValue_ArrayValue:
		w.name("arrayValue")
		w.b = append(w.b, '{')
		if x.ArrayValue != nil {
			w.known(x.ArrayValue)
			w.list("values", len(x.ArrayValue.Values), func(i int) {
				if e := x.ArrayValue.Values[i]; e != nil {
					w.anyValue(e)
				} else {
					w.b = append(w.b, '{', '}')
				}
			})
		}
		w.b = append(w.b, '}')
	case *commonpb.AnyValue_KvlistValue:
		w.name("kvlistValue")
		w.b = append(w.b, '{')
		if x.KvlistValue != nil {
			w.known(x.KvlistValue)
			w.attrs("values", x.KvlistValue.Values)
		}
		w.b = append(w.b, '}')
	default:
		w.ok = false
	}
	w.b = append(w.b, '}')
}

// float is a double as protojson writes it: NaN and the infinities as strings.
func (w *jw) float(f float64) {
	switch {
	case math.IsNaN(f):
		w.b = append(w.b, `"NaN"`...)
	case math.IsInf(f, 1):
		w.b = append(w.b, `"Infinity"`...)
	case math.IsInf(f, -1):
		w.b = append(w.b, `"-Infinity"`...)
	default:
		w.b = strconv.AppendFloat(w.b, f, 'g', -1, 64)
	}
}

func (w *jw) resourceSpans(rs *tracepb.ResourceSpans) {
	w.b = append(w.b, '{')
	if rs != nil {
		w.known(rs)
		w.resource(rs.Resource)
		w.list("scopeSpans", len(rs.ScopeSpans), func(i int) { w.scopeSpans(rs.ScopeSpans[i]) })
		w.str("schemaUrl", rs.SchemaUrl)
	}
	w.b = append(w.b, '}')
}

func (w *jw) scopeSpans(ss *tracepb.ScopeSpans) {
	w.b = append(w.b, '{')
	if ss != nil {
		w.known(ss)
		w.scope(ss.Scope)
		w.list("spans", len(ss.Spans), func(i int) { w.span(ss.Spans[i]) })
		w.str("schemaUrl", ss.SchemaUrl)
	}
	w.b = append(w.b, '}')
}

func (w *jw) span(s *tracepb.Span) {
	w.b = append(w.b, '{')
	if s != nil {
		w.known(s)
		w.id("traceId", s.TraceId)
		w.id("spanId", s.SpanId)
		w.str("traceState", s.TraceState)
		w.id("parentSpanId", s.ParentSpanId)
		w.u32("flags", s.Flags)
		w.str("name", s.Name)
		w.i32("kind", int32(s.Kind))
		w.u64("startTimeUnixNano", s.StartTimeUnixNano)
		w.u64("endTimeUnixNano", s.EndTimeUnixNano)
		w.attrs("attributes", s.Attributes)
		w.u32("droppedAttributesCount", s.DroppedAttributesCount)
		w.list("events", len(s.Events), func(i int) {
			e := s.Events[i]
			w.b = append(w.b, '{')
			if e != nil {
				w.known(e)
				w.u64("timeUnixNano", e.TimeUnixNano)
				w.str("name", e.Name)
				w.attrs("attributes", e.Attributes)
				w.u32("droppedAttributesCount", e.DroppedAttributesCount)
			}
			w.b = append(w.b, '}')
		})
		w.u32("droppedEventsCount", s.DroppedEventsCount)
		w.list("links", len(s.Links), func(i int) {
			l := s.Links[i]
			w.b = append(w.b, '{')
			if l != nil {
				w.known(l)
				w.id("traceId", l.TraceId)
				w.id("spanId", l.SpanId)
				w.str("traceState", l.TraceState)
				w.attrs("attributes", l.Attributes)
				w.u32("droppedAttributesCount", l.DroppedAttributesCount)
				w.u32("flags", l.Flags)
			}
			w.b = append(w.b, '}')
		})
		w.u32("droppedLinksCount", s.DroppedLinksCount)
		if st := s.Status; st != nil {
			w.known(st)
			w.name("status")
			w.b = append(w.b, '{')
			w.str("message", st.Message)
			w.i32("code", int32(st.Code))
			w.b = append(w.b, '}')
		}
	}
	w.b = append(w.b, '}')
}

func (w *jw) resourceLogs(rl *logspb.ResourceLogs) {
	w.b = append(w.b, '{')
	if rl != nil {
		w.known(rl)
		w.resource(rl.Resource)
		w.list("scopeLogs", len(rl.ScopeLogs), func(i int) { w.scopeLogs(rl.ScopeLogs[i]) })
		w.str("schemaUrl", rl.SchemaUrl)
	}
	w.b = append(w.b, '}')
}

func (w *jw) scopeLogs(sl *logspb.ScopeLogs) {
	w.b = append(w.b, '{')
	if sl != nil {
		w.known(sl)
		w.scope(sl.Scope)
		w.list("logRecords", len(sl.LogRecords), func(i int) { w.logRecord(sl.LogRecords[i]) })
		w.str("schemaUrl", sl.SchemaUrl)
	}
	w.b = append(w.b, '}')
}

func (w *jw) logRecord(r *logspb.LogRecord) {
	w.b = append(w.b, '{')
	if r != nil {
		w.known(r)
		w.u64("timeUnixNano", r.TimeUnixNano)
		w.u64("observedTimeUnixNano", r.ObservedTimeUnixNano)
		w.i32("severityNumber", int32(r.SeverityNumber))
		w.str("severityText", r.SeverityText)
		if r.Body != nil {
			w.name("body")
			w.anyValue(r.Body)
		}
		w.attrs("attributes", r.Attributes)
		w.u32("droppedAttributesCount", r.DroppedAttributesCount)
		w.u32("flags", r.Flags)
		w.id("traceId", r.TraceId)
		w.id("spanId", r.SpanId)
		w.str("eventName", r.EventName)
	}
	w.b = append(w.b, '}')
}
