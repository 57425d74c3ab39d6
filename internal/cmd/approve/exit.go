package approve

import "github.com/fuseraft/fr/internal/cmdutil"

// exitCodes are fr-approve's exit statuses and its subcommands', declared once: their --help,
// the man page and docs/scripting.md are written from them.
var exitCodes = cmdutil.ExitCodes{
	"": {
		{Code: cmdutil.ExitOK, Meaning: "the input ended; every prompt was answered"},
		{Code: cmdutil.ExitFailed, Meaning: "--fail-on-deny and a prompt was denied; the input could not be read; a line could not be written to the audit log (that prompt was denied, and fr-approve stopped)"},
		{Code: cmdutil.ExitUsage, Meaning: "usage error, or a policy that is missing or invalid, or an audit log in use, broken or ending in a torn line (see repair-audit)"},
		{Code: cmdutil.ExitProtocol, Meaning: "fuseraft speaks an unsupported protocolVersion (see --any-version)"},
		{Code: cmdutil.ExitUnavailable, Meaning: "with --nats: the NATS server cannot be reached, or has no JetStream for the audit stream"},
		{Code: cmdutil.ExitInterrupted, Meaning: "interrupted"},
	},
	"check": {
		{Code: cmdutil.ExitOK, Meaning: "checked"},
		{Code: cmdutil.ExitFailed, Meaning: "with --fail-on-deny (--fail-on-ask), a prompt would be denied (asked)"},
		{Code: cmdutil.ExitUsage, Meaning: "invalid policy or unreadable file"},
		{Code: cmdutil.ExitProtocol, Meaning: "unsupported protocolVersion"},
	},
	"test": {
		{Code: cmdutil.ExitOK, Meaning: "every test passed"},
		{Code: cmdutil.ExitFailed, Meaning: "a test failed"},
		{Code: cmdutil.ExitUsage, Meaning: "invalid policy"},
	},
	"lint": {
		{Code: cmdutil.ExitOK, Meaning: "no findings"},
		{Code: cmdutil.ExitFailed, Meaning: "findings"},
		{Code: cmdutil.ExitUsage, Meaning: "invalid policy"},
	},
	"verify-audit": {
		{Code: cmdutil.ExitOK, Meaning: "the chain is intact"},
		{Code: cmdutil.ExitFailed, Meaning: "it is broken, or --head is not in it"},
		{Code: cmdutil.ExitUsage, Meaning: "the file (or the audit stream) cannot be read"},
	},
	"repair-audit": {
		{Code: cmdutil.ExitOK, Meaning: "the log verifies (repaired, or nothing to cut)"},
		{Code: cmdutil.ExitFailed, Meaning: "the chain breaks before its last line (without --force), or the cut could not be saved, made or recorded"},
		{Code: cmdutil.ExitUsage, Meaning: "the file cannot be read or written, or is in use"},
	},
}
