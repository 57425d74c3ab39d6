package attach

import "github.com/fuseraft/fr/internal/cmdutil"

// exitCodes are fr-attach's exit statuses, declared once: its --help, its man page and
// docs/scripting.md are written from them.
var exitCodes = cmdutil.ExitCodes{"": {
	{Code: cmdutil.ExitOK, Meaning: "every task succeeded (--exit-on-result), stdout was closed (without --exit-on-result), or Ctrl-D on a terminal"},
	{Code: cmdutil.ExitFailed, Meaning: "a task failed or its outcome was lost, a newer connection replaced ours, or stdout took nothing for --output-timeout while the output buffer was full"},
	{Code: cmdutil.ExitUsage, Meaning: "usage error: bad flag, an empty --task (an unset $TASK), invalid --client-id, unreadable --token-file or --ca-cert, an input line over 256 MiB"},
	{Code: cmdutil.ExitProtocol, Meaning: "protocol error: unsupported protocolVersion in hello (see --any-version), no hello"},
	{Code: cmdutil.ExitRefused, Meaning: "refused: 401 or 403, a read-only token tried to send a task, or the handshake was redirected to another origin (not followed, so that the token is not sent there)"},
	{Code: cmdutil.ExitLimit, Meaning: "stopped by a limit: --max-turns, --max-tokens, --max-duration, --max-cost (or a --budget-file or --budget-kv that cannot be read or written); with --nats --exit-on-result, a task a fleet worker's limit stopped"},
	{Code: cmdutil.ExitUnavailable, Meaning: "no daemon: no socket, connection refused, no hello within 30s, reconnects exhausted, or no connection for --give-up-after (5m when not on a terminal); the NATS server of --budget-kv cannot be reached"},
	{Code: cmdutil.ExitInterrupted, Meaning: "interrupted (Ctrl-C, SIGINT or SIGTERM); the daemon keeps our task, and with --task or --exit-on-result fr-attach says on stderr how its result can be collected (fr-attach --url URL --client-id ID --exit-on-result; over the Unix socket it cannot)"},
}}
