package jsonscan

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkScanCorpus scans the lines of a bench corpus (FR_BENCH_CORPUS, e.g.
// bench/corpus/stream-s1-200MB.jsonl; the first 64 MB of it), as fr-stream classifies them.
func BenchmarkScanCorpus(b *testing.B) {
	path := os.Getenv("FR_BENCH_CORPUS")
	if path == "" {
		b.Skip("FR_BENCH_CORPUS not set")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if len(data) > 64<<20 {
		data = data[:bytes.LastIndexByte(data[:64<<20], '\n')+1]
	}
	lines := bytes.Split(data, []byte("\n"))
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		for _, l := range lines {
			Scan(l)
		}
	}
}

func BenchmarkBlockMasks(b *testing.B) {
	data := bytes.Repeat([]byte("abcdefgh"), 1<<20)
	b.SetBytes(int64(len(data)))
	var s uint64
	for range b.N {
		var m [8]blockMask
		for i := 0; i+512 <= len(data); i += 512 {
			blockMasks(data[i:], m[:])
			s += m[7].quote
		}
	}
	sink = s
}

func BenchmarkIndexByte(b *testing.B) {
	data := bytes.Repeat([]byte("abcdefgh"), 1<<20)
	b.SetBytes(int64(len(data)))
	for range b.N {
		sink = uint64(bytes.IndexByte(data, '"'))
	}
}

var sink uint64
