// Command fr-otel: see 'fr-otel --help' and man/fr-otel.1.
package main

import (
	"context"
	"os"

	"github.com/fuseraft/fr/internal/cmd/otel"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func main() { os.Exit(otel.Run(context.Background(), cmdutil.OSStreams(), os.Args)) }
