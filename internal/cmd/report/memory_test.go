package report

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

// sessionGen writes a generated run of about size bytes: turns of streamed tokens, tool calls
// with big outputs, agent messages and prompts, as a long session has them.
type sessionGen struct {
	size, n int64
	buf     bytes.Buffer
	i       int
}

func (g *sessionGen) Read(p []byte) (int, error) {
	for g.buf.Len() < len(p) && g.n < g.size {
		before := g.buf.Len()
		g.i++
		switch g.i % 5 {
		case 0:
			fmt.Fprintf(&g.buf, `{"type":"tool_result","id":"c%d","name":"read_file","ok":true,"output":"%s"}`+"\n", g.i, strings.Repeat("line of a file\\n", 2000))
		case 1:
			fmt.Fprintf(&g.buf, `{"type":"agent_message","message":{"agentName":"coder","role":"assistant","content":"%s","turnIndex":%d,"timestamp":"2026-01-15T10:00:02Z","inputTokens":1000,"outputTokens":10,"isCompactionSummary":false,"toolCalls":[]},"elapsedMs":10}`+"\n", strings.Repeat("word ", 400), g.i)
		case 2:
			fmt.Fprintf(&g.buf, `{"type":"approval_request","kind":"shell_command","command":"go test ./pkg%d/..."}`+"\n", g.i)
		case 3:
			fmt.Fprintf(&g.buf, `{"type":"tool_calling","agent":"coder","tool":"run_shell","argsSummary":"go test ./pkg%d/..."}`+"\n", g.i)
		default:
			fmt.Fprintf(&g.buf, `{"type":"file_changed","path":"pkg%d/a.go","sigil":"~","added":3,"removed":1}`+"\n", g.i%7000)
		}
		g.n += int64(g.buf.Len() - before)
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

// A 200 MB session is reported with the heap bounded: what the report holds does not grow with
// the session. FR_REPORT_BIG=BYTES sets another size.
func TestBigSessionBoundedMemory(t *testing.T) {
	testkit.WithoutRace(t)
	if testing.Short() {
		t.Skip("-short")
	}
	size := int64(200 << 20)
	if v := os.Getenv("FR_REPORT_BIG"); v != "" {
		fmt.Sscan(v, &size)
	}
	const limit = 96 << 20
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var max uint64
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				peak <- max
				return
			default:
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > max {
				max = ms.HeapInuse
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	runtime.GC()
	g := &sessionGen{size: size}
	var errb bytes.Buffer
	out := &countWriter{}
	code := Run(context.Background(), cmdutil.Streams{In: g, Out: out, Err: &errb, Getenv: env(nil)},
		[]string{"fr-report", "--format", "html"})
	close(stop)
	max := <-peak
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	t.Logf("%d MB of session, %d events: peak heap in use %d MB, page %d KB", g.n>>20, g.i, max>>20, out.n>>10)
	if max > limit {
		t.Errorf("peak heap %d MB for a %d MB session; want at most %d MB", max>>20, g.n>>20, limit>>20)
	}
	if out.n > 64<<20 {
		t.Errorf("the page is %d MB: the report is not bounded", out.n>>20)
	}
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
