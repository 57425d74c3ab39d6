package cmdutil

import (
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// ExitCode is one exit status a command can end with, and what it means.
type ExitCode struct {
	Code    int // ExitPassedOn for a status the command takes from elsewhere (a run's exitCode)
	Meaning string
}

// ExitPassedOn stands for an exit status a command passes on rather than chooses (fr-stream
// run exits with the result's exitCode); it is shown as N.
const ExitPassedOn = -1

// String is the code as help and docs show it: the number, or N.
func (e ExitCode) String() string {
	if e.Code == ExitPassedOn {
		return "N"
	}
	return strconv.Itoa(e.Code)
}

// ExitCodes are the exit statuses of a command and of its subcommands, declared once per
// command (internal/cmd/<tool>/exit.go): the EXIT STATUS sections of its --help and man page,
// and its tables in docs/scripting.md, are written from them. The key is a subcommand's name,
// or "" for the command itself.
type ExitCodes map[string][]ExitCode

// Names returns the keys of codes in the order the docs list them: the command, then its
// subcommands by name.
func (codes ExitCodes) Names() []string {
	var names []string
	for n := range codes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SharedExitCodes are the codes every command but fr-filter gives the same meaning, so that
// scripts can tell failures apart (docs/scripting.md).
var SharedExitCodes = []ExitCode{
	{Code: ExitOK, Meaning: "success"},
	{Code: ExitFailed, Meaning: "the work failed: an error envelope, a failed task or run, a denied prompt where asked to fail"},
	{Code: ExitUsage, Meaning: "usage or configuration error: bad flag, unreadable or invalid policy, bad jq expression"},
	{Code: ExitProtocol, Meaning: "protocol error: unsupported protocolVersion, an envelope, handshake or answer that breaks the contract"},
	{Code: ExitRefused, Meaning: "refused: authentication failed, a read-only token asked to send a task, or a redirect to another origin (not followed)"},
	{Code: ExitLimit, Meaning: "stopped by a limit the user set: --max-turns, --max-tokens, --max-duration, --max-cost, or a --budget-file or --budget-kv that is used up or cannot be written (fr-stream, fr-attach; fr-dispatch wait and run, for a fleet's task that a worker's limit stopped); a task that merely failed is 1"},
	{Code: ExitUnavailable, Meaning: "nothing to talk to: fuseraft not found, no daemon socket, connection refused, no answer within --request-timeout, a NATS server (--nats, --budget-kv) that cannot be reached"},
	{Code: ExitInterrupted, Meaning: "interrupted by the user"},
}

const exitCodesKey = "fr.exitCodes"

// DeclareExitCodes writes the EXIT STATUS section of app's help (its Description) and of each
// subcommand's named in codes, replacing one already there, before the ENVIRONMENT or
// EXAMPLES section (or last), and keeps codes in app.Metadata for the docs (AppExitCodes).
// It returns app.
func DeclareExitCodes(app *cli.App, codes ExitCodes) *cli.App {
	for name, list := range codes {
		if name == "" {
			app.Description = withExitStatus(app.Description, list)
			continue
		}
		for _, c := range app.Commands {
			if c.Name == name {
				c.Description = withExitStatus(c.Description, list)
			}
		}
	}
	if app.Metadata == nil {
		app.Metadata = map[string]any{}
	}
	app.Metadata[exitCodesKey] = codes
	return app
}

// AppExitCodes returns the codes DeclareExitCodes declared for app, or nil.
func AppExitCodes(app *cli.App) ExitCodes {
	codes, _ := app.Metadata[exitCodesKey].(ExitCodes)
	return codes
}

const (
	exitIndent = "   "
	exitWidth  = 92 // the help texts' own width
)

// ExitStatusSection renders codes as a help section: a heading, then one entry per code, its
// meaning wrapped under itself.
func ExitStatusSection(codes []ExitCode) string {
	var b strings.Builder
	b.WriteString("EXIT STATUS")
	col := len(exitIndent) + 5
	for _, c := range codes {
		head := exitIndent + c.String()
		b.WriteString("\n" + head + strings.Repeat(" ", col-len(head)))
		n := col
		for i, w := range strings.Fields(c.Meaning) {
			if i > 0 && n+1+len(w) > exitWidth {
				b.WriteString("\n" + strings.Repeat(" ", col))
				n = col
			} else if i > 0 {
				b.WriteByte(' ')
				n++
			}
			b.WriteString(w)
			n += len(w)
		}
	}
	return b.String()
}

// withExitStatus returns desc with its EXIT STATUS section (any there taken out) written from
// codes, before the ENVIRONMENT or EXAMPLES section, or at the end.
func withExitStatus(desc string, codes []ExitCode) string {
	lines := strings.Split(strings.TrimRight(desc, "\n"), "\n")
	isHeading := func(l string) bool {
		return l != "" && l[0] != ' ' && l == strings.ToUpper(l) && strings.TrimSpace(l) == l &&
			strings.ContainsAny(l, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	}
	// Take out an EXIT STATUS section already there, with the blank lines after it (the one
	// before it then parts what came before from what comes after).
	for i := 0; i < len(lines); i++ {
		if lines[i] != "EXIT STATUS" {
			continue
		}
		j := i + 1
		for j < len(lines) && !isHeading(lines[j]) {
			j++
		}
		lines = append(lines[:i], lines[j:]...)
		break
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	at := len(lines)
	for i, l := range lines {
		if l == "ENVIRONMENT" || l == "EXAMPLES" {
			at = i
			break
		}
	}
	section := strings.Split(ExitStatusSection(codes), "\n")
	var out []string
	out = append(out, lines[:at]...)
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	if len(out) > 0 {
		out = append(out, "")
	}
	out = append(out, section...)
	if at < len(lines) {
		out = append(out, "")
		out = append(out, lines[at:]...)
	}
	return strings.Join(out, "\n")
}
