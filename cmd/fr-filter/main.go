// Command fr-filter: see 'fr-filter --help' and man/fr-filter.1.
package main

import (
	"context"
	"os"

	"github.com/fuseraft/fr/internal/cmd/filter"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func main() { os.Exit(filter.Run(context.Background(), cmdutil.OSStreams(), os.Args)) }
