// Package approve implements fr-approve.
package approve

import (
	"context"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// Run runs fr-approve with args (args[0] is the program name) and returns its exit code.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	app := cmdutil.NewApp(s, "fr-approve", "not built yet")
	return cmdutil.RunApp(ctx, app, s, args)
}
