package stream

import "github.com/fuseraft/fr/internal/cmdutil"

// exitCodes are fr-stream's exit statuses, declared once: its --help, its man page and
// docs/scripting.md are written from them.
var exitCodes = cmdutil.ExitCodes{"": {
	{Code: cmdutil.ExitOK, Meaning: "repl: the session ended with session_end; or stdout's reader went away with no prompt pending"},
	{Code: cmdutil.ExitPassedOn, Meaning: "run: the result event's exitCode (0 when the run succeeded)"},
	{Code: cmdutil.ExitFailed, Meaning: "fuseraft ended before ready (its message on stderr), died mid-session, or did not finish within --grace of the end of input; stdout's reader went away while a prompt waited for its answer (fr-stream denied it); fuseraft could not be started for the machine's reasons (no file descriptors or memory left: the system's error on stderr)"},
	{Code: cmdutil.ExitPassedOn, Meaning: "run: a run that failed before it started (only a result, sessionId null): its exitCode, or 1; its errorMessage on stderr"},
	{Code: cmdutil.ExitUsage, Meaning: "usage error (an empty TASK, an unset $TASK, too), or an input line over 256 MiB"},
	{Code: cmdutil.ExitProtocol, Meaning: "fuseraft speaks an unsupported protocolVersion (see --any-version), or sends ready a second time in one session"},
	{Code: cmdutil.ExitLimit, Meaning: "stopped by a limit: --max-turns, --max-tokens, --max-duration, --max-cost (or a --budget-file or --budget-kv that cannot be read or written)"},
	{Code: cmdutil.ExitUnavailable, Meaning: "fuseraft not found (not on PATH, or the file is missing); the NATS server of --budget-kv cannot be reached"},
	{Code: cmdutil.ExitInterrupted, Meaning: "the session was ended by the user (a second Ctrl-C)"},
}}
