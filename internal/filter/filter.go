// Package filter implements fr-filter.
package filter

import (
	"context"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// Run runs fr-filter with args (args[0] is the program name) and returns its exit code.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	app := cmdutil.NewApp(s, "fr-filter", "not built yet")
	return cmdutil.RunApp(ctx, app, s, args)
}
