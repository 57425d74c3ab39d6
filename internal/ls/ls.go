// Package ls implements fr-ls.
package ls

import (
	"context"

	"github.com/fuseraft/fr/internal/cmdutil"
)

// Run runs fr-ls with args (args[0] is the program name) and returns its exit code.
func Run(ctx context.Context, s cmdutil.Streams, args []string) int {
	app := cmdutil.NewApp(s, "fr-ls", "not built yet")
	return cmdutil.RunApp(ctx, app, s, args)
}
