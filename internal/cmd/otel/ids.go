package otel

import (
	"context"
	"crypto/sha256"
	"encoding/binary"

	"go.opentelemetry.io/otel/trace"
)

// Trace and span ids are derived, not drawn: the trace id from the session id (so that every fr
// process exporting the same session lands in the same trace), and each span id from the trace
// id, the session and the span's place in it (so that the same session exported twice gives the
// same spans, which a backend then keeps once). With $TRACEPARENT the trace is the caller's and
// only the span ids are derived.

// traceIDFor returns the trace id of the session with the given key.
func traceIDFor(key string) trace.TraceID {
	sum := sha256.Sum256([]byte("fr-otel trace\x00" + key))
	var id trace.TraceID
	copy(id[:], sum[:16])
	if !id.IsValid() {
		id[15] = 1
	}
	return id
}

// spanIDFor returns the id of the span at path in the session with the given key, in trace tid.
func spanIDFor(tid trace.TraceID, key, path string) trace.SpanID {
	h := sha256.New()
	h.Write(tid[:])
	h.Write([]byte("\x00" + key + "\x00" + path))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	var id trace.SpanID
	copy(id[:], sum[:8])
	if !id.IsValid() {
		binary.BigEndian.PutUint64(id[:], 1)
	}
	return id
}

// idsKey carries the ids the next span started must have to fixedIDs.
type idsKey struct{}

type wantIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// withIDs returns ctx telling fixedIDs the ids of the span about to be started in it.
func withIDs(ctx context.Context, tid trace.TraceID, sid trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, wantIDs{tid, sid})
}

// fixedIDs is the SDK's IDGenerator: it hands out the ids withIDs put in the context.
type fixedIDs struct{}

func (fixedIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	w, _ := ctx.Value(idsKey{}).(wantIDs)
	return w.trace, w.span
}

func (fixedIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	w, _ := ctx.Value(idsKey{}).(wantIDs)
	return w.span
}
