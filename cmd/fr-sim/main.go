// Command fr-sim: see 'fr-sim --help' and man/fr-sim.1.
package main

import (
	"context"
	"os"

	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func main() { os.Exit(sim.Run(context.Background(), cmdutil.OSStreams(), os.Args)) }
