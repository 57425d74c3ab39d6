// Package all lists every fr command's definition, for the generated man pages and
// completions.
package all

import (
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/internal/cmd/approve"
	"github.com/fuseraft/fr/internal/cmd/attach"
	"github.com/fuseraft/fr/internal/cmd/dispatch"
	"github.com/fuseraft/fr/internal/cmd/filter"
	"github.com/fuseraft/fr/internal/cmd/ls"
	"github.com/fuseraft/fr/internal/cmd/otel"
	"github.com/fuseraft/fr/internal/cmd/report"
	"github.com/fuseraft/fr/internal/cmd/sim"
	"github.com/fuseraft/fr/internal/cmd/stream"
	"github.com/fuseraft/fr/internal/cmd/worker"
	"github.com/fuseraft/fr/internal/cmdutil"
)

// Apps returns the app of every command, built over streams that go nowhere.
func Apps() []*cli.App {
	s := cmdutil.Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard,
		Getenv: func(string) string { return "" }}
	return []*cli.App{approve.App(s), attach.App(s), dispatch.App(s), filter.App(s), ls.App(s), otel.App(s), report.App(s), sim.App(s), stream.App(s), worker.App(s)}
}
