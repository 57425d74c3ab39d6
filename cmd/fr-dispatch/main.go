// Command fr-dispatch: see 'fr-dispatch --help' and man/fr-dispatch.1.
package main

import (
	"context"
	"os"

	"github.com/fuseraft/fr/internal/cmd/dispatch"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func main() { os.Exit(dispatch.Run(context.Background(), cmdutil.OSStreams(), os.Args)) }
