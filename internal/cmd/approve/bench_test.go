package approve

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmd/approve/policy"
	"github.com/fuseraft/fr/internal/cmdutil"
)

// BenchmarkDecideStream200Rules runs fr-approve as a whole over a recorded stream (events
// between the prompts included) with a 200-rule policy and reports decisions per second.
func BenchmarkDecideStream200Rules(b *testing.B) { benchStream(b) }

// BenchmarkDecideStream200RulesAudit is the same with an audit log, each line written (and
// its answer sent) in turn; with --audit-fsync each line also waits for the disk.
func BenchmarkDecideStream200RulesAudit(b *testing.B) {
	b.Run("write", func(b *testing.B) { benchStream(b, "--audit", "") })
	b.Run("fsync", func(b *testing.B) {
		if testing.Short() {
			b.Skip("waits for the disk")
		}
		benchStream(b, "--audit", "", "--audit-fsync")
	})
}

// benchStream runs fr-approve over 5000 prompts with extra flags; an empty value after
// --audit is a fresh log in a temporary directory for each run.
func benchStream(b *testing.B, extra ...string) {
	dir := b.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(policy.BenchPolicy()), 0o600); err != nil {
		b.Fatal(err)
	}
	const prompts = 5000
	var stream bytes.Buffer
	stream.WriteString(`{"type":"ready","protocolVersion":1,"sessionId":"bench","task":"t","config":null,"resumed":false,"agents":[]}` + "\n")
	for _, ev := range policy.BenchStream(prompts) {
		stream.WriteString(`{"type":"tool_call","id":"1","name":"shell","summary":"x","args":null}` + "\n")
		stream.Write(ev)
		stream.WriteByte('\n')
	}
	args := append([]string{"fr-approve", "--policy", pol, "--tty", "/nonexistent"}, extra...)
	audit := filepath.Join(dir, "audit.log")
	for i := range args {
		if args[i] == "" && args[i-1] == "--audit" {
			args[i] = audit
		}
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		os.Remove(audit)
		s := cmdutil.Streams{In: bytes.NewReader(stream.Bytes()), Out: io.Discard, Err: io.Discard}
		if code := Run(context.Background(), s, args); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	b.ReportMetric(float64(prompts*b.N)/time.Since(start).Seconds(), "decisions/s")
	b.ReportMetric(float64(prompts*b.N)/(cpuTime()-cpu0).Seconds(), "decisions/cpu-s")
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
