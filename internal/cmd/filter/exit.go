package filter

import "github.com/fuseraft/fr/internal/cmdutil"

// exitCodes are fr-filter's exit statuses (jq's), declared once: its --help, its man page and
// docs/scripting.md are written from them.
var exitCodes = cmdutil.ExitCodes{"": {
	{Code: 0, Meaning: "success; also a closed standard output, which ends fr-filter quietly"},
	{Code: 1, Meaning: "with -e, the last value was false or null"},
	{Code: 2, Meaning: "usage error (bad flag or argument), or an input file that cannot be read"},
	{Code: 3, Meaning: "the filter does not compile; or fuseraft speaks an unsupported protocolVersion (in a ready or hello event, or a --json envelope) and --any-version was not given"},
	{Code: 4, Meaning: "with -e, the filter produced no value"},
	{Code: 5, Meaning: "a runtime error on some line (reported with its line number), an evaluation that went past --timeout, or a line that is not JSON under --strict"},
	{Code: cmdutil.ExitPassedOn, Meaning: "halt_error sets its own status"},
}}
