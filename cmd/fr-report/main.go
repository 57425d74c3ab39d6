// Command fr-report: see 'fr-report --help' and man/fr-report.1.
package main

import (
	"context"
	"os"

	"github.com/fuseraft/fr/internal/cmd/report"
	"github.com/fuseraft/fr/internal/cmdutil"
)

func main() { os.Exit(report.Run(context.Background(), cmdutil.OSStreams(), os.Args)) }
