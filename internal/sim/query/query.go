// Package query answers fuseraft's --json resource queries for fr-sim.
package query

import (
	"context"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// Run answers one query; args are fuseraft's arguments after the program name
// (for example "sessions", "--json", "--all"). It returns the exit status.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	return 2
}
