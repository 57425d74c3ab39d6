package wire

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	max := func(n int64) int64 { return n - 1 }
	zero := func(int64) int64 { return 0 }
	cases := []struct {
		n    int
		cap  time.Duration
		want time.Duration
	}{
		{1, 10 * time.Second, 100 * time.Millisecond},
		{2, 10 * time.Second, 200 * time.Millisecond},
		{5, 10 * time.Second, 1600 * time.Millisecond},
		{8, 10 * time.Second, 10 * time.Second},
		{1000, 10 * time.Second, 10 * time.Second},
		{3, 250 * time.Millisecond, 250 * time.Millisecond},
	}
	for _, tc := range cases {
		if got := Backoff(tc.n, tc.cap, max); got != tc.want {
			t.Errorf("Backoff(%d, %v) at most = %v, want %v", tc.n, tc.cap, got, tc.want)
		}
		if got := Backoff(tc.n, tc.cap, zero); got != 0 {
			t.Errorf("full jitter starts at 0, got %v", got)
		}
	}
}
