package testkit

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

func TestWaitFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	go func() {
		time.Sleep(20 * time.Millisecond)
		os.WriteFile(path, []byte(`{"type":"ready"}`+"\n"), 0o644)
	}()
	b, err := WaitFile(path, regexp.MustCompile(`"ready"`), false, Hang)
	if err != nil || string(b) != `{"type":"ready"}`+"\n" {
		t.Fatalf("got %q, %v", b, err)
	}
	if _, err := WaitFile(path, regexp.MustCompile(`"ready"`), true, 10*time.Millisecond); err == nil {
		t.Fatal("a file that goes on matching stopped matching")
	}
}

func TestBoundIsScaled(t *testing.T) {
	if Scale() < 1 {
		t.Fatalf("scale %v", Scale())
	}
	if got, want := Bound(2*time.Second), time.Duration(float64(2*time.Second)*Scale()); got != want {
		t.Fatalf("Bound(2s) = %v, want %v", got, want)
	}
	if Until(time.Millisecond, func() bool { return false }) {
		t.Fatal("Until held a condition that never holds")
	}
}
