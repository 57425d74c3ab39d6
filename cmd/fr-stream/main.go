// Command fr-stream: see 'fr-stream --help' and man/fr-stream.1.
package main

import (
	"context"
	"os"

	"github.com/fuseraft/fr/internal/cmd/stream"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func main() { os.Exit(stream.Run(context.Background(), cmdutil.OSStreams(), os.Args)) }
