// Package cmdutil is what every fr command shares: the streams a command runs over, exit codes,
// the single place that turns an error into an "fr-NAME: error: ..." line and a status, the
// way fuseraft is found, and the colour and terminal decisions.
package cmdutil

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

// Exit codes shared by all commands but fr-filter (SharedExitCodes says what each means).
const (
	ExitOK          = 0
	ExitFailed      = 1   // the work failed: an error envelope, a failed task or run, a denial asked to fail
	ExitUsage       = 2   // bad flag, unreadable or invalid policy, bad jq expression
	ExitProtocol    = 3   // unsupported protocolVersion, an envelope or handshake that breaks the contract
	ExitRefused     = 4   // authentication failed, a read-only token asked to send a task, a redirect to another origin
	ExitLimit       = 6   // stopped by a limit the user set: --max-turns, --max-tokens, --max-duration, --max-cost
	ExitUnavailable = 10  // fuseraft not found, no daemon socket, connection refused
	ExitInterrupted = 130 // interrupted by the user
)

// Version and Revision are the toolkit's version and the commit it was built from, set at
// build time ('make build' sets both, from git describe and git rev-parse) with
// -ldflags "-X github.com/fuseraft/fr/internal/cmdutil.Version=v1.2.3
// -X github.com/fuseraft/fr/internal/cmdutil.Revision=COMMIT".
var (
	Version  = ""
	Revision = ""
)

// Streams are the files a command runs over, and the facts about them a command decides by.
// Tests pass buffers and set the facts; main passes OSStreams, which reads them from the real
// files.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string

	// InTerminal, OutTerminal and ErrTerminal say whether In, Out and Err are terminals.
	InTerminal, OutTerminal, ErrTerminal bool
	// Width is the terminal's width in columns when Out is a terminal, else 0 (see Columns).
	Width int
	// ReadWidth reads the terminal's width again, as it is now: a terminal may be resized
	// while a command runs (console follows SIGWINCH and asks Columns again). nil when Out is
	// no terminal, or its width does not change (a test's).
	ReadWidth func() int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// DefaultWidth is the width output is fitted to when neither the terminal nor $COLUMNS says.
const DefaultWidth = 80

// Columns is the width to fit output to: the terminal's (ReadWidth, else Width), else $COLUMNS
// when it holds a positive number, else DefaultWidth (80). Every command decides it this way.
func (s Streams) Columns() int {
	if s.ReadWidth != nil {
		if w := s.ReadWidth(); w > 0 {
			return w
		}
	}
	if s.Width > 0 {
		return s.Width
	}
	if n, err := strconv.Atoi(strings.TrimSpace(s.Env("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return DefaultWidth
}

// Pretty says whether output is rendered for a person, as --format FORMAT asks: "pretty" or
// "jsonl", or by default ("") when stdout is a terminal.
func (s Streams) Pretty(format string) bool {
	if format == "" {
		return s.OutTerminal
	}
	return format == "pretty"
}

// Time reads the clock s.Now (time.Now when nil).
func (s Streams) Time() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// Env reads an environment variable through s.Getenv.
func (s Streams) Env(key string) string {
	if s.Getenv == nil {
		return os.Getenv(key)
	}
	return s.Getenv(key)
}

// OSStreams are the process's real streams, with the facts read from them.
func OSStreams() Streams {
	s := Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv, Now: time.Now,
		InTerminal: IsTerminal(os.Stdin), OutTerminal: IsTerminal(os.Stdout), ErrTerminal: IsTerminal(os.Stderr)}
	if s.OutTerminal {
		fd := int(os.Stdout.Fd())
		s.ReadWidth = func() int { return TerminalWidth(fd) }
		s.Width = s.ReadWidth()
	}
	return s
}

// TerminalWidth is the width in columns of the terminal fd is, or 0 when it is none.
func TerminalWidth(fd int) int {
	if w, _, err := term.GetSize(fd); err == nil && w > 0 {
		return w
	}
	return 0
}

// Error is an error that knows its exit code and may carry hints for the user.
type Error struct {
	Code  int
	Err   error
	Hints []string
	// Quiet errors print nothing: the command has already said what there was to say.
	Quiet bool
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// Exit returns an error that ends the command with code and prints nothing.
func Exit(code int) *Error { return &Error{Code: code, Quiet: true} }

// WithHint adds hint lines ("fr-NAME: hint: ...") to err, wrapping it in an *Error when needed.
func WithHint(err error, hints ...string) *Error {
	var e *Error
	if errors.As(err, &e) {
		e.Hints = append(e.Hints, hints...)
		return e
	}
	return &Error{Code: CodeOf(err), Err: err, Hints: hints}
}

// CodeOf maps an error to its exit code.
func CodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *Error
	var ve *wire.VersionError
	var pe *wire.ProtocolError
	var se *wire.SocketPathError
	var re *wire.RedirectError
	switch {
	case errors.As(err, &e):
		return e.Code
	case errors.As(err, &re):
		return ExitRefused
	case errors.As(err, &ve), errors.As(err, &pe):
		return ExitProtocol
	case errors.As(err, &se):
		return ExitUnavailable
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitFailed
}

// Report is the one place that turns a command's error into stderr lines and an exit code.
// The message and hints are shown through termsafe, always: stderr is a terminal or a log,
// and either may render escape sequences an error quotes from outside; a password or token in
// a URL it quotes is masked (wire.RedactURLs). A broken pipe on
// stdout is a quiet, successful end: the reader had enough.
func Report(prog string, stderr io.Writer, err error) int {
	if err == nil || wire.IsBrokenPipe(err) {
		return ExitOK
	}
	code := CodeOf(err)
	var e *Error
	if errors.As(err, &e) && e.Quiet {
		return code
	}
	fmt.Fprintf(stderr, "%s: error: %s\n", prog, termsafe.Text(wire.RedactURLs(err.Error())))
	if errors.As(err, &e) {
		for _, h := range e.Hints {
			fmt.Fprintf(stderr, "%s: hint: %s\n", prog, termsafe.Text(wire.RedactURLs(h)))
		}
	}
	return code
}

// Warnf prints "prog: warning: ..." on stderr.
func Warnf(stderr io.Writer, prog, format string, args ...any) {
	Sayf(stderr, prog, "warning: "+format, args...)
}

// Sayf prints "prog: ..." on stderr. Like Report's and Warnf's, the line is shown through
// termsafe whatever it quotes, whether stderr is a terminal or a log: escape sequences in a
// CI log are rendered too. Passwords and tokens in the URLs it quotes are masked.
func Sayf(stderr io.Writer, prog, format string, args ...any) {
	fmt.Fprintf(stderr, "%s: %s\n", prog, termsafe.Text(wire.RedactURLs(fmt.Sprintf(format, args...))))
}

// FindFuseraft resolves the fuseraft binary: the --fuseraft flag, else $FUSERAFT_BIN, else
// fuseraft on PATH. Not found is exit 10 with hints.
func FindFuseraft(flag string, getenv func(string) string) (string, error) {
	src, name := "--fuseraft", flag
	if name == "" {
		src, name = "FUSERAFT_BIN", getenv("FUSERAFT_BIN")
	}
	if name == "" {
		src, name = "PATH", "fuseraft"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		what := fmt.Sprintf("fuseraft not found (%s: %s)", src, name)
		if src == "PATH" {
			what = "fuseraft not found on PATH"
		}
		return "", &Error{Code: ExitUnavailable, Err: errors.New(what),
			Hints: []string{"pass --fuseraft PATH or set FUSERAFT_BIN to the fuseraft binary (fr-sim works too)"}}
	}
	return path, nil
}

// StartFailed is the error of a fuseraft that could not be started: exit 10 ("fuseraft not
// found") only when the executable is genuinely missing (it went away after FindFuseraft found
// it); any other failure is the machine's (no file descriptors or memory left, a file that
// cannot be executed) and is exit 1 with the system's error, so that a script retrying on 10
// is not told to look for a fuseraft that is there.
func StartFailed(bin string, err error) *Error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return &Error{Code: ExitUnavailable, Err: fmt.Errorf("fuseraft not found: %v", err),
			Hints: []string{"pass --fuseraft PATH or set FUSERAFT_BIN to the fuseraft binary (fr-sim works too)"}}
	}
	e := &Error{Code: ExitFailed, Err: fmt.Errorf("starting fuseraft (%s): %v", bin, err)}
	switch {
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		e.Hints = []string{"too many open files: raise the limit (ulimit -n) or close some"}
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.ENOEXEC):
		e.Hints = []string{"is " + bin + " an executable for this system?"}
	}
	return e
}

// IsTerminal reports whether v is an *os.File connected to a terminal.
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// UseColor decides colour in order: an explicit choice ("always", "never"; "" or "auto" to
// decide), then NO_COLOR and TERM=dumb, then whether the output is a terminal.
func UseColor(choice string, getenv func(string) string, terminal bool) bool {
	switch choice {
	case "always":
		return true
	case "never":
		return false
	}
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	return terminal
}

// NewApp returns a urfave/cli app with fr's conventions: output to the given streams, usage
// errors as exit 2, no os.Exit from inside the library, --version, and a help text that ends
// with the EXIT STATUS and EXAMPLE sections given.
func NewApp(s Streams, name, usage string) *cli.App {
	app := &cli.App{
		Name:            name,
		Usage:           usage,
		Version:         VersionString(),
		Reader:          s.In,
		Writer:          s.Out,
		ErrWriter:       s.Err,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {},
		OnUsageError:    UsageError,
	}
	return app
}

// UsageError is an OnUsageError handler: the flag error becomes exit 2 with a hint, and a
// flag nobody defines is named with two dashes, with the closest defined one as a suggestion
// ("unknown flag --formt; did you mean --format?"): of the command's flags, or before any
// command, of the app's and its commands' (which may come before them too).
func UsageError(c *cli.Context, err error, _ bool) error {
	name := c.App.Name
	flags := c.App.Flags
	if c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name {
		name += " " + c.Command.Name
		flags = append(append([]cli.Flag{}, c.Command.Flags...), InheritedFlags(c.App)...)
	} else {
		for _, cmd := range c.App.Commands {
			flags = append(flags, cmd.Flags...)
		}
	}
	if bad, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
		err = errors.New(UnknownFlag(strings.TrimLeft(bad, "-"), flagNames(flags)))
	}
	return &Error{Code: ExitUsage, Err: err, Hints: []string{"see '" + name + " --help'"}}
}

// Usagef returns a usage error (exit 2).
func Usagef(format string, args ...any) *Error { return Errorf(ExitUsage, format, args...) }

// CheckTask returns a usage error (exit 2) when task, named what ("the task", "--task"), is
// empty or only white space, as an unset shell variable ("$TASK") makes it: fuseraft would run
// a task with no text, or fail it, and the script would not learn its mistake.
func CheckTask(what, task string) error {
	if strings.TrimSpace(task) != "" {
		return nil
	}
	return WithHint(Usagef("%s is empty", what), "is the variable it comes from set? quote it and check: ${TASK:?}")
}

// RunApp runs app with args (args[0] is the program name) and returns the exit code, printing
// any error in fr's voice. Every command's flags are read the one way Intersperse says: before
// or after its subcommand and its arguments.
func RunApp(ctx context.Context, app *cli.App, s Streams, args []string) int {
	err := app.RunContext(ctx, Intersperse(app, args))
	return Report(app.Name, s.Err, err)
}

// FirstLine returns s up to its first line end, for error messages.
func FirstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// Interruptible returns ctx, ended by SIGINT or SIGTERM, for a command's Run. It also catches
// SIGPIPE, so that a reader of stdout that went away (| head -1) shows up as EPIPE on the next
// write, a quiet end, instead of killing the process; caught rather than ignored, it keeps
// its default for the children the command starts. stop undoes both.
func Interruptible(ctx context.Context) (_ context.Context, stop func()) {
	ctx, stopCtx := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	return ctx, func() {
		signal.Stop(pipe)
		stopCtx()
	}
}

// QuietOnClosedStdout makes a reader that goes away (| head -1) end the command through the
// EPIPE of its next write, quietly, instead of through SIGPIPE. It does nothing when s.Out is
// not the process's stdout (a test's buffer).
func QuietOnClosedStdout(s Streams) {
	if s.Out == os.Stdout {
		signal.Ignore(syscall.SIGPIPE)
	}
}

// LoadCA reads --ca-cert: the PEM certificates to trust instead of the system roots for a
// daemon's TLS (wss://, https://). A file that cannot be read or holds no certificate is a
// usage error.
func LoadCA(path string) (*tls.Config, error) {
	cfg, err := wire.LoadCA(path)
	var pe *fs.PathError
	if err != nil {
		if errors.As(err, &pe) {
			return nil, Usagef("cannot read --ca-cert: %v", err)
		}
		return nil, Usagef("--ca-cert %v", err)
	}
	return cfg, nil
}

// BearerToken is the daemon's bearer token, as every command reads it: the first line of
// file (--token-file), which must not be empty, else $FUSERAFT_SERVE_TOKEN. A token never
// comes from argv, where other users can read it.
func BearerToken(file string, getenv func(string) string) (string, error) {
	if file == "" {
		return strings.TrimSpace(getenv("FUSERAFT_SERVE_TOKEN")), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", Usagef("cannot read --token-file: %v", err)
	}
	t := strings.TrimSpace(FirstLine(strings.TrimSpace(string(b))))
	if t == "" {
		return "", Usagef("--token-file %s is empty", file)
	}
	return t, nil
}

// DaemonFrom checks the flags that name a fuseraft serve daemon, as every command reads them:
// --socket PATH or --url ws://HOST:PORT/attach (not both; either may be empty), and
// --ca-cert FILE, trusted for a wss:// URL only.
func DaemonFrom(socket, rawURL, caCert string) (wire.Daemon, error) {
	d := wire.Daemon{Socket: socket, URL: rawURL}
	if d.Socket != "" && d.URL != "" {
		return d, Usagef("--socket and --url cannot be combined")
	}
	if d.URL != "" {
		u, err := url.Parse(d.URL)
		if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			return d, WithHint(Usagef("--url %q is not a ws:// or wss:// URL", d.URL),
				"the daemon's WebSocket is ws://HOST:PORT/attach")
		}
	}
	if caCert == "" {
		return d, nil
	}
	if !strings.HasPrefix(d.URL, "wss:") {
		return d, Usagef("--ca-cert is for wss:// URLs")
	}
	var err error
	d.TLS, err = LoadCA(caCert)
	return d, err
}
