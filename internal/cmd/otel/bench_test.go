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

// corpus is $FR_OTEL_CORPUS (bench/corpus's session); the benchmark is skipped without it.
func corpus(b *testing.B) string {
	name := os.Getenv("FR_OTEL_CORPUS")
	if name == "" {
		b.Skip("FR_OTEL_CORPUS not set")
	}
	return name
}

// corpusData is the corpus read into memory, counted as each iteration's bytes.
func corpusData(b *testing.B) []byte {
	data, err := os.ReadFile(corpus(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	return data
}

// mapCorpus reads data through the line reader, handing each line to line, b.N times over,
// with a mapper of its own each time.
func mapCorpus(b *testing.B, data []byte, line func(in *input, l []byte)) {
	for b.Loop() {
		m := newMapper(mapOptions{}, nopSink{})
		in := m.input("bench")
		lr := newLineReader(bytes.NewReader(data), bufio.NewWriter(io.Discard), 256<<20)
		for {
			l, _, err := lr.next()
			if err != nil {
				break
			}
			line(in, l)
		}
		m.finishAll()
	}
}

// BenchmarkCorpus reads $FR_OTEL_CORPUS (bench/corpus's session) through the line reader and
// the mapping, without an exporter: what fr-otel costs before the SDK.
func BenchmarkCorpus(b *testing.B) {
	data := corpusData(b)
	at := time.Now()
	mapCorpus(b, data, func(in *input, l []byte) { in.line(l, at) })
}

// runCorpus runs fr-otel with args on the corpus, b.N times.
func runCorpus(b *testing.B, args ...string) {
	name := corpus(b)
	st, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		f, _ := os.Open(name)
		s := cmdutil.Streams{In: f, Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}
		Run(context.Background(), s, append([]string{"fr-otel"}, args...))
		f.Close()
	}
}

// BenchmarkCorpusExport is BenchmarkCorpus through the SDK to a collector where nothing
// listens: what fr-otel costs in a pipe.
func BenchmarkCorpusExport(b *testing.B) {
	runCorpus(b, "--endpoint", "http://127.0.0.1:9", "--shutdown-timeout", "100ms")
}

// BenchmarkCorpusFile is BenchmarkCorpus through the SDK to --otlp-file: every record encoded
// as OTLP JSON.
func BenchmarkCorpusFile(b *testing.B) {
	runCorpus(b, "--otlp-file", b.TempDir()+"/otlp.jsonl")
}

// BenchmarkCorpusStages is BenchmarkCorpus a stage at a time: the copy alone, then each line
// validated (wire.ParseLine), then its arrival stamp looked for, then the mapping.
func BenchmarkCorpusStages(b *testing.B) {
	data := corpusData(b)
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
			mapCorpus(b, data, st.line)
		})
	}
}
