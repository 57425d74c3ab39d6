package otel

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The SDK end: what the mapping makes goes to the OpenTelemetry SDK's batching processors,
// which hand it to the OTLP exporters from their own goroutines. Nothing here waits on the
// network: a full queue drops (and the drop is counted), so a collector that is slow or gone
// never holds up the pipe.

const scope = "github.com/fuseraft/fr/internal/cmd/otel"

// tally counts what was made and what a collector took, per signal, for the report at the end.
type tally struct {
	spansMade, spansSent       atomic.Int64
	logsMade, logsSent         atomic.Int64
	metricExports, metricFails atomic.Int64
	mu                         sync.Mutex
	lastErr                    error
}

func (t *tally) failed(err error) {
	if err == nil {
		return
	}
	t.mu.Lock()
	t.lastErr = err
	t.mu.Unlock()
}

func (t *tally) err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastErr
}

// exporters are the OTLP exporters of the signals asked for; nil for one not exported.
type exporters struct {
	spans   sdktrace.SpanExporter
	metrics sdkmetric.Exporter
	logs    sdklog.Exporter
}

// pipeline holds the SDK's providers.
type pipeline struct {
	tp *sdktrace.TracerProvider
	mp *sdkmetric.MeterProvider
	lp *sdklog.LoggerProvider
	t  *tally
}

// current is the tally of the pipeline running: the SDK reports export errors to one global
// handler, which would otherwise print each of them.
var current atomic.Pointer[tally]

func init() {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		if t := current.Load(); t != nil {
			t.failed(err)
		}
	}))
	otel.SetLogger(logr.Discard())
}

func newPipeline(ex exporters, res *resource.Resource, t *tally) *pipeline {
	current.Store(t)
	p := &pipeline{t: t}
	if ex.spans != nil {
		p.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithIDGenerator(fixedIDs{}),
			sdktrace.WithBatcher(countSpans{ex.spans, t}))
	}
	if ex.metrics != nil {
		p.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res),
			sdkmetric.WithReader(sdkmetric.NewPeriodicReader(countMetrics{ex.metrics, t})))
	}
	if ex.logs != nil {
		p.lp = sdklog.NewLoggerProvider(sdklog.WithResource(res),
			sdklog.WithProcessor(sdklog.NewBatchProcessor(countLogs{ex.logs, t})))
	}
	return p
}

// shutdown flushes what is queued and stops the exporters, within ctx.
func (p *pipeline) shutdown(ctx context.Context) error {
	var errs []error
	if p.tp != nil {
		errs = append(errs, p.tp.Shutdown(ctx))
	}
	if p.lp != nil {
		errs = append(errs, p.lp.Shutdown(ctx))
	}
	if p.mp != nil {
		errs = append(errs, p.mp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// countSpans counts the spans a collector took.
type countSpans struct {
	sdktrace.SpanExporter
	t *tally
}

func (c countSpans) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.SpanExporter.ExportSpans(ctx, spans)
	if err == nil {
		c.t.spansSent.Add(int64(len(spans)))
	}
	c.t.failed(err)
	return err
}

type countLogs struct {
	sdklog.Exporter
	t *tally
}

func (c countLogs) Export(ctx context.Context, recs []sdklog.Record) error {
	err := c.Exporter.Export(ctx, recs)
	if err == nil {
		c.t.logsSent.Add(int64(len(recs)))
	}
	c.t.failed(err)
	return err
}

type countMetrics struct {
	sdkmetric.Exporter
	t *tally
}

func (c countMetrics) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	err := c.Exporter.Export(ctx, rm)
	c.t.metricExports.Add(1)
	if err != nil {
		c.t.metricFails.Add(1)
	}
	c.t.failed(err)
	return err
}

// sdkSink hands the mapping's spans, logs and metrics to the pipeline.
type sdkSink struct {
	p      *pipeline
	tracer trace.Tracer
	logger otellog.Logger
	meter  metric.Meter
	now    func() time.Time
	hists  map[string]metric.Float64Histogram
	counts map[string]metric.Float64Counter
	sets   map[string]attribute.Set // attrSet's
	key    []byte
}

func newSDKSink(p *pipeline, version string, now func() time.Time) *sdkSink {
	k := &sdkSink{p: p, now: now, hists: map[string]metric.Float64Histogram{}, counts: map[string]metric.Float64Counter{},
		sets: map[string]attribute.Set{}}
	if p.tp != nil {
		k.tracer = p.tp.Tracer(scope, trace.WithInstrumentationVersion(version))
	}
	if p.lp != nil {
		k.logger = p.lp.Logger(scope, otellog.WithInstrumentationVersion(version))
	}
	if p.mp != nil {
		k.meter = p.mp.Meter(scope, metric.WithInstrumentationVersion(version))
		k.instruments()
	}
	return k
}

// The GenAI conventions' bucket boundaries for token counts and operation durations.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

func (k *sdkSink) instruments() {
	k.hists[metricTokens], _ = k.meter.Float64Histogram(metricTokens, metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used"), metric.WithExplicitBucketBoundaries(tokenBuckets...))
	k.hists[metricDuration], _ = k.meter.Float64Histogram(metricDuration, metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration"), metric.WithExplicitBucketBoundaries(durationBuckets...))
	k.counts[metricToolCalls], _ = k.meter.Float64Counter(metricToolCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls, by tool and outcome"))
	k.counts[metricApprovals], _ = k.meter.Float64Counter(metricApprovals, metric.WithUnit("{prompt}"),
		metric.WithDescription("Approval prompts, by kind and decision"))
	k.counts[metricSessions], _ = k.meter.Float64Counter(metricSessions, metric.WithUnit("{session}"),
		metric.WithDescription("Sessions, by kind and outcome"))
	k.counts[metricCost], _ = k.meter.Float64Counter(metricCost, metric.WithUnit("USD"),
		metric.WithDescription("Cost of the tokens used, from --prices"))
}

func (k *sdkSink) span(sp *span) {
	if k.tracer == nil {
		return
	}
	k.p.t.spansMade.Add(1)
	ctx := context.Background()
	opts := []trace.SpanStartOption{trace.WithTimestamp(sp.start), trace.WithAttributes(sp.attrs...), trace.WithSpanKind(sp.kind)}
	if sp.parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: sp.traceID, SpanID: sp.parent, TraceFlags: trace.FlagsSampled, Remote: sp.remote}))
	} else {
		opts = append(opts, trace.WithNewRoot())
	}
	for _, l := range sp.links {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: sp.traceID, SpanID: l, TraceFlags: trace.FlagsSampled})}))
	}
	_, s := k.tracer.Start(withIDs(ctx, sp.traceID, sp.id), sp.name, opts...)
	for _, ev := range sp.events {
		s.AddEvent(ev.name, trace.WithTimestamp(ev.at), trace.WithAttributes(ev.attrs...))
	}
	if sp.status != codes.Unset {
		s.SetStatus(sp.status, sp.statusMsg)
	}
	s.End(trace.WithTimestamp(sp.end))
}

func (k *sdkSink) log(rec *logRecord) {
	if k.logger == nil {
		return
	}
	k.p.t.logsMade.Add(1)
	var r otellog.Record
	r.SetTimestamp(rec.at)
	r.SetObservedTimestamp(k.now())
	r.SetEventName(rec.eventName)
	r.SetSeverity(rec.severity)
	r.SetSeverityText(rec.severity.String())
	if rec.body != "" {
		r.SetBody(attribute.StringValue(rec.body))
	}
	r.AddAttributes(rec.attrs...)
	ctx := context.Background()
	if rec.traceID.IsValid() && rec.spanID.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: rec.traceID, SpanID: rec.spanID, TraceFlags: trace.FlagsSampled}))
	}
	k.logger.Emit(ctx, r)
}

func (k *sdkSink) metric(name string, v float64, attrs ...attribute.KeyValue) {
	if k.meter == nil {
		return
	}
	ctx := context.Background()
	opt := metric.WithAttributeSet(k.attrSet(attrs))
	if h := k.hists[name]; h != nil {
		h.Record(ctx, v, opt)
	} else if c := k.counts[name]; c != nil {
		c.Add(ctx, v, opt)
	}
}

// maxSets bounds the attribute sets a sink keeps (one per tool name and outcome, model and
// agent...): past it, a set is made for each measurement.
const maxSets = 4096

// attrSet is the attribute set of attrs, made once for each combination: sorting and hashing
// a set for each measurement was most of what a metric cost.
func (k *sdkSink) attrSet(attrs []attribute.KeyValue) attribute.Set {
	key := k.key[:0]
	for _, a := range attrs {
		key = append(key, a.Key...)
		key = append(key, 0)
		key = append(key, a.Value.Type().String()...)
		key = append(key, 0)
		key = append(key, a.Value.Emit()...)
		key = append(key, 0)
	}
	k.key = key
	if set, ok := k.sets[string(key)]; ok {
		return set
	}
	set := attribute.NewSet(attrs...)
	if len(k.sets) < maxSets {
		k.sets[string(key)] = set
	}
	return set
}
