// Command fr-approve: see 'fr-approve --help' and man/fr-approve.1.
package main

import (
	"context"
	"os"

	"github.com/fuseraft/fr/internal/cmd/approve"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func main() { os.Exit(approve.Run(context.Background(), cmdutil.OSStreams(), os.Args)) }
