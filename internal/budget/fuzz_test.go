package budget

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzStore reads any bytes as a budget file: an error, or totals that the update adds to.
func FuzzStore(f *testing.F) {
	f.Add([]byte(`{"version":1,"days":{"2026-12-01":{"runs":1,"turns":2,"inputTokens":3}},"weeks":{}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"days":{"2026-12-01":{"turns":-5}}}`))
	f.Add([]byte(``))
	f.Add([]byte(`[1,2]`))
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.Local)
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "b.json")
		os.WriteFile(path, b, 0o644)
		st, err := OpenStore(path)
		if err != nil {
			t.Fatal(err)
		}
		before, _, err := st.Read(now)
		if err != nil {
			return
		}
		day, _, err := st.Add(now, Usage{Turns: 1, Input: 10})
		if err != nil {
			t.Fatal(err)
		}
		if day.Turns != before.Turns+1 || day.Input != before.Input+10 {
			t.Errorf("before %+v, after %+v", before, day)
		}
		again, _, err := st.Read(now)
		if err != nil || again != day {
			t.Errorf("read back %+v, %v; want %+v", again, err, day)
		}
	})
}
