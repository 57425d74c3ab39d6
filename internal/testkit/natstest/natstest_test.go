package natstest

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/testkit"
)

// A key written before a restart is read after it, through a client that reconnected by itself.
func TestRestartKeepsStoreAndURL(t *testing.T) {
	s := Start(t)
	url := s.URL()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Context(t, 30*time.Second)
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "b", Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	s.Restart()
	if s.URL() != url {
		t.Fatalf("URL after restart %s, want %s", s.URL(), url)
	}
	var got []byte
	testkit.WaitUntil(t, 30*time.Second, "the key read after the restart", func() bool {
		e, err := kv.Get(ctx, "k")
		if err != nil {
			return false
		}
		got = e.Value()
		return true
	})
	if string(got) != "v" {
		t.Fatalf("got %q after restart, want v", got)
	}
}
