package humanize

import "testing"

func TestBytes(t *testing.T) {
	for n, want := range map[int]string{0: "0 bytes", 1000: "1000 bytes", 8 << 10: "8 KiB", 64 << 20: "64 MiB", 256 << 20: "256 MiB", 1<<20 + 1: "1048577 bytes"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
