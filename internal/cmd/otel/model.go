package otel

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"
)

// What the mapping (session.go) makes of a session, before any SDK sees it: spans handed over
// whole once they end, log records, and metric points. The sink turns them into OTLP (sdk.go);
// the tests record them (mapping_test.go).

// span is one span of a session, built as its events arrive and handed to the sink when it
// ends, with the times the events carried or arrived at.
type span struct {
	name       string
	kind       trace.SpanKind
	traceID    trace.TraceID
	id         trace.SpanID
	parent     trace.SpanID // zero for the root of a trace of its own
	remote     bool         // parent is the caller's ($TRACEPARENT)
	start, end time.Time
	attrs      []attribute.KeyValue
	events     []spanEvent
	links      []trace.SpanID // spans of the same trace this one is linked to
	status     codes.Code
	statusMsg  string
	ended      bool
	// approvalKind is the kind of an approval_request's span, decided when it ends.
	approvalKind string
}

type spanEvent struct {
	name  string
	at    time.Time
	attrs []attribute.KeyValue
}

// maxSpanEvents bounds the events kept on one span; past it they are counted in an attribute.
const maxSpanEvents = 128

func (s *span) event(name string, at time.Time, attrs ...attribute.KeyValue) {
	if len(s.events) >= maxSpanEvents {
		return
	}
	s.events = append(s.events, spanEvent{name: name, at: at, attrs: attrs})
}

func (s *span) set(attrs ...attribute.KeyValue) { s.attrs = append(s.attrs, attrs...) }

func (s *span) fail(errType, msg string) {
	s.status, s.statusMsg = codes.Error, msg
	s.set(attribute.String("error.type", errType))
}

// logRecord is one event of the session as a log record, tied to the span it happened in.
type logRecord struct {
	at        time.Time
	eventName string
	severity  log.Severity
	body      string // the event's line, only with --capture-content (redacted)
	attrs     []attribute.KeyValue
	traceID   trace.TraceID
	spanID    trace.SpanID
}

// Metric names: the GenAI conventions' where there is one, fr's own (fr.*) for the rest.
const (
	metricTokens    = "gen_ai.client.token.usage"        // histogram, {token}
	metricDuration  = "gen_ai.client.operation.duration" // histogram, s
	metricToolCalls = "fr.tool.calls"                    // counter, {call}
	metricApprovals = "fr.approvals"                     // counter, {prompt}
	metricSessions  = "fr.sessions"                      // counter, {session}
	metricCost      = "fr.cost"                          // counter, USD
)

// sink receives what the mapping makes.
type sink interface {
	span(*span)
	log(*logRecord)
	// metric adds v to the counter or histogram named.
	metric(name string, v float64, attrs ...attribute.KeyValue)
}
