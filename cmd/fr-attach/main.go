// Command fr-attach: see 'fr-attach --help' and man/fr-attach.1.
package main

import (
	"context"
	"os"

	"github.com/fuseraft/fr/internal/cmd/attach"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func main() { os.Exit(attach.Run(context.Background(), cmdutil.OSStreams(), os.Args)) }
