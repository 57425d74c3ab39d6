package otel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/fuseraft/fr/internal/jsonscan"
)

// Protocols of OTEL_EXPORTER_OTLP_PROTOCOL that fr-otel sends.
const (
	protoGRPC = "grpc"
	protoHTTP = "http/protobuf"
)

var protocols = []string{protoHTTP, protoGRPC}

// signalConfig is how one signal is exported.
type signalConfig struct {
	on       bool
	protocol string
}

// exportConfig is where and how the signals go: what the flags and the standard OTEL_*
// variables say. The exporters read the rest of those variables themselves (endpoints per
// signal, timeout, compression, certificates), as every OpenTelemetry SDK does.
type exportConfig struct {
	traces, metrics, logs signalConfig
	endpoint              string            // --endpoint: the base URL, as OTEL_EXPORTER_OTLP_ENDPOINT
	headers               map[string]string // --headers-file, over OTEL_EXPORTER_OTLP_HEADERS
	file                  string            // --otlp-file
}

// newExporters builds the exporters of the signals that are on.
func newExporters(ctx context.Context, c exportConfig) (exporters, io.Closer, error) {
	var ex exporters
	var fw *fileWriter
	if c.file != "" {
		f, err := os.OpenFile(c.file, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return ex, nil, err
		}
		fw = &fileWriter{w: bufio.NewWriter(f), f: f}
	}
	var err error
	if c.traces.on {
		if ex.spans, err = traceExporter(ctx, c, fw); err != nil {
			return ex, fw, err
		}
	}
	if c.metrics.on {
		if ex.metrics, err = metricExporter(ctx, c, fw); err != nil {
			return ex, fw, err
		}
	}
	if c.logs.on {
		if ex.logs, err = logExporter(ctx, c, fw); err != nil {
			return ex, fw, err
		}
	}
	if fw == nil {
		return ex, nil, nil
	}
	return ex, fw, nil
}

// signalURL is the endpoint of one signal under the base URL of --endpoint, as the OTLP
// exporter specification builds it from OTEL_EXPORTER_OTLP_ENDPOINT.
func signalURL(base, path string) string {
	return strings.TrimRight(base, "/") + path
}

func traceExporter(ctx context.Context, c exportConfig, fw *fileWriter) (sdktrace.SpanExporter, error) {
	if fw != nil || c.traces.protocol == protoHTTP {
		opts := []otlptracehttp.Option{}
		switch {
		case fw != nil:
			opts = append(opts, otlptracehttp.WithEndpointURL("http://otlp-file/v1/traces"), otlptracehttp.WithHTTPClient(fw.client()),
				otlptracehttp.WithCompression(otlptracehttp.NoCompression), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
		case c.endpoint != "":
			opts = append(opts, otlptracehttp.WithEndpointURL(signalURL(c.endpoint, "/v1/traces")))
		}
		if fw == nil && c.headers != nil {
			opts = append(opts, otlptracehttp.WithHeaders(c.headers))
		}
		return otlptracehttp.New(ctx, opts...)
	}
	opts := []otlptracegrpc.Option{}
	if c.endpoint != "" {
		opts = append(opts, otlptracegrpc.WithEndpointURL(c.endpoint))
	}
	if c.headers != nil {
		opts = append(opts, otlptracegrpc.WithHeaders(c.headers))
	}
	return otlptracegrpc.New(ctx, opts...)
}

func metricExporter(ctx context.Context, c exportConfig, fw *fileWriter) (sdkmetric.Exporter, error) {
	if fw != nil || c.metrics.protocol == protoHTTP {
		opts := []otlpmetrichttp.Option{}
		switch {
		case fw != nil:
			opts = append(opts, otlpmetrichttp.WithEndpointURL("http://otlp-file/v1/metrics"), otlpmetrichttp.WithHTTPClient(fw.client()),
				otlpmetrichttp.WithCompression(otlpmetrichttp.NoCompression), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
		case c.endpoint != "":
			opts = append(opts, otlpmetrichttp.WithEndpointURL(signalURL(c.endpoint, "/v1/metrics")))
		}
		if fw == nil && c.headers != nil {
			opts = append(opts, otlpmetrichttp.WithHeaders(c.headers))
		}
		return otlpmetrichttp.New(ctx, opts...)
	}
	opts := []otlpmetricgrpc.Option{}
	if c.endpoint != "" {
		opts = append(opts, otlpmetricgrpc.WithEndpointURL(c.endpoint))
	}
	if c.headers != nil {
		opts = append(opts, otlpmetricgrpc.WithHeaders(c.headers))
	}
	return otlpmetricgrpc.New(ctx, opts...)
}

func logExporter(ctx context.Context, c exportConfig, fw *fileWriter) (sdklog.Exporter, error) {
	if fw != nil || c.logs.protocol == protoHTTP {
		opts := []otlploghttp.Option{}
		switch {
		case fw != nil:
			opts = append(opts, otlploghttp.WithEndpointURL("http://otlp-file/v1/logs"), otlploghttp.WithHTTPClient(fw.client()),
				otlploghttp.WithCompression(otlploghttp.NoCompression), otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}))
		case c.endpoint != "":
			opts = append(opts, otlploghttp.WithEndpointURL(signalURL(c.endpoint, "/v1/logs")))
		}
		if fw == nil && c.headers != nil {
			opts = append(opts, otlploghttp.WithHeaders(c.headers))
		}
		return otlploghttp.New(ctx, opts...)
	}
	opts := []otlploggrpc.Option{}
	if c.endpoint != "" {
		opts = append(opts, otlploggrpc.WithEndpointURL(c.endpoint))
	}
	if c.headers != nil {
		opts = append(opts, otlploggrpc.WithHeaders(c.headers))
	}
	return otlploggrpc.New(ctx, opts...)
}

// fileWriter is --otlp-file: the HTTP exporters send to it instead of a collector (through
// an http.Client whose transport never leaves the process), and it writes each request as one
// line of OTLP JSON (the ExportTraceServiceRequest, ExportMetricsServiceRequest or
// ExportLogsServiceRequest), the format the OpenTelemetry Collector's file exporter writes and
// its otlpjsonfile receiver reads.
type fileWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	f   *os.File
	err error
}

func (fw *fileWriter) client() *http.Client { return &http.Client{Transport: fw} }

func (fw *fileWriter) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	var msg proto.Message
	switch req.URL.Path {
	case "/v1/traces":
		msg = &coltrace.ExportTraceServiceRequest{}
	case "/v1/metrics":
		msg = &colmetrics.ExportMetricsServiceRequest{}
	case "/v1/logs":
		msg = &collogs.ExportLogsServiceRequest{}
	default:
		return nil, fmt.Errorf("otlp-file: unexpected path %s", req.URL.Path)
	}
	if err := proto.Unmarshal(body, msg); err != nil {
		return nil, fmt.Errorf("otlp-file: %w", err)
	}
	line, err := otlpJSON(msg)
	if err != nil {
		return nil, fmt.Errorf("otlp-file: %w", err)
	}
	fw.mu.Lock()
	if fw.err == nil {
		if _, err := fw.w.Write(append(line, '\n')); err != nil {
			fw.err = err
		}
	}
	err = fw.err
	fw.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/x-protobuf"}}, Body: io.NopCloser(bytes.NewReader(nil)), Request: req}, nil
}

// Close writes out what is buffered and closes the file.
func (fw *fileWriter) Close() error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	err := fw.w.Flush()
	if cerr := fw.f.Close(); err == nil {
		err = cerr
	}
	if fw.err != nil {
		return fw.err
	}
	return err
}

// otlpJSON is msg in the OTLP/JSON encoding: protobuf's JSON mapping with lowerCamelCase
// names and enums as numbers, but trace and span ids as hex strings, not base64, on one line.
func otlpJSON(msg proto.Message) ([]byte, error) {
	if b, ok := quickJSON(msg); ok {
		return b, nil
	}
	return slowJSON(msg)
}

// slowJSON is otlpJSON by protojson, for any message.
func slowJSON(msg proto.Message) ([]byte, error) {
	b, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(msg)
	if err != nil {
		return nil, err
	}
	return hexIDs(b), nil
}

// hexIDs rewrites b, valid JSON, in one pass: the string value of every member named traceId,
// spanId or parentSpanId, at any depth, from base64 to hex (left as it is when it is not
// base64), and the blanks between tokens left out (protojson puts some at random).
func hexIDs(b []byte) []byte {
	out := make([]byte, 0, len(b))
	idValue := false // the last key was an id's: a string value next is one
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case jsonscan.IsSpace(c):
			i++
			continue
		case c != '"':
			if c != ':' {
				idValue = false
			}
			out = append(out, c)
			i++
			continue
		}
		end, ok := jsonscan.QuickStringEnd(b, i+1)
		if !ok {
			return append(out, b[i:]...)
		}
		str := b[i:end]
		j := jsonscan.SkipSpace(b, end)
		if j < len(b) && b[j] == ':' {
			idValue = isIDKey(str)
			out = append(out, str...)
			i = end
			continue
		}
		if idValue {
			if raw, err := base64.StdEncoding.DecodeString(unquoted(str)); err == nil {
				out = append(out, '"')
				out = hex.AppendEncode(out, raw)
				out = append(out, '"')
				idValue, i = false, end
				continue
			}
		}
		idValue = false
		out = append(out, str...)
		i = end
	}
	return out
}

func isIDKey(q []byte) bool {
	k := unquoted(q)
	return k == "traceId" || k == "spanId" || k == "parentSpanId"
}

// unquoted is the JSON string q, quotes included, decoded.
func unquoted(q []byte) string {
	if bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1])
	}
	s, _ := jsonscan.Unquote(q)
	return s
}

// parseHeaders reads headers written as OTEL_EXPORTER_OTLP_HEADERS writes them
// (name=value,name=value, values URL-encoded), or one name=value a line, as --headers-file
// holds them (blank lines and lines starting with # skipped).
func parseHeaders(s string, lines bool, into map[string]string) error {
	sep := func(r rune) bool { return r == ',' }
	if lines {
		sep = func(r rune) bool { return r == '\n' }
	}
	for _, line := range strings.FieldsFunc(s, sep) {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return fmt.Errorf("%q is not name=value", cutForError(line))
		}
		if v, err := url.PathUnescape(strings.TrimSpace(value)); err == nil {
			value = v
		}
		into[name] = strings.TrimSpace(value)
	}
	return nil
}

// cutForError shows no more of a header line than its name: its value may be a secret.
func cutForError(line string) string {
	if i := strings.IndexAny(line, ":= \t"); i >= 0 {
		return line[:i] + "…"
	}
	if len(line) > 12 {
		return line[:12] + "…"
	}
	return line
}
