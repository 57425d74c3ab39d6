// Command mangen regenerates man/ and completions/ from the commands' definitions
// (make man).
package main

import (
	"fmt"
	"os"

	"github.com/fuseraft/fr/internal/clidoc"
	"github.com/fuseraft/fr/internal/cmd/all"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	if err := clidoc.Write(root, all.Apps()); err != nil {
		fmt.Fprintln(os.Stderr, "mangen:", err)
		os.Exit(1)
	}
}
