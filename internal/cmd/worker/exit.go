package worker

import "github.com/fuseraft/fr/internal/cmdutil"

// exitCodes are fr-worker's exit statuses, declared once: its --help, its man page and
// docs/scripting.md are written from them.
var exitCodes = cmdutil.ExitCodes{"": {
	{Code: cmdutil.ExitOK, Meaning: "drained after SIGTERM or SIGINT"},
	{Code: cmdutil.ExitUsage, Meaning: "usage error: bad flag, a bad --pool or --host, unreadable credentials, a bad limit flag (--per, --max-*, a bucket name)"},
	{Code: cmdutil.ExitRefused, Meaning: "NATS refused the credentials"},
	{Code: cmdutil.ExitUnavailable, Meaning: "no NATS server at --nats (or at --budget-kv's nats://HOST:PORT), or the embedded one could not start"},
}}
