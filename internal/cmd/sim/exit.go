package sim

import (
	"github.com/fuseraft/fr/internal/cmd/sim/serve"
	"github.com/fuseraft/fr/internal/cmdutil"
)

// exitCodes are fr-sim's exit statuses and its daemon's, declared once: their --help, the man
// page and docs/scripting.md are written from them.
var exitCodes = cmdutil.ExitCodes{
	"": {
		{Code: cmdutil.ExitOK, Meaning: "the session ended normally (session_end; a run whose exitCode is 0)"},
		{Code: cmdutil.ExitFailed, Meaning: `a failed run or query, "not configured", an unknown --resume id, or repl with stdin on a terminal`},
		{Code: cmdutil.ExitUsage, Meaning: "usage or configuration: a bad flag, fault list, $FRSIM_PACE, or a scenario or dataset that fails to load (FILE:LINE: what is wrong); run --ci when a success criterion failed"},
		{Code: cmdutil.ExitPassedOn, Meaning: "run --bridge exits with the result's exitCode; a crash fault with its exit code (134)"},
	},
	"serve": serve.ExitCodes,
}
