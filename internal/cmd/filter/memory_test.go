package filter

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

var (
	bigOnce sync.Once
	bigLine []byte // a 64 MB tool_result line (200 MB in make chaos), between two tokens
)

func bigInput() []byte {
	bigOnce.Do(func() {
		size := 64 << 20 // 4 times what a dropped line may hold, past what a passed one may
		if testkit.Long() {
			size = 200 << 20
		}
		var b bytes.Buffer
		b.WriteString(`{"type":"token","text":"a"}` + "\n" + `{"type":"tool_result","id":"c1","output":"`)
		chunk := strings.Repeat(`ab\ncd \"q\" é `, 4096)
		for b.Len() < size {
			b.WriteString(chunk)
		}
		b.WriteString(`"}` + "\n" + `{"type":"token","text":"b"}` + "\n")
		bigLine = b.Bytes()
	})
	return bigLine
}

// countingWriter counts what it is given and keeps only the first bytes and the last.
type countingWriter struct {
	n          int
	head, tail []byte
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if len(w.head) < 64 {
		w.head = append(w.head, p[:min(len(p), 64-len(w.head))]...)
	}
	w.tail = append(w.tail, p[max(0, len(p)-64):]...)
	w.tail = w.tail[max(0, len(w.tail)-64):]
	w.n += len(p)
	return len(p), nil
}

// peakHeap runs fr-filter on in and returns what it wrote and the most heap it held, sampled
// as it runs, above what was in use before.
func peakHeap(t *testing.T, args []string, in []byte) (*countingWriter, uint64) {
	t.Helper()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	out := &countingWriter{}
	s := cmdutil.Streams{In: io.MultiReader(bytes.NewReader(in)), Out: out, Err: io.Discard, Getenv: func(string) string { return "" }}
	code := Run(context.Background(), s, append([]string{"fr-filter"}, args...))
	close(done)
	wg.Wait()
	if code != 0 {
		t.Fatalf("fr-filter %q: exit %d", args, code)
	}
	if peak < before.HeapInuse {
		return out, 0
	}
	return out, peak - before.HeapInuse
}

// A 64 MB line (200 MB in make chaos) dropped by --type is not held: fr-filter reads it as far
// as its type and lets the rest go by. One passed on by '.' is held once, not copied as it
// grows.
func TestLongLineMemory(t *testing.T) {
	testkit.WithoutRace(t)
	if testing.Short() {
		t.Skip("reads 64 MB")
	}
	in := bigInput()
	line := len(in) - 2*len(`{"type":"token","text":"a"}`+"\n")
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	out, peak := peakHeap(t, []string{"--type", "token", "."}, in)
	if want := `{"type":"token","text":"a"}` + "\n" + `{"type":"token","text":"b"}` + "\n"; string(out.head) != want || out.n != len(want) {
		t.Fatalf("--type token: output %q (%d bytes), want the two tokens", out.head, out.n)
	}
	if peak > 16<<20 {
		t.Errorf("--type token held %.1f MiB at its peak for a dropped line of %d MiB; want a few MiB", float64(peak)/(1<<20), line>>20)
	}
	t.Logf("dropped: peak heap %.1f MiB for a %d MiB line", float64(peak)/(1<<20), line>>20)

	out, peak = peakHeap(t, []string{"."}, in)
	if out.n != len(in) || !bytes.HasSuffix(in, out.tail) || !bytes.HasPrefix(in, out.head) {
		t.Fatalf(".: wrote %d bytes, want the %d of the input as they are", out.n, len(in))
	}
	if limit := uint64(line) * 3 / 2; peak > limit {
		t.Errorf(". held %.1f MiB at its peak for a passed line of %d MiB; want under 1.5 times the line", float64(peak)/(1<<20), line>>20)
	}
	t.Logf("passed: peak heap %.1f MiB for a %d MiB line", float64(peak)/(1<<20), line>>20)
}
