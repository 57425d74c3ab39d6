// Command fr-ls: see 'fr-ls --help' and man/fr-ls.1.
package main

import (
	"context"
	"os"

	"github.com/fuseraft/fr/internal/cmd/ls"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func main() { os.Exit(ls.Run(context.Background(), cmdutil.OSStreams(), os.Args)) }
