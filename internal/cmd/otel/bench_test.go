package otel

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/fuseraft/fr/internal/arrival"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

type nopSink struct{}

func (nopSink) span(*span)                                    {}
func (nopSink) log(*logRecord)                                {}
func (nopSink) metric(string, float64, ...attribute.KeyValue) {}

// BenchmarkCorpus reads $FR_OTEL_CORPUS (bench/corpus's session) through the line reader and
// the mapping, without an exporter: what fr-otel costs before the SDK.
func BenchmarkCorpus(b *testing.B) {
	name := os.Getenv("FR_OTEL_CORPUS")
	if name == "" {
		b.Skip("FR_OTEL_CORPUS not set")
	}
	data, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	at := time.Now()
	for b.Loop() {
		m := newMapper(mapOptions{}, nopSink{})
		in := m.input("bench")
		lr := newLineReader(bytes.NewReader(data), bufio.NewWriter(io.Discard), 256<<20)
		for {
			line, _, err := lr.next()
			if err != nil {
				break
			}
			in.line(line, at)
		}
		m.finishAll()
	}
}

// BenchmarkCorpusExport is BenchmarkCorpus through the SDK to a collector where nothing
// listens: what fr-otel costs in a pipe.
func BenchmarkCorpusExport(b *testing.B) {
	name := os.Getenv("FR_OTEL_CORPUS")
	if name == "" {
		b.Skip("FR_OTEL_CORPUS not set")
	}
	st, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		f, _ := os.Open(name)
		s := cmdutil.Streams{In: f, Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}
		Run(context.Background(), s, []string{"fr-otel", "--endpoint", "http://127.0.0.1:9", "--shutdown-timeout", "100ms"})
		f.Close()
	}
}

// BenchmarkCorpusFile is BenchmarkCorpus through the SDK to --otlp-file: every record encoded
// as OTLP JSON.
func BenchmarkCorpusFile(b *testing.B) {
	name := os.Getenv("FR_OTEL_CORPUS")
	if name == "" {
		b.Skip("FR_OTEL_CORPUS not set")
	}
	st, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	out := b.TempDir() + "/otlp.jsonl"
	for b.Loop() {
		f, _ := os.Open(name)
		s := cmdutil.Streams{In: f, Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}
		Run(context.Background(), s, []string{"fr-otel", "--otlp-file", out})
		f.Close()
	}
}

// BenchmarkCorpusStages is BenchmarkCorpus a stage at a time: the copy alone, then each line
// validated (wire.ParseLine), then its arrival stamp looked for, then the mapping.
func BenchmarkCorpusStages(b *testing.B) {
	name := os.Getenv("FR_OTEL_CORPUS")
	if name == "" {
		b.Skip("FR_OTEL_CORPUS not set")
	}
	data, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	at := time.Now()
	for _, st := range []struct {
		name string
		line func(in *input, l []byte)
	}{
		{"copy", func(*input, []byte) {}},
		{"validate", func(_ *input, l []byte) { wire.ParseLine(l) }},
		{"stamp", func(_ *input, l []byte) { wire.ParseLine(l); arrival.Read(l) }},
		{"map", func(in *input, l []byte) { arrival.Read(l); in.line(l, at) }},
	} {
		b.Run(st.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				m := newMapper(mapOptions{}, nopSink{})
				in := m.input("bench")
				lr := newLineReader(bytes.NewReader(data), bufio.NewWriter(io.Discard), 256<<20)
				for {
					line, _, err := lr.next()
					if err != nil {
						break
					}
					st.line(in, line)
				}
				m.finishAll()
			}
		})
	}
}
