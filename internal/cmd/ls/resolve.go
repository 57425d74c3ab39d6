package ls

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/proc"
	"github.com/fuseraft/fr/internal/termsafe"
	"github.com/fuseraft/fr/pkg/wire"
)

// wholeSessionID is the shape of fuseraft's session ids: one of these is passed on as it is.
var wholeSessionID = regexp.MustCompile(`^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$`)

// ResolveSessionID returns the orchestration session id that arg names, as git names commits:
// arg itself when it is a whole id, else the one id 'fuseraft sessions --all --json' lists that
// starts with arg (letters in either case). No id starting with arg is fuseraft's not-found
// error (exit 1); several are a usage error (exit 2) whose hints list them. bin is the
// fuseraft binary; fuseraft's stderr goes to stderr.
func ResolveSessionID(ctx context.Context, bin string, stderr io.Writer, arg string) (string, error) {
	if arg == "" {
		return "", cmdutil.Usagef("session needs a session ID or a prefix of one, not an empty string")
	}
	if wholeSessionID.MatchString(arg) {
		return arg, nil
	}
	type match struct{ id, task string }
	var matches []match
	exact := ""
	err := listSessions(ctx, bin, stderr, func(s wire.SessionInfo) {
		switch {
		case s.SessionID == arg:
			exact = s.SessionID
		case len(s.SessionID) >= len(arg) && strings.EqualFold(s.SessionID[:len(arg)], arg):
			matches = append(matches, match{s.SessionID, s.Task})
		}
	})
	switch {
	case err != nil:
		return "", err
	case exact != "":
		return exact, nil
	case len(matches) == 1:
		return matches[0].id, nil
	case len(matches) == 0:
		return "", cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "Session '%s' not found.", arg),
			"no id listed by 'fr-ls sessions --all' starts with "+arg)
	}
	err = cmdutil.Usagef("session ID prefix %s is ambiguous: %d sessions match", arg, len(matches))
	const most = 10
	for i, m := range matches {
		if i == most {
			return "", cmdutil.WithHint(err, fmt.Sprintf("and %d more; give more of the id", len(matches)-most))
		}
		task := termsafe.Line(cmdutil.FirstLine(m.task))
		if r := []rune(task); len(r) > 60 {
			task = string(r[:59]) + "…"
		}
		err = cmdutil.WithHint(err, m.id+"  "+task)
	}
	return "", err
}

// listSessions runs 'fuseraft sessions --all --json' and calls each with the sessions listed.
func listSessions(ctx context.Context, bin string, stderr io.Writer, each func(wire.SessionInfo)) error {
	cmd := exec.Command(bin, "sessions", "--all", "--json")
	childErr := termsafe.NewWriter(stderr)
	defer childErr.Flush()
	cmd.Stderr = childErr
	cmd.WaitDelay = time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	child, err := proc.Start(cmd)
	if err != nil {
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUnavailable, "cannot run %s: %v", bin, err),
			"pass --fuseraft PATH or set FUSERAFT_BIN to the fuseraft binary")
	}
	stopWatch := child.StopOnCancel(ctx, os.Interrupt)
	defer stopWatch()
	head, rerr := wire.ReadEnvelope(stdout, false, func(raw []byte) error {
		var s wire.SessionInfo
		if err := json.Unmarshal(raw, &s); err != nil {
			return &wire.ProtocolError{Msg: fmt.Sprintf("a session of 'sessions --all --json': %v", err)}
		}
		each(s)
		return nil
	})
	if rerr != nil {
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		_ = child.WaitOrKill(proc.StopGrace)
		if ctx.Err() != nil {
			return cmdutil.Exit(cmdutil.ExitInterrupted)
		}
		return cmdutil.WithHint(rerr, "while finding the session: fuseraft sessions --all --json")
	}
	werr := child.Wait()
	if ctx.Err() != nil {
		return cmdutil.Exit(cmdutil.ExitInterrupted)
	}
	if head.Shape == "error" {
		return cmdutil.Errorf(cmdutil.ExitFailed, "%s", strings.TrimSpace(*head.Error))
	}
	if exit := proc.ExitOf(werr); exit.Err != nil || exit.Code != 0 || exit.Signaled {
		return cmdutil.Errorf(cmdutil.ExitFailed, "fuseraft sessions --all --json: %v", werr)
	}
	return nil
}
