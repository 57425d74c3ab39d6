// Package stream implements fr-stream.
package stream

import (
	"context"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// Run runs fr-stream with args (args[0] is the program name) and returns its exit code.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	app := cmdutil.NewApp(s, "fr-stream", "not built yet")
	return cmdutil.RunApp(ctx, app, s, args)
}
