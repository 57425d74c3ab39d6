package wire_test

import (
	"context"
	"fmt"
	"log"

	"github.com/fuseraft/fr/pkg/wire"
)

// Start fuseraft run --bridge on a task, answer its approvals with a function, and get the
// run's result.
func ExampleSpawn() {
	// allow decides each approval_request: anything but handing the work to another agent.
	allow := func(r *wire.ApprovalRequest) bool { return r.Kind != wire.KindRouteApproval }

	ctx := context.Background()
	conn, err := wire.Spawn(ctx, wire.Run("-c", "dev.yaml", "tidy the parser"), wire.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	for {
		line, err := conn.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		ev, _ := line.Event()
		switch ev.Type {
		case wire.TypeApproval:
			r, err := wire.DecodeApprovalRequest(ev.Raw)
			yes := err == nil && allow(r)
			fmt.Printf("%s: %v\n", r.Summary(), yes)
			conn.Answer(wire.Input{Line: wire.ApprovalResponse(yes), Type: wire.TypeApprovalResponse})
		case wire.TypeResult:
			var res wire.RunResult
			if err := ev.Decode(&res); err != nil {
				log.Fatal(err)
			}
			fmt.Println("exit code:", res.ExitCode)
			return
		}
	}
	// Output:
	// shell: go test ./...: true
	// route: reviewer -> deployer (DEPLOY): false
	// exit code: 1
}
