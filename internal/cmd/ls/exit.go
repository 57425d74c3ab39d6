package ls

import "github.com/fuseraft/fr/internal/cmdutil"

// exitCodes are fr-ls's exit statuses, declared once: its --help, its man page and
// docs/scripting.md are written from them.
var exitCodes = cmdutil.ExitCodes{"": {
	{Code: cmdutil.ExitOK, Meaning: "success, empty lists included"},
	{Code: cmdutil.ExitFailed, Meaning: "fuseraft reported an error (its message is printed), no session ID starts with the prefix given, validate found errors (the item is still printed), fuseraft failed or was killed by a signal, fuseraft could not be started for the machine's reasons (no file descriptors or memory left), or --jq failed on an item"},
	{Code: cmdutil.ExitUsage, Meaning: "usage: bad flag or resource, unknown --fields name (the available ones are listed), a --jq program that does not compile (a caret marks the place), a session ID prefix that several sessions' ids start with (they are listed)"},
	{Code: cmdutil.ExitProtocol, Meaning: "fuseraft's stdout was not an envelope, or its protocolVersion is not supported (--any-version goes on with a warning)"},
	{Code: cmdutil.ExitUnavailable, Meaning: "fuseraft not found (not on PATH, or the file is missing)"},
	{Code: cmdutil.ExitInterrupted, Meaning: "interrupted"},
}}
