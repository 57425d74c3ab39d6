// Package serve is fr-sim's stand-in for fuseraft serve: the Unix socket and the WebSocket.
package serve

import (
	"context"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// Run runs the daemon; args are fuseraft's arguments after "serve". It returns the exit status.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	return 2
}
