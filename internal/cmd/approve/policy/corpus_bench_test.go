package policy

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/fuseraft/fr/pkg/wire"
)

// BenchmarkDecideCorpus decides the approval_requests of a recorded stream named by
// FR_APPROVE_CORPUS with the policy named by FR_APPROVE_POLICY (bench/corpus has both).
func BenchmarkDecideCorpus(b *testing.B) {
	corpus, pol := os.Getenv("FR_APPROVE_CORPUS"), os.Getenv("FR_APPROVE_POLICY")
	if corpus == "" || pol == "" {
		b.Skip("FR_APPROVE_CORPUS and FR_APPROVE_POLICY name a stream and a policy")
	}
	p, err := LoadFile(pol)
	if err != nil {
		b.Fatal(err)
	}
	d, err := NewDecider(p, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(corpus)
	if err != nil {
		b.Fatal(err)
	}
	var prompts [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), []byte(`"approval_request"`)) {
			prompts = append(prompts, append([]byte(nil), sc.Bytes()...))
		}
	}
	lines := make([]wire.Line, len(prompts))
	for i, p := range prompts {
		lines[i] = wire.ParseLine(p) // as the reader hands them over
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.DecideLine(lines[i%len(lines)])
	}
}
