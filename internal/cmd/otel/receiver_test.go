package otel

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/fuseraft/fr/internal/arrival"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

// received is what an OTLP receiver in the test was sent.
type received struct {
	mu      sync.Mutex
	traces  []*coltrace.ExportTraceServiceRequest
	metrics []*colmetrics.ExportMetricsServiceRequest
	logs    []*collogs.ExportLogsServiceRequest
}

func (r *received) spans() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, req := range r.traces {
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				out = append(out, ss.Spans...)
			}
		}
	}
	return out
}

func (r *received) metricNames() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := map[string]bool{}
	for _, req := range r.metrics {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					names[m.Name] = true
				}
			}
		}
	}
	return names
}

func (r *received) logRecords() (n int, tied int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, req := range r.logs {
		for _, rl := range req.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				for _, lr := range sl.LogRecords {
					n++
					if len(lr.TraceId) == 16 && len(lr.SpanId) == 8 {
						tied++
					}
				}
			}
		}
	}
	return n, tied
}

func (r *received) serviceName() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, req := range r.traces {
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.Resource.GetAttributes() {
				if a.Key == "service.name" {
					return a.Value.GetStringValue()
				}
			}
		}
	}
	return ""
}

// httpReceiver is an OTLP/HTTP endpoint on loopback.
func httpReceiver(t *testing.T) (*received, string) {
	r := &received{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
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
			http.NotFound(w, req)
			return
		}
		if err := proto.Unmarshal(body, msg); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		r.mu.Lock()
		switch m := msg.(type) {
		case *coltrace.ExportTraceServiceRequest:
			r.traces = append(r.traces, m)
		case *colmetrics.ExportMetricsServiceRequest:
			r.metrics = append(r.metrics, m)
		case *collogs.ExportLogsServiceRequest:
			r.logs = append(r.logs, m)
		}
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

type grpcTraces struct {
	coltrace.UnimplementedTraceServiceServer
	r *received
}

func (g grpcTraces) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	g.r.mu.Lock()
	g.r.traces = append(g.r.traces, req)
	g.r.mu.Unlock()
	return &coltrace.ExportTraceServiceResponse{}, nil
}

type grpcMetrics struct {
	colmetrics.UnimplementedMetricsServiceServer
	r *received
}

func (g grpcMetrics) Export(_ context.Context, req *colmetrics.ExportMetricsServiceRequest) (*colmetrics.ExportMetricsServiceResponse, error) {
	g.r.mu.Lock()
	g.r.metrics = append(g.r.metrics, req)
	g.r.mu.Unlock()
	return &colmetrics.ExportMetricsServiceResponse{}, nil
}

type grpcLogs struct {
	collogs.UnimplementedLogsServiceServer
	r *received
}

func (g grpcLogs) Export(_ context.Context, req *collogs.ExportLogsServiceRequest) (*collogs.ExportLogsServiceResponse, error) {
	g.r.mu.Lock()
	g.r.logs = append(g.r.logs, req)
	g.r.mu.Unlock()
	return &collogs.ExportLogsServiceResponse{}, nil
}

// grpcReceiver is an OTLP/gRPC endpoint on loopback.
func grpcReceiver(t *testing.T) (*received, string) {
	r := &received{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(srv, grpcTraces{r: r})
	colmetrics.RegisterMetricsServiceServer(srv, grpcMetrics{r: r})
	collogs.RegisterLogsServiceServer(srv, grpcLogs{r: r})
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return r, "http://" + ln.Addr().String()
}

// runOtel runs fr-otel in process over stdin and returns its stdout, stderr and exit code.
func runOtel(t *testing.T, stdin io.Reader, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	s := cmdutil.Streams{In: stdin, Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound(60*time.Second))
	defer cancel()
	code := Run(ctx, s, append([]string{"fr-otel"}, args...))
	return out.String(), errb.String(), code
}

func sessionPath(name string) string { return filepath.Join("testdata", "sessions", name) }

func concat(t *testing.T, names ...string) string {
	var b strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(sessionPath(n))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// expectSpans is what the mapping makes of the named sessions, read as fr-otel reads them.
func expectSpans(t *testing.T, names ...string) *recorder {
	var inputs [][]string
	for _, n := range names {
		inputs = append(inputs, readSession(t, n))
	}
	return mapLines(t, mapOptions{}, inputs...)
}

// checkReceived checks the spans a receiver got against the mapping's, and the trace's shape.
func checkReceived(t *testing.T, r *received, want *recorder) {
	t.Helper()
	got := r.spans()
	if len(got) != len(want.spans) {
		t.Fatalf("received %d spans, want %d", len(got), len(want.spans))
	}
	byID := map[string]*tracepb.Span{}
	for _, s := range got {
		byID[string(s.SpanId)] = s
	}
	for _, w := range want.spans {
		s := byID[string(w.id[:])]
		if s == nil {
			t.Errorf("span %q (%s) not received", w.name, w.id)
			continue
		}
		if s.Name != w.name || !bytes.Equal(s.TraceId, w.traceID[:]) {
			t.Errorf("span %s: received %q in trace %x, want %q in %s", w.id, s.Name, s.TraceId, w.name, w.traceID)
		}
		if w.parent.IsValid() != (len(s.ParentSpanId) == 8) || (w.parent.IsValid() && !bytes.Equal(s.ParentSpanId, w.parent[:])) {
			t.Errorf("span %q: parent %x, want %s", w.name, s.ParentSpanId, w.parent)
		}
		if len(s.Links) != len(w.links) {
			t.Errorf("span %q: %d links, want %d", w.name, len(s.Links), len(w.links))
		}
		for _, l := range s.Links {
			if byID[string(l.SpanId)] == nil {
				t.Errorf("span %q links to a span not received", w.name)
			}
		}
		if wantCode := map[codes.Code]tracepb.Status_StatusCode{codes.Unset: tracepb.Status_STATUS_CODE_UNSET,
			codes.Ok: tracepb.Status_STATUS_CODE_OK, codes.Error: tracepb.Status_STATUS_CODE_ERROR}[w.status]; s.Status.GetCode() != wantCode {
			t.Errorf("span %q: status %v, want %v", w.name, s.Status.GetCode(), w.status)
		}
		attrs := map[string]string{}
		for _, a := range s.Attributes {
			attrs[a.Key] = a.Value.String()
		}
		for _, a := range w.attrs {
			if _, ok := attrs[string(a.Key)]; !ok {
				t.Errorf("span %q: attribute %s not received", w.name, a.Key)
			}
		}
		if s.StartTimeUnixNano == 0 || s.EndTimeUnixNano < s.StartTimeUnixNano {
			t.Errorf("span %q: times %d..%d", w.name, s.StartTimeUnixNano, s.EndTimeUnixNano)
		}
	}
}

// allSessions are sessions recorded from fr-sim in each of its modes. run-failed.jsonl is the
// same session as run.jsonl (the scenario's session id), so it is sent on its own.
var allSessions = []string{"chat.jsonl", "run.jsonl", "run-unstarted.jsonl", "daemon.jsonl", "fleet.jsonl"}

func TestReceiverHTTP(t *testing.T) {
	for _, group := range [][]string{allSessions, {"run-failed.jsonl"}} {
		r, url := httpReceiver(t)
		args := []string{"--endpoint", url, "--service-name", "ci-agent"}
		for _, n := range group {
			args = append(args, sessionPath(n))
		}
		out, stderr, code := runOtel(t, strings.NewReader(""), nil, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if want := concat(t, group...); out != want {
			t.Fatalf("stdout is not the input, byte for byte")
		}
		if strings.Contains(stderr, "not delivered") {
			t.Errorf("stderr: %s", stderr)
		}
		if !strings.Contains(stderr, "without frArrivedAt") {
			t.Errorf("no word on the missing arrival times: %s", stderr)
		}
		checkReceived(t, r, expectSpans(t, group...))
		if got := r.serviceName(); got != "ci-agent" {
			t.Errorf("service.name %q", got)
		}
		names := r.metricNames()
		for _, m := range []string{metricTokens, metricDuration, metricToolCalls, metricApprovals, metricSessions} {
			if !names[m] {
				t.Errorf("metric %s not received (got %v)", m, names)
			}
		}
		// every event but the daemon's hello (no session yet) is tied to a span
		hellos := strings.Count(concat(t, group...), `"type":"hello"`)
		n, tied := r.logRecords()
		if n == 0 || tied != n-hellos {
			t.Errorf("%d log records, %d tied to a span; want all but the %d hello", n, tied, hellos)
		}
	}
}

func TestReceiverGRPC(t *testing.T) {
	r, url := grpcReceiver(t)
	in, err := os.Open(sessionPath("chat.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	env := map[string]string{"TRACEPARENT": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	out, stderr, code := runOtel(t, in, env, "--protocol", "grpc", "--endpoint", url)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if out != concat(t, "chat.jsonl") {
		t.Fatalf("stdout is not the input, byte for byte")
	}
	spans := r.spans()
	if len(spans) != len(expectSpans(t, "chat.jsonl").spans) {
		t.Fatalf("received %d spans", len(spans))
	}
	for _, s := range spans {
		if x := strings.ToLower(strings.TrimSpace(string(hexOf(s.TraceId)))); x != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Fatalf("span %q in trace %s, not TRACEPARENT's", s.Name, x)
		}
		if s.Name == "invoke_agent" && string(hexOf(s.ParentSpanId)) != "00f067aa0ba902b7" {
			t.Errorf("root's parent %s, want TRACEPARENT's span", hexOf(s.ParentSpanId))
		}
	}
	if !r.metricNames()[metricTokens] {
		t.Errorf("no token usage metric over gRPC")
	}
	if n, _ := r.logRecords(); n == 0 {
		t.Errorf("no logs over gRPC")
	}
}

func hexOf(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

// silentListener accepts connections and never answers on them: a collector that hangs.
func silentListener(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + ln.Addr().String()
}

// refusedAddress is a loopback address where nothing listens.
func refusedAddress(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func TestDeadCollector(t *testing.T) {
	input := concat(t, "chat.jsonl", "run.jsonl") + "a line that is not JSON\n" + `{"type":"token","text":"no line end"}`
	cases := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"http refused", func(t *testing.T) []string { return []string{"--endpoint", refusedAddress(t)} }},
		{"http silent", func(t *testing.T) []string { return []string{"--endpoint", silentListener(t)} }},
		{"grpc refused", func(t *testing.T) []string { return []string{"--protocol", "grpc", "--endpoint", refusedAddress(t)} }},
		{"grpc silent", func(t *testing.T) []string { return []string{"--protocol", "grpc", "--endpoint", silentListener(t)} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append(c.args(t), "--shutdown-timeout", "300ms")
			out, stderr, code := runOtel(t, strings.NewReader(input), nil, args...)
			if out != input {
				t.Errorf("stdout is not stdin byte for byte")
			}
			if code != 0 {
				t.Errorf("exit %d, want 0 (the pipe's): %s", code, stderr)
			}
			if !strings.Contains(stderr, "fr-otel: warning: not delivered: ") {
				t.Errorf("nothing said of what was not delivered: %q", stderr)
			}
			_, _, code = runOtel(t, strings.NewReader(input), nil, append(args, "--strict")...)
			if code != 1 {
				t.Errorf("--strict: exit %d, want 1", code)
			}
		})
	}
}

// TestDeadCollectorNeverStalls sends lines one at a time through real pipes, each only after
// the one before came out, to a collector that accepts and never answers: a pass-through that
// waited on the export would stop here (and the test's bound would end it).
func TestDeadCollectorNeverStalls(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	s := cmdutil.Streams{In: inR, Out: outW, Err: &errb, Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound(60*time.Second))
	defer cancel()
	go func() {
		done <- Run(ctx, s, []string{"fr-otel", "--endpoint", silentListener(t), "--shutdown-timeout", "300ms"})
		outW.Close()
	}()
	br := bufio.NewReader(outR)
	// more log records than the SDK's queue holds (2,048), so some are dropped
	lines := []string{`{"type":"ready","protocolVersion":1,"sessionId":"stall","model":"m","title":null,"autoTitle":null,"midTurnCommands":[]}`}
	for i := 0; i < 3000; i++ {
		lines = append(lines, `{"type":"info","text":"still here"}`, "noise")
	}
	for i, l := range lines {
		if _, err := io.WriteString(inW, l+"\n"); err != nil {
			t.Fatal(err)
		}
		got, err := br.ReadString('\n')
		if err != nil || got != l+"\n" {
			t.Fatalf("line %d: got %q, %v", i, got, err)
		}
	}
	inW.Close()
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Errorf("more output than input: %q", rest)
	}
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "log records") {
		t.Errorf("dropped log records not counted: %s", errb.String())
	}
}

func TestOTLPFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "out.otlp.jsonl")
	out, stderr, code := runOtel(t, strings.NewReader(""), nil, "--otlp-file", file, sessionPath("run.jsonl"))
	if code != 0 || out != concat(t, "run.jsonl") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := expectSpans(t, "run.jsonl")
	root := want.named("invoke_workflow")[0]
	text := string(b)
	for _, s := range []string{`"resourceSpans"`, `"resourceMetrics"`, `"resourceLogs"`, `"traceId":"` + root.traceID.String() + `"`,
		`"spanId":"` + root.id.String() + `"`, `"name":"invoke_agent coder"`, `"kind":1`} {
		if !strings.Contains(text, s) {
			t.Errorf("OTLP JSON lacks %s", s)
		}
	}
	for i, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Errorf("line %d is not a JSON object", i+1)
		}
	}
}

func TestUsage(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--signals", "traces,spans"}, nil, `unknown signal "spans"`},
		{[]string{"--protocol", "http/json"}, nil, "--protocol"},
		{nil, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "--otlp-file FILE writes OTLP JSON"},
		{[]string{"--otlp-file", "x", "--endpoint", "http://127.0.0.1:1"}, nil, "choose one"},
		{[]string{"--headers-file", "/nonexistent/headers"}, nil, "--headers-file"},
		{[]string{"--audit", "testdata/sessions/run.jsonl"}, nil, "not a record of fr-approve's audit log"},
		{[]string{"--audit", "testdata"}, nil, "is a directory"},
	}
	for _, c := range cases {
		_, stderr, code := runOtel(t, strings.NewReader(""), c.env, c.args...)
		if code != cmdutil.ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 and %q", c.args, c.env, code, stderr, c.want)
		}
	}
}

func TestHeadersFile(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		auth = append(auth, req.Header.Get("Authorization")+"|"+req.Header.Get("X-Team"))
		mu.Unlock()
	}))
	defer srv.Close()
	hf := filepath.Join(t.TempDir(), "headers")
	os.WriteFile(hf, []byte("# the collector's token\nAuthorization=Bearer abc,def\n"), 0o600)
	env := map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-team=agents"}
	_, stderr, code := runOtel(t, strings.NewReader(""), env, "--endpoint", srv.URL, "--headers-file", hf, sessionPath("run-unstarted.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) == 0 {
		t.Fatal("nothing sent")
	}
	for _, a := range auth {
		if a != "Bearer abc,def|agents" {
			t.Errorf("headers sent: %q", a)
		}
	}
}

func TestUnsupportedVersion(t *testing.T) {
	in := `{"type":"ready","protocolVersion":99,"sessionId":"v","task":"t","config":"c","resumed":false,"agents":["a"]}` + "\n"
	out, stderr, code := runOtel(t, strings.NewReader(in), nil, "--otlp-file", filepath.Join(t.TempDir(), "f"))
	if out != in || code != cmdutil.ExitProtocol || !strings.Contains(stderr, "--any-version") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	out, _, code = runOtel(t, strings.NewReader(in), nil, "--any-version", "--otlp-file", filepath.Join(t.TempDir(), "f"))
	if out != in || code != 0 {
		t.Errorf("--any-version: exit %d", code)
	}
}

// TestReplayArrivalTimes: a recording made with --arrival-time is exported at its own
// spacing, whenever it is read, and without the warning about missing times.
func TestReplayArrivalTimes(t *testing.T) {
	start := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	st := arrival.New(nil)
	var rec strings.Builder
	for i, l := range readSession(t, "run.jsonl") {
		rec.Write(st.Add([]byte(l), start.Add(time.Duration(i)*time.Second)))
		rec.WriteByte('\n')
	}
	r, url := httpReceiver(t)
	f := filepath.Join(t.TempDir(), "run.jsonl")
	os.WriteFile(f, []byte(rec.String()), 0o644)
	out, stderr, code := runOtel(t, strings.NewReader(""), nil, "--endpoint", url, f)
	if code != 0 || out != rec.String() {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "without frArrivedAt") {
		t.Errorf("warned about arrival times the recording has: %s", stderr)
	}
	lines := len(readSession(t, "run.jsonl"))
	for _, s := range r.spans() {
		switch s.Name {
		case "invoke_workflow":
			if got, want := time.Unix(0, int64(s.StartTimeUnixNano)).UTC(), start; !got.Equal(want) {
				t.Errorf("root starts at %v, want %v", got, want)
			}
			if got, want := time.Unix(0, int64(s.EndTimeUnixNano)).UTC(), start.Add(time.Duration(lines-1)*time.Second); !got.Equal(want) {
				t.Errorf("root ends at %v, want %v", got, want)
			}
		case "invoke_agent planner": // agent_starting is line 2, its agent_message line 4
			if d := time.Duration(s.EndTimeUnixNano - s.StartTimeUnixNano); d != 2*time.Second {
				t.Errorf("planner's turn lasted %v, want 2s", d)
			}
		}
	}
}
