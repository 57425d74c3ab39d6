package docexamples

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/fuseraft/fr/internal/cmd/otel"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func init() {
	commands["fr-otel"] = otel.Run
	commands["otlp-receiver"] = otlpReceiver
}

// otlpReceiver is a collector for the recipes' tests: an OTLP/HTTP endpoint on loopback that
// writes one line per span it receives ("TRACEID SPANID PARENTID NAME") to -o, and its URL to
// -ready once it listens. Metrics and logs are taken and dropped. It runs until SIGINT or
// SIGTERM.
//
//	otlp-receiver -ready FILE -o FILE
func otlpReceiver(ctx context.Context, s cmdutil.Streams, args []string) int {
	fs := flag.NewFlagSet("otlp-receiver", flag.ContinueOnError)
	ready := fs.String("ready", "", "file to write the URL to")
	out := fs.String("o", "", "file to append the spans to")
	if err := fs.Parse(args[1:]); err != nil || *ready == "" || *out == "" {
		fmt.Fprintln(s.Err, "usage: otlp-receiver -ready FILE -o FILE")
		return 2
	}
	f, err := os.OpenFile(*out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(s.Err, err)
		return 1
	}
	defer f.Close()
	var mu sync.Mutex
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(s.Err, err)
		return 1
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		if r.URL.Path == "/v1/traces" {
			var req coltrace.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			mu.Lock()
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, sp := range ss.Spans {
						parent := hex.EncodeToString(sp.ParentSpanId)
						if parent == "" {
							parent = "-"
						}
						fmt.Fprintf(f, "%s %s %s %s\n", hex.EncodeToString(sp.TraceId), hex.EncodeToString(sp.SpanId), parent, sp.Name)
					}
				}
			}
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	})}
	if err := os.WriteFile(*ready, []byte("http://"+ln.Addr().String()+"\n"), 0o644); err != nil {
		fmt.Fprintln(s.Err, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	srv.Serve(ln)
	return 0
}
