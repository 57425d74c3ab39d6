package otel

import "github.com/fuseraft/fr/internal/cmdutil"

// exitCodes are fr-otel's exit statuses, declared once: its --help, its man page and
// docs/scripting.md are written from them.
var exitCodes = cmdutil.ExitCodes{"": {
	{Code: cmdutil.ExitOK, Meaning: "the input was passed on (whatever became of the export, unless --strict)"},
	{Code: cmdutil.ExitFailed, Meaning: "with --strict: some telemetry was not delivered; also an input file that cannot be read (the others are still passed on), or stdout that cannot be written (a reader that closed the pipe is not an error)"},
	{Code: cmdutil.ExitUsage, Meaning: "usage or configuration error: bad flag, unreadable --headers-file, --prices or --audit, an invalid --resource-attributes"},
	{Code: cmdutil.ExitProtocol, Meaning: "a ready or hello event of an unsupported protocolVersion (see --any-version); the input is still passed on whole"},
}}
