package serve

import "github.com/fuseraft/fr/internal/cmdutil"

// ExitCodes are fr-sim serve's exit statuses, declared once: its --help, fr-sim's man page and
// docs/scripting.md are written from them.
var ExitCodes = []cmdutil.ExitCode{
	{Code: cmdutil.ExitOK, Meaning: "stopped by SIGINT or SIGTERM"},
	{Code: cmdutil.ExitFailed, Meaning: "cannot listen (a daemon already runs there), or the state is unreadable"},
	{Code: cmdutil.ExitUsage, Meaning: "usage error, or an invalid scenario"},
	{Code: 134, Meaning: "a crash step or --crash-after (or the scenario's crash exit code)"},
}
