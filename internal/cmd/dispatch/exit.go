package dispatch

import "github.com/fuseraft/fr/internal/cmdutil"

// exitCodes are fr-dispatch's exit statuses, declared once: its --help, its man page and
// docs/scripting.md are written from them.
var exitCodes = cmdutil.ExitCodes{"": {
	{Code: cmdutil.ExitOK, Meaning: "every task succeeded (task, status and result: every call was answered)"},
	{Code: cmdutil.ExitFailed, Meaning: "a task failed, is unknown, or did not finish within --timeout (wait and run: a task that could not be followed because of a request that failed exits as that request: 3, 4 or 10)"},
	{Code: cmdutil.ExitUsage, Meaning: "usage error: bad flag, no --url, unreadable --token-file or --ca-cert, an empty task"},
	{Code: cmdutil.ExitProtocol, Meaning: "the daemon's answer breaks the contract: cut off, not a JSON-RPC object, over 64 MiB"},
	{Code: cmdutil.ExitRefused, Meaning: "the daemon refused the token (401) or the request (403), or --url redirects to another origin (scheme, host and port), which is not followed so that the token is not sent there"},
	{Code: cmdutil.ExitLimit, Meaning: "wait and run with --nats: a task failed because a limit of the fleet's workers stopped it (its record's \"limit\" names the flag: not handed to a daemon, or interrupted), and no request failed"},
	{Code: cmdutil.ExitUnavailable, Meaning: "nothing answers at --url: no connection, or no answer within --request-timeout (a task sent may have been queued even so: look for it before dispatching it again)"},
	{Code: cmdutil.ExitInterrupted, Meaning: "interrupted"},
}}
