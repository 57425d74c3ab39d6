package sim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fuseraft/fr/internal/cmd/sim/query"
	"github.com/fuseraft/fr/internal/cmd/sim/scenario"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

type replOptions struct {
	vscode   bool
	noBanner bool
	model    string
	resume   string
}

// repl plays fuseraft repl --vscode: ready, then one scripted turn per message, until end of
// input, then session_end.
func repl(ctx context.Context, s cmdutil.Streams, o *replOptions) error {
	if !o.vscode {
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitUsage, "fr-sim only plays the JSON bridge: pass --vscode"),
			"fr-sim repl --vscode --no-banner")
	}
	if s.InTerminal {
		// fuseraft speaks JSON only when stdin is not a terminal; an interactive chat is not
		// something fr-sim can stand in for.
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "repl --vscode reads JSON lines from a pipe, and stdin is a terminal"),
			`try: printf 'hello\n' | fr-sim repl --vscode --no-banner`)
	}
	st, err := newStdio(s, "repl")
	if err != nil {
		return err
	}
	defer st.close()
	if msg := notConfigured(s.Env, st.sc); msg != "" {
		if err := st.emit("type", wire.TypeError, "text", msg); err != nil {
			return writeErr(err)
		}
		return cmdutil.Exit(cmdutil.ExitFailed)
	}
	c := &chat{st: st, r: st.sc.Repl}
	if err := c.open(s, o); err != nil {
		return err
	}
	for {
		text, carriedText, next, err := c.nextMessage(ctx)
		if err != nil {
			return err
		}
		if next == stopChat {
			break
		}
		if next == skipMessage {
			continue
		}
		if err := c.play(ctx, text, carriedText); err != nil {
			return err
		}
	}
	// fuseraft makes one more model call (memory extraction) before it ends.
	endDelay := 200 * time.Millisecond
	if c.r.EndDelay != nil {
		endDelay = c.r.EndDelay.D()
	}
	st.sleep(endDelay)
	return writeErr(st.emit("type", wire.TypeSessEnd))
}

// chat is one repl --vscode session being played.
type chat struct {
	st        *stdio
	r         scenario.Repl
	sessionID string
	model     string
	title     *string
	autoTitle *string
	mid       []string // the mid-turn commands
	carried   []string // messages typed during a turn, carried into the next one
	turnIndex int
}

// what nextMessage found
const (
	playTurn    = iota // a message to play a turn for
	skipMessage        // a line that is no turn (an interrupt, a slash command)
	stopChat           // the end of input
)

// open starts the chat: the session (a new one, or the one --resume names), ready, the
// replay of a resumed session, and the reading of stdin.
func (c *chat) open(s cmdutil.Streams, o *replOptions) error {
	st, r := c.st, c.r
	c.sessionID = r.SessionID
	if c.sessionID == "" {
		c.sessionID = "sim-repl-session"
	}
	var replay *scenario.Replay
	c.title, c.autoTitle, replay = r.Title, r.AutoTitle, r.Replay
	if o.resume != "" {
		known := knownSession(o.resume, r.SessionID, r.Sessions)
		if !known && s.Env(scenario.EnvScenario) == "" {
			// The embedded scenario resumes every REPL chat of fr-sim's dataset, the ones
			// fr-sim sessions --repl (and so fr-ls repl-sessions) lists, as that chat.
			if stored, ok := datasetReplSession(s.Env, o.resume); ok {
				known = true
				c.title, c.autoTitle, replay = stored.Title, stored.AutoTitle, datasetReplay(stored)
				if o.model == "" && stored.ModelID != "" {
					o.model = stored.ModelID
				}
			}
		}
		if !known {
			// As fuseraft: plain text on stdout, no JSON at all.
			fmt.Fprintf(s.Out, "No REPL session found with ID '%s'.\n", o.resume)
			return cmdutil.Exit(cmdutil.ExitFailed)
		}
		c.sessionID = o.resume
	}
	c.model = st.sc.Model
	if o.model != "" {
		c.model = o.model
	}
	c.mid = r.MidTurnCommands
	if c.mid == nil {
		c.mid = []string{}
	}
	if err := st.emit("type", wire.TypeReady, "protocolVersion", st.sc.Faults.Version(), "sessionId", c.sessionID,
		"model", c.model, "title", c.title, "autoTitle", c.autoTitle, "midTurnCommands", c.mid); err != nil {
		return writeErr(err)
	}
	if o.resume != "" {
		if err := st.emit(replayFields(replay)...); err != nil {
			return writeErr(err)
		}
	}
	st.start()
	return nil
}

// nextMessage reads what comes next between turns: the messages carried from the last turn,
// else the next line of input (a message, or a line that is no turn), else the end.
func (c *chat) nextMessage(ctx context.Context) (text, carriedText string, next int, err error) {
	st := c.st
	if len(c.carried) > 0 {
		carriedText = strings.Join(c.carried, "\n")
		c.carried = nil
		return carriedText, carriedText, playTurn, nil
	}
	if st.eof && len(st.queue) == 0 {
		return "", "", stopChat, nil
	}
	var line []byte
	ok := true
	if len(st.queue) > 0 {
		line, st.queue = st.queue[0], st.queue[1:]
	} else {
		select {
		case line, ok = <-st.lines:
		case <-st.sig: // nothing running: nothing to cancel
			st.rec.RecordSignal(st.mode, "SIGINT")
			return "", "", skipMessage, nil
		case <-ctx.Done():
			return "", "", stopChat, ctx.Err()
		}
	}
	if !ok {
		st.eof = true
		return "", "", stopChat, nil
	}
	if isInterrupt(line) || len(strings.TrimSpace(string(line))) == 0 {
		return "", "", skipMessage, nil // an interrupt with nothing running is dropped
	}
	text, end := message(line)
	if end {
		st.eof = true
		return "", "", stopChat, nil
	}
	for _, w := range imageWarnings(line) {
		if err := st.emit("type", wire.TypeWarning, "text", w); err != nil {
			return "", "", stopChat, writeErr(err)
		}
	}
	if done, err := st.slash(text, c.sessionID, c.model, &c.title, c.autoTitle, c.turnIndex); done || err != nil {
		if err != nil {
			return "", "", stopChat, writeErr(err)
		}
		return "", "", skipMessage, nil
	}
	return text, "", playTurn, nil
}

// play plays the scripted turn for text: turn_start, the steps, what was typed during them
// (mid-turn commands applied, messages carried or queued), and the turn's end.
func (c *chat) play(ctx context.Context, text, carriedText string) error {
	st := c.st
	steps := replTurn(c.r, c.turnIndex, text)
	if err := st.emit("type", wire.TypeTurnStart, "text", carriedText); err != nil {
		return writeErr(err)
	}
	carry := c.r.Interjections == "carry"
	var interjected int
	out, err := st.turn(ctx, steps, func(line []byte) {
		msg, end := message(line)
		if cmd := midTurn(msg, c.mid); cmd != "" && !end {
			_ = st.emit(applied(cmd, msg)...)
			return
		}
		if !carry || end || len(st.queue) > 0 {
			st.queue = append(st.queue, line)
			return
		}
		if strings.TrimSpace(msg) == "" {
			return
		}
		c.carried = append(c.carried, msg)
		interjected++
	})
	if err != nil {
		return writeErr(err)
	}
	if out.Crash != nil {
		return st.crash(out.Crash)
	}
	if err := c.endTurn(out, interjected); err != nil {
		return writeErr(err)
	}
	c.turnIndex++
	return nil
}

// endTurn writes what ends a turn: the interjections carried, then cancelled, or message_end
// when the steps wrote none.
func (c *chat) endTurn(out scenario.Outcome, interjected int) error {
	st, turn := c.st, c.turnIndex
	if interjected > 0 {
		if err := st.emit("type", wire.TypeInterjection, "status", "carried", "count", interjected); err != nil {
			return err
		}
	}
	if out.Cancelled {
		return st.emit("type", wire.TypeCancelled)
	}
	if out.Emitted[wire.TypeMessageEnd] != 0 {
		return nil
	}
	calls := out.ToolCalls
	if calls == nil {
		calls = []string{}
	}
	return st.emit("type", wire.TypeMessageEnd, "turnIndex", turn, "toolCalls", calls,
		"inputTokens", 1800+600*turn, "outputTokens", 1+len(out.Text)/4,
		"cachedInputTokens", 1200*turn, "cumulativeCacheReadTokens", 600*turn*(turn+1))
}

func knownSession(id, main string, others []string) bool {
	if id == main && id != "" {
		return true
	}
	for _, o := range others {
		if o == id {
			return true
		}
	}
	return false
}

// replayFields is the replay event sent after ready on --resume.
func replayFields(r *scenario.Replay) []any {
	turns := []*scenario.Object{}
	compacted := false
	if r != nil {
		compacted = r.Compacted
		for _, t := range r.Turns {
			calls := t.ToolCalls
			if calls == nil {
				calls = []string{}
			}
			turns = append(turns, scenario.NewObject("user", t.User, "assistant", t.Assistant, "toolCalls", calls))
		}
	}
	return []any{"type", wire.TypeReplay, "total", len(turns), "compacted", compacted, "turns", turns}
}

// replTurn picks the scripted turn for a message: the turns in order, then again from the
// start (wrap) or an echo of the message (echo, or a scenario without turns).
func replTurn(r scenario.Repl, i int, text string) []scenario.Step {
	if len(r.Turns) > 0 && (i < len(r.Turns) || r.AfterTurns != "echo") {
		return r.Turns[i%len(r.Turns)].Steps
	}
	reply := "You said: " + text
	return []scenario.Step{{Tokens: &reply}}
}

func midTurn(msg string, cmds []string) string {
	f := strings.Fields(msg)
	if len(f) == 0 {
		return ""
	}
	for _, c := range cmds {
		if f[0] == c {
			return c
		}
	}
	return ""
}

// slash answers the few slash commands fr-sim knows between turns; done reports that msg was
// one. Like fuseraft, an unknown command's answer is a plain-text line on stdout.
func (st *stdio) slash(msg, sessionID, model string, title **string, autoTitle *string, turn int) (done bool, err error) {
	if !strings.HasPrefix(msg, "/") {
		return false, nil
	}
	cmd, arg, _ := strings.Cut(strings.TrimSpace(msg), " ")
	switch cmd {
	case "/title":
		t := strings.TrimSpace(arg)
		*title = &t
		return true, st.emit("type", wire.TypeTitle, "sessionId", sessionID, "title", t, "autoTitle", autoTitle)
	case "/status":
		return true, st.emit("type", wire.TypeStatus, "model", model, "turn", turn, "context", 0.05, "level", "ok",
			"modes", []string{}, "input", 1800+600*turn, "output", 120*turn, "cached", 1200*turn)
	case "/copy":
		return true, st.emit("type", wire.TypeCopy, "text", strings.TrimSpace(arg))
	}
	if midTurn(cmd, st.sc.Repl.MidTurnCommands) != "" {
		return true, st.emit(applied(cmd, msg)...)
	}
	return true, st.w.WriteText("Unknown command: " + cmd + ". Type /help for a list of commands.")
}

func applied(cmd, msg string) []any {
	return []any{"type", wire.TypeApplied, "command", cmd, "message", strings.TrimSpace(msg) + " applied"}
}

// datasetReplSession finds a REPL chat of fr-sim's dataset (FRSIM_STATE, else the embedded
// one) by id.
func datasetReplSession(getenv func(string) string, id string) (query.StoredReplSession, bool) {
	st, err := query.LoadState(getenv)
	if err != nil {
		return query.StoredReplSession{}, false
	}
	for _, r := range st.ReplSessions {
		if r.SessionID == id {
			return r, true
		}
	}
	return query.StoredReplSession{}, false
}

// datasetReplay is the replay of a dataset chat: its stored turns, or none.
func datasetReplay(r query.StoredReplSession) *scenario.Replay {
	if r.Replay != nil {
		return r.Replay
	}
	return &scenario.Replay{}
}
