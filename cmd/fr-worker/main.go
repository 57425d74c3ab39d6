// Command fr-worker: see 'fr-worker --help' and man/fr-worker.1.
package main

import (
	"context"
	"os"

	"github.com/fuseraft/fr/internal/cmd/worker"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func main() { os.Exit(worker.Run(context.Background(), cmdutil.OSStreams(), os.Args)) }
