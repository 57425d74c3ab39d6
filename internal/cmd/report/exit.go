package report

import "github.com/fuseraft/fr/internal/cmdutil"

// exitCodes are fr-report's exit statuses, declared once: its --help, its man page and
// docs/scripting.md are written from them.
var exitCodes = cmdutil.ExitCodes{"": {
	{Code: cmdutil.ExitOK, Meaning: "the report was written (with --exit-status: and every task or run succeeded)"},
	{Code: cmdutil.ExitFailed, Meaning: "with --exit-status: a task or run failed or did not finish, or the input held none; also a line longer than 256 MiB in the input"},
	{Code: cmdutil.ExitUsage, Meaning: "usage error: bad flag, unreadable input, price table, audit log or input log, an audit log with a chain that does not verify, a bad --redact-pattern"},
	{Code: cmdutil.ExitProtocol, Meaning: "a ready or hello event of an unsupported protocolVersion (see --any-version)"},
}}
