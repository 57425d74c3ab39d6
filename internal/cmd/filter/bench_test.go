package filter

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// BenchmarkCorpus runs fr-filter over $FR_FILTER_CORPUS (a JSONL file) with the filter in
// $FR_FILTER_ARGS; it is skipped without them. make bench measures side by side with jq.
func BenchmarkCorpus(b *testing.B) {
	path := os.Getenv("FR_FILTER_CORPUS")
	if path == "" {
		b.Skip("FR_FILTER_CORPUS not set")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	args := []string{"fr-filter", os.Getenv("FR_FILTER_ARGS")}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		s := cmdutil.Streams{In: bytes.NewReader(data), Out: io.Discard, Err: io.Discard, Getenv: os.Getenv}
		Run(context.Background(), s, args)
	}
}
