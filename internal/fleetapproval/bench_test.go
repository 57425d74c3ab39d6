package fleetapproval

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/testkit/natstest"
)

// The transport's floor: prompts through NATS to two approvers in this process, 128 waiting
// at once, with and without each approver's audit chain on the stream.
func BenchmarkDecide(b *testing.B) {
	for _, audit := range []bool{false, true} {
		name := "no-audit"
		if audit {
			name = "audit-stream"
		}
		b.Run(name, func(b *testing.B) {
			srv := natstest.Start(b)
			for i := 0; i < 2; i++ {
				nc := connectB(b, srv)
				a := &Approver{NC: nc, Pool: "b", ID: "a" + string(rune('0'+i)), Decide: policyDecide}
				if audit {
					js, _ := jetstream.New(nc)
					ch, err := OpenChain(context.Background(), js, "AUDIT", AuditSubject("b", a.ID))
					if err != nil {
						b.Fatal(err)
					}
					a.Decide = func(ctx context.Context, p *Prompt) Decision {
						d := policyDecide(ctx, p)
						d.Wait = ch.Enqueue(recordOf(Event{What: Won, Type: p.Type, Prompt: p.ID, Response: d.Response}, p.Raw))
						return d
					}
				}
				ctx, cancel := context.WithCancel(context.Background())
				go a.Serve(ctx)
				b.Cleanup(cancel)
			}
			c, err := NewClient(connectB(b, srv), "b")
			if err != nil {
				b.Fatal(err)
			}
			// wait for both members
			for c.nc.NumSubscriptions() == 0 {
			}
			c.Decide(context.Background(), "t", "h", "", shell(0))
			b.ResetTimer()
			var next atomic.Int64
			var wg sync.WaitGroup
			for g := 0; g < 128; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for int(next.Add(1)) <= b.N {
						c.Decide(context.Background(), "t", "h", "", shell(2))
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "prompts/s")
		})
	}
}
