// Package otel implements fr-otel: a session's JSONL passed on byte for byte, as tee passes it,
// and exported as OpenTelemetry traces, metrics and logs over OTLP.
package otel

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"

	"github.com/fuseraft/fr/internal/arrival"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/prices"
	"github.com/fuseraft/fr/internal/redact"
	"github.com/fuseraft/fr/pkg/wire"
)

const prog = "fr-otel"

const description = `fr-otel reads a session's JSONL (fr-stream's, fr-attach's or a fleet's events: one session
or many, told apart by session id; stdin or FILEs) and passes every line to stdout byte for
byte, as tee would: lines that are not JSON pass too. What it reads it exports by OTLP as
OpenTelemetry traces, metrics and logs, named after the GenAI semantic conventions:

   traces    one trace per session: a root span (invoke_agent for a chat, invoke_workflow for
             a run or a daemon's task; error status when it failed), a span per turn (chat
             MODEL) or agent turn (invoke_agent AGENT) with its gen_ai.usage.* tokens, a span
             per tool call (execute_tool TOOL, under the turn that made it, status from
             the tool's result where the protocol reports it), a span per approval prompt
             (approval KIND, linked to the tool call it gates) and span events for the rest
   metrics   gen_ai.client.token.usage (by gen_ai.token.type), gen_ai.client.operation.duration,
             fr.tool.calls and fr.approvals by outcome, fr.sessions, and fr.cost (USD) with
             --prices
   logs      every event as a log record (event name fuseraft.TYPE) tied to the span it
             happened in; a turn's streamed chunks (token, thinking) as one fuseraft.reply
             record with their count

The trace id is $TRACEPARENT's when set (a CI job's trace), else derived from the session id,
so every fr process exporting the same session lands in the same trace; span ids are derived
the same way, so the same session exported twice gives the same spans.

TIMES
   Protocol v1 carries no time on its events, so a span's times are when its lines arrived:
   read live, that is now; read from a recording, fr-otel takes the "frArrivedAt" field that
   fr-stream --arrival-time and fr-attach --arrival-time add to each line, and the trace keeps
   the recording's own spacing. A recording without the field is exported with the times it is
   read at (all within moments), and fr-otel says so on stderr.

CONTENT
   Off by default: no prompt text, reply, tool arguments or output, approval summary or task
   text leaves the machine. --capture-content adds them (as gen_ai.tool.call.arguments,
   gen_ai.tool.call.result, fr.reply, fr.task, and each log record's body), redacted as
   fr-report redacts (see --redact-env, --redact-pattern) and cut at 64 KiB each.

WHERE IT GOES
   By OTLP over HTTP (http/protobuf, the default) or gRPC, to the collector the standard
   OTEL_* variables name (see ENVIRONMENT), as any OpenTelemetry SDK would; the flags of the
   same meaning win over them. Headers that hold secrets come from the environment or from
   --headers-file (one name=value a line), never from the command line. --otlp-file FILE
   writes OTLP JSON instead (one export request a line, as the OpenTelemetry Collector's file
   exporter writes it), for CI artifacts and offline use.

A COLLECTOR THAT IS DOWN
   never blocks or slows the pipe: lines are passed on before they are looked at, exports are
   batched in bounded queues by the SDK's own goroutines, and what does not fit is dropped.
   At the end of the input stdout is closed (the next stage ends), what is queued gets
   --shutdown-timeout to leave, and what was not delivered is counted on stderr. The exit
   status is the pipe's, not the exporter's, unless --strict.`

const environment = `ENVIRONMENT
   TRACEPARENT, TRACESTATE            the caller's trace (W3C trace context): every session
                                      becomes a child of its span
   OTEL_EXPORTER_OTLP_ENDPOINT        collector base URL (default http://localhost:4318, or
                                      http://localhost:4317 for grpc); per signal:
                                      OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_ENDPOINT
   OTEL_EXPORTER_OTLP_PROTOCOL        http/protobuf or grpc (and the per-signal forms)
   OTEL_EXPORTER_OTLP_HEADERS         headers to send, name=value,... (and per signal)
   OTEL_EXPORTER_OTLP_TIMEOUT, _COMPRESSION, _CERTIFICATE, _INSECURE   read by the exporters
   OTEL_SERVICE_NAME                  service.name (default fuseraft)
   OTEL_RESOURCE_ATTRIBUTES           more resource attributes, key=value,...
   OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER, OTEL_LOGS_EXPORTER   none turns one off
   OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BLRP_MAX_QUEUE_SIZE   spans and log records held while
                                      the collector is slow (default 2048 each); past it they
                                      are dropped and counted
   OTEL_METRIC_EXPORT_INTERVAL        how often metrics are sent (default 60000 ms; always
                                      once at the end)
   FUSERAFT_SERVE_TOKEN               with --capture-content: its value is redacted`

const example = `EXAMPLES
   # a CI run's session in the job's trace, its JSONL kept as an artifact
   fr-stream run -c team.yaml "$TASK" | fr-otel | tee session.jsonl | fr-report > summary.md

   # a recording, at its own spacing, to a collector over gRPC
   fr-stream --arrival-time repl < prompts.txt > chat.jsonl
   OTEL_EXPORTER_OTLP_PROTOCOL=grpc fr-otel chat.jsonl > /dev/null

   # offline: OTLP JSON for later
   fr-otel --otlp-file session.otlp.jsonl session.jsonl > /dev/null`

// Run is fr-otel's whole command line.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	cmdutil.QuietOnClosedStdout(s)
	return cmdutil.RunApp(ctx, App(s), s, args)
}

var signalNames = []string{"traces", "metrics", "logs"}

// App is fr-otel's definition: its flags and help, for Run and the docs.
func App(s cmdutil.Streams) *cli.App {
	app := cmdutil.NewApp(s, prog, "pass a session's JSONL on and export it as OpenTelemetry traces, metrics and logs")
	app.UsageText = "fr-otel [--endpoint URL] [--protocol http/protobuf|grpc] [--otlp-file FILE] [--capture-content] [FILE...]"
	app.ArgsUsage = "[FILE...]"
	app.Description = description + "\n\n" + environment + "\n\n" + example
	app.Flags = []cli.Flag{
		&cli.StringFlag{Name: "endpoint", Usage: "collector base `URL` (OTEL_EXPORTER_OTLP_ENDPOINT); http://HOST:4318 for http/protobuf, http://HOST:4317 for grpc"},
		cmdutil.Enum("protocol", protocols, "", "`PROTOCOL` of the export: {values} (OTEL_EXPORTER_OTLP_PROTOCOL; default http/protobuf)"),
		&cli.StringFlag{Name: "headers-file", Usage: "`FILE` of headers to send (one name=value a line), for secrets: never on the command line"},
		&cli.StringFlag{Name: "otlp-file", Usage: "write OTLP JSON to `FILE` instead of sending it"},
		&cli.StringFlag{Name: "signals", Value: "traces,metrics,logs", Usage: "`LIST` of signals to export: traces, metrics, logs"},
		&cli.StringFlag{Name: "service-name", Usage: "service.name of the resource (OTEL_SERVICE_NAME; default fuseraft)"},
		&cli.StringFlag{Name: "resource-attributes", Usage: "more resource attributes, `KEY=VALUE,...` (OTEL_RESOURCE_ATTRIBUTES)"},
		&cli.BoolFlag{Name: "capture-content", Usage: "export content (replies, tool arguments and output, prompts), redacted; off by default"},
		&cli.StringSliceFlag{Name: "redact-env", Usage: "with --capture-content: redact the value of environment variable `NAME` (repeatable)"},
		&cli.StringSliceFlag{Name: "redact-pattern", Usage: "with --capture-content: redact matches of `REGEX` (RE2 syntax; repeatable)"},
		&cli.BoolFlag{Name: "no-redact", Usage: "with --capture-content: leave secrets in"},
		&cli.StringFlag{Name: "prices", Usage: "price table `FILE` (as fr-report's): the fr.cost metric and each turn's fr.cost.usd"},
		&cli.StringSliceFlag{Name: "audit", Usage: "fr-approve's audit log `FILE`: each approval's decision and decider (repeatable)"},
		&cli.DurationFlag{Name: "shutdown-timeout", Value: 5 * time.Second, Usage: "how long what is still queued at the end of the input may take to leave"},
		&cli.BoolFlag{Name: "strict", Usage: "exit 1 when some telemetry was not delivered"},
		&cli.BoolFlag{Name: "any-version", Usage: "read a stream of an unsupported protocolVersion, with a warning"},
	}
	app.Action = func(c *cli.Context) error {
		o, err := optionsFrom(c, s)
		if err != nil {
			return err
		}
		return run(c.Context, s, o)
	}
	return cmdutil.Finish(cmdutil.DeclareExitCodes(app, exitCodes))
}

// options are fr-otel's command line, read once.
type options struct {
	files      []string
	export     exportConfig
	res        []attribute.KeyValue
	mapping    mapOptions
	shutdown   time.Duration
	strict     bool
	anyVersion bool
}

// optionsFrom reads fr-otel's command line, once; the helpers it calls take plain values.
func optionsFrom(c *cli.Context, s cmdutil.Streams) (*options, error) {
	o := &options{files: c.Args().Slice(), shutdown: c.Duration("shutdown-timeout"), strict: c.Bool("strict"),
		anyVersion: c.Bool("any-version")}
	warn := func(format string, args ...any) { cmdutil.Warnf(s.Err, prog, format, args...) }
	o.mapping.capture = c.Bool("capture-content")
	o.mapping.warn = warn

	export, err := exportFrom(c.String("signals"), c.String("protocol"), c.String("endpoint"), c.String("otlp-file"),
		c.String("headers-file"), s.Env, warn)
	if err != nil {
		return nil, err
	}
	o.export = *export
	if o.res, err = resourceFrom(c.String("service-name"), c.String("resource-attributes"), s.Env); err != nil {
		return nil, err
	}
	if o.mapping.capture {
		if o.mapping.red, err = redactorFrom(c.Bool("no-redact"), c.StringSlice("redact-env"), c.StringSlice("redact-pattern"), s.Env, warn); err != nil {
			return nil, err
		}
	}
	if name := c.String("prices"); name != "" {
		pt, err := prices.Load(name)
		if err != nil {
			return nil, cmdutil.WithHint(cmdutil.Usagef("prices: %v", err), "see 'fr-report --help', section COST")
		}
		o.mapping.prices = pt
	}
	if o.mapping.audit, err = auditFrom(c.StringSlice("audit")); err != nil {
		return nil, err
	}
	o.mapping.parent = parentFrom(s.Env, warn)
	return o, nil
}

// signalsOn are the signals to export: list (--signals), less those OTEL_*_EXPORTER=none
// turns off.
func signalsOn(list string, env func(string) string, warn func(string, ...any)) (map[string]bool, error) {
	on := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(signalNames, name) {
			return nil, cmdutil.WithHint(cmdutil.Usagef("--signals: unknown signal %q", name), "the signals are traces, metrics and logs")
		}
		on[name] = true
	}
	for _, name := range signalNames {
		v := strings.TrimSpace(env("OTEL_" + strings.ToUpper(name) + "_EXPORTER"))
		switch v {
		case "", "otlp":
		case "none":
			on[name] = false
		default:
			warn("OTEL_%s_EXPORTER=%s: fr-otel exports by OTLP only; using otlp", strings.ToUpper(name), v)
		}
	}
	return on, nil
}

// protocolFor is the protocol of signal's export: flag (--protocol), else the variables'.
func protocolFor(flag, signal string, env func(string) string) (string, error) {
	p := flag
	if p == "" {
		p = strings.TrimSpace(env("OTEL_EXPORTER_OTLP_" + strings.ToUpper(signal) + "_PROTOCOL"))
	}
	if p == "" {
		p = strings.TrimSpace(env("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	if p == "" {
		p = protoHTTP
	}
	if !slices.Contains(protocols, p) {
		err := cmdutil.Usagef("protocol %q is not one fr-otel sends (%s)", p, strings.Join(protocols, ", "))
		if p == "http/json" {
			return "", cmdutil.WithHint(err, "--otlp-file FILE writes OTLP JSON")
		}
		return "", err
	}
	return p, nil
}

// exportFrom is where the telemetry goes and how: the flags of the same meaning, then the
// OTEL_* variables.
func exportFrom(signals, protocol, endpoint, file, headersFile string, env func(string) string, warn func(string, ...any)) (*exportConfig, error) {
	on, err := signalsOn(signals, env, warn)
	if err != nil {
		return nil, err
	}
	e := &exportConfig{endpoint: endpoint, file: file}
	for _, sig := range []struct {
		name string
		cfg  *signalConfig
	}{{"traces", &e.traces}, {"metrics", &e.metrics}, {"logs", &e.logs}} {
		sig.cfg.on = on[sig.name]
		p, err := protocolFor(protocol, sig.name, env)
		if err != nil {
			return nil, err
		}
		sig.cfg.protocol = p
	}
	if e.file != "" && (e.endpoint != "" || protocol != "") {
		return nil, cmdutil.Usagef("--otlp-file with --endpoint or --protocol: choose one")
	}
	if headersFile != "" {
		if e.headers, err = headersFrom(headersFile, env); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// headersFrom are the headers to send with --headers-file name: the variables' headers first,
// as the exporters would have sent them, then the file's.
func headersFrom(name string, env func(string) string) (map[string]string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, cmdutil.Usagef("--headers-file: %v", err)
	}
	headers := map[string]string{}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_HEADERS"} {
		if err := parseHeaders(env(v), false, headers); err != nil {
			return nil, cmdutil.Usagef("%s: %v", v, err)
		}
	}
	if err := parseHeaders(string(b), true, headers); err != nil {
		return nil, cmdutil.Usagef("--headers-file %s: %v", name, err)
	}
	return headers, nil
}

// resourceFrom is the resource's attributes: service.name first, then the others by key.
func resourceFrom(serviceName, resourceAttributes string, env func(string) string) ([]attribute.KeyValue, error) {
	name := serviceName
	if name == "" {
		name = strings.TrimSpace(env("OTEL_SERVICE_NAME"))
	}
	attrs := map[string]string{}
	if err := parseHeaders(env("OTEL_RESOURCE_ATTRIBUTES"), false, attrs); err != nil {
		return nil, cmdutil.Usagef("OTEL_RESOURCE_ATTRIBUTES: %v", err)
	}
	if err := parseHeaders(resourceAttributes, false, attrs); err != nil {
		return nil, cmdutil.Usagef("--resource-attributes: %v", err)
	}
	if name == "" {
		name = attrs["service.name"]
	}
	if name == "" {
		name = "fuseraft"
	}
	delete(attrs, "service.name")
	res := []attribute.KeyValue{attribute.String("service.name", name)}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		res = append(res, attribute.String(k, attrs[k]))
	}
	return res, nil
}

// redactorFrom is what redacts captured content: nil with --no-redact.
func redactorFrom(noRedact bool, envNames, patterns []string, env func(string) string, warn func(string, ...any)) (*redact.Redactor, error) {
	if noRedact {
		if len(envNames) > 0 || len(patterns) > 0 {
			return nil, cmdutil.Usagef("--no-redact with --redact-env or --redact-pattern: choose one")
		}
		return nil, nil
	}
	red, err := redact.Configure(envNames, patterns, env, warn)
	if err != nil {
		return nil, cmdutil.Usagef("%v", err)
	}
	return red, nil
}

// auditFrom reads fr-approve's audit logs: nil without any.
func auditFrom(names []string) (*auditLog, error) {
	if len(names) == 0 {
		return nil, nil
	}
	a := &auditLog{}
	for _, name := range names {
		if err := a.add(name); err != nil {
			return nil, cmdutil.Usagef("--audit: %v", err)
		}
	}
	return a, nil
}

// parentFrom is the caller's trace ($TRACEPARENT), if valid.
func parentFrom(env func(string) string, warn func(string, ...any)) trace.SpanContext {
	tp := strings.TrimSpace(env("TRACEPARENT"))
	if tp == "" {
		return trace.SpanContext{}
	}
	carrier := propagation.MapCarrier{"traceparent": tp, "tracestate": env("TRACESTATE")}
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
	if !sc.IsValid() {
		warn("TRACEPARENT %q is not a W3C traceparent; each session gets a trace of its own", cut(tp, 80))
		return trace.SpanContext{}
	}
	return sc
}

func run(ctx context.Context, s cmdutil.Streams, o *options) error {
	if err := checkInputs(o.files); err != nil {
		return err
	}
	t := &tally{}
	ex, closer, err := newExporters(ctx, o.export)
	if err != nil {
		return cmdutil.Usagef("cannot set up the export: %v", err)
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(o.res...))
	if err != nil {
		return cmdutil.Usagef("resource: %v", err)
	}
	p := newPipeline(ex, res, t)
	k := newSDKSink(p, cmdutil.VersionString(), s.Time)
	m := newMapper(o.mapping, k)

	out := bufio.NewWriterSize(s.Out, 64<<10)
	var all inputResult
	inputs := o.files
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	for _, name := range inputs {
		r := passInput(s, m, out, name)
		if r.readErr != nil {
			all.readErr = r.readErr
		}
		all.badVer = all.badVer || r.badVer
		if r.outErr != nil {
			all.outErr = r.outErr
			break
		}
	}
	m.finishAll()
	// The next stage of the pipe ends now, not after the export.
	if f, ok := s.Out.(*os.File); ok && f == os.Stdout {
		f.Close()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdown)
	serr := p.shutdown(sctx)
	cancel()
	if closer != nil {
		if err := closer.Close(); err != nil && serr == nil {
			serr = err
		}
	}
	undelivered := report(s, t, serr)
	return exitFor(all, undelivered, o)
}

// checkInputs refuses a directory given as an input, before anything is read.
func checkInputs(files []string) error {
	for _, f := range files {
		if f == "-" {
			continue
		}
		if st, err := os.Stat(f); err == nil && st.IsDir() {
			return cmdutil.Usagef("%s is a directory", f)
		}
	}
	return nil
}

// inputResult is what passing one input on came to.
type inputResult struct {
	readErr error // the input could not be read, or not to its end
	badVer  bool  // it holds a session of an unsupported protocolVersion
	outErr  error // stdout could not be written
}

// passInput passes the input name ("-": stdin) on to out line by line, and maps each line.
func passInput(s cmdutil.Streams, m *mapper, out *bufio.Writer, name string) inputResult {
	var r io.Reader = s.In
	label := "stdin"
	recorded := isRegular(s.In)
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			cmdutil.Warnf(s.Err, prog, "%v", err)
			return inputResult{readErr: err}
		}
		defer f.Close()
		r, label, recorded = f, name, true
	}
	in := m.input(label)
	lr := newLineReader(r, out, wire.DefaultMaxLine)
	readErr, missing := passLines(s, lr, in, label, recorded)
	lr.flush()
	if missing {
		cmdutil.Warnf(s.Err, prog, "%s has lines without %s: they are timed by when fr-otel read them, not when they arrived (record with fr-stream or fr-attach --arrival-time)", label, arrival.Field)
	}
	return inputResult{readErr: readErr, badVer: in.badVer, outErr: lr.outErr}
}

// passLines passes lr's lines on and maps them, until the input ends or stdout fails; missing
// tells whether a recording had JSON lines without their arrival time.
func passLines(s cmdutil.Streams, lr *lineReader, in *input, label string, recorded bool) (readErr error, missing bool) {
	for {
		line, tooLong, err := lr.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				cmdutil.Warnf(s.Err, prog, "reading %s: %v", label, err)
				readErr = err
			}
			return readErr, missing
		}
		if tooLong {
			cmdutil.Warnf(s.Err, prog, "%s: a line longer than %d bytes was passed on but not exported", label, wire.DefaultMaxLine)
			continue
		}
		at, ok := arrival.Read(line)
		if !ok {
			at = s.Time()
			if recorded && len(line) > 0 && line[0] == '{' {
				missing = true
			}
		}
		in.line(line, at)
		if lr.outErr != nil {
			return readErr, missing
		}
	}
}

// exitFor is fr-otel's exit: the pipe's, not the exporter's, unless --strict.
func exitFor(r inputResult, undelivered bool, o *options) error {
	switch {
	case r.outErr != nil && !isClosedPipe(r.outErr):
		return cmdutil.Errorf(cmdutil.ExitFailed, "writing stdout: %v", r.outErr)
	case r.badVer && !o.anyVersion:
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitProtocol, "the input holds a session of an unsupported protocolVersion (fr-otel reads %d); it was passed on but not trusted", wire.ProtocolVersion),
			"pass --any-version to export it anyway")
	case undelivered && o.strict:
		return cmdutil.Exit(cmdutil.ExitFailed)
	case r.readErr != nil:
		return cmdutil.Exit(cmdutil.ExitFailed)
	}
	return nil
}

// report says on stderr what was not delivered, and whether anything was not.
func report(s cmdutil.Streams, t *tally, shutdownErr error) bool {
	var parts []string
	if n, d := t.spansMade.Load(), t.spansSent.Load(); n > d {
		parts = append(parts, fmt.Sprintf("%d of %d spans", n-d, n))
	}
	if n, d := t.logsMade.Load(), t.logsSent.Load(); n > d {
		parts = append(parts, fmt.Sprintf("%d of %d log records", n-d, n))
	}
	if f := t.metricFails.Load(); f > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d metric exports", f, t.metricExports.Load()))
	}
	if len(parts) == 0 && shutdownErr == nil {
		return false
	}
	why := t.err()
	if why == nil {
		why = shutdownErr
	}
	msg := "not delivered: " + strings.Join(parts, ", ")
	if len(parts) == 0 {
		msg = "the export did not finish"
	}
	if why != nil {
		msg += " (" + cut(why.Error(), 300) + ")"
	}
	cmdutil.Warnf(s.Err, prog, "%s", msg)
	return true
}

func isRegular(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}

func isClosedPipe(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed)
}
