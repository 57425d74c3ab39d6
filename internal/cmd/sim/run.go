package sim

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fuseraft/fr/internal/cmd/sim/query"
	"github.com/fuseraft/fr/internal/cmd/sim/scenario"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

type runOptions struct {
	bridge bool
	config string
	resume string
	json   bool
	hitl   bool
	ci     bool
	task   string
}

// runResult is a run's result event, in fuseraft's field order.
type runResult struct {
	sessionID *string
	task      string
	config    *string
	succeeded bool
	errMsg    *string
	exitCode  int
	turns     int
	elapsed   float64
	in, out   int
}

func (r runResult) fields() []any {
	return []any{"type", wire.TypeResult, "sessionId", r.sessionID, "task", r.task, "config", r.config,
		"succeeded", r.succeeded, "errorMessage", r.errMsg, "exitCode", r.exitCode, "turns", r.turns,
		"elapsedSeconds", r.elapsed, "inputTokens", r.in, "outputTokens", r.out}
}

// run plays fuseraft run --bridge: ready, the scripted steps, result; the exit status is the
// result's exitCode.
func run(ctx context.Context, s cmdutil.Streams, o *runOptions) error {
	if o.bridge && o.hitl {
		return cmdutil.Usagef("--bridge never pauses after a turn, so it can't be combined with --hitl")
	}
	st, err := newStdio(s, "run")
	if err != nil {
		return err
	}
	defer st.close()
	sc, rs := st.sc, st.sc.Run
	var config *string
	if o.config != "" {
		config = &o.config
	}
	task, known := runTask(s, o, rs)
	if msg := refusal(s, sc, o, known); msg != "" {
		r := runResult{task: task, config: config, errMsg: &msg, exitCode: 1}
		if !o.bridge {
			return st.summary(o, r)
		}
		if err := st.emit(r.fields()...); err != nil {
			return writeErr(err)
		}
		return cmdutil.Exit(1)
	}
	sessionID := rs.SessionID
	if sessionID == "" {
		sessionID = "sim-run-session"
	}
	if o.resume != "" {
		sessionID = o.resume
	}
	if err := st.begin(o, sessionID, task, config); err != nil {
		return err
	}
	began := time.Now()
	// user_input isn't read by the bridge (it is recorded and ignored); other lines are kept,
	// in order, for the next prompt.
	out, err := st.turn(ctx, rs.Steps, func(line []byte) {
		if t, _ := wire.TopLevelString(line, "type"); t != wire.TypeUserInput {
			st.queue = append(st.queue, line)
		}
	})
	if err != nil {
		return writeErr(err)
	}
	if out.Crash != nil {
		return st.crash(out.Crash)
	}
	r := runResult{sessionID: &sessionID, task: task, config: config, succeeded: true,
		turns: out.Emitted["agent_message"], in: 0, out: 0}
	r.elapsed = math.Round(time.Since(began).Seconds()*100) / 100
	r.outcome(out, rs.Result.Over(out.Result))
	if !o.bridge {
		if o.ci {
			r.ci(rs.CI)
		}
		return st.summary(o, r)
	}
	if err := st.emit(r.fields()...); err != nil {
		return writeErr(err)
	}
	if r.exitCode != 0 {
		return cmdutil.Exit(r.exitCode)
	}
	return nil
}

// runTask is the task a run reports (the one given, else a resumed session's, cut to 120
// bytes) and whether the session --resume names is known (to the scenario, or as an
// incomplete session of fr-sim's dataset).
func runTask(s cmdutil.Streams, o *runOptions, rs scenario.Run) (task string, known bool) {
	task = o.task
	known = o.resume != "" && knownSession(o.resume, rs.SessionID, rs.Sessions)
	if o.resume != "" && !known && s.Env(scenario.EnvScenario) == "" {
		// The embedded scenario resumes every incomplete session of fr-sim's dataset, the
		// ones fr-sim sessions (and so fr-ls sessions) lists, as that session.
		if stored, ok := datasetSession(s.Env, o.resume); ok {
			known = true
			if task == "" {
				task = stored.Task
			}
		}
	}
	if o.resume != "" && task == "" {
		task = rs.Task
		if task == "" {
			task = "(resumed session)"
		}
	}
	if len(task) > 120 {
		task = task[:120]
	}
	return task, known
}

// refusal is the error message of a run that fails before it starts, or "".
func refusal(s cmdutil.Streams, sc *scenario.Scenario, o *runOptions, known bool) string {
	switch msg := notConfigured(s.Env, sc); {
	case msg != "":
		return msg
	case sc.Run.FailBeforeStart != "":
		return sc.Run.FailBeforeStart
	case o.resume != "" && !known:
		return fmt.Sprintf("Session '%s' not found.", o.resume)
	case o.resume == "" && o.config == "":
		return "No orchestration config given. Pass -c <config>."
	case o.resume == "" && strings.TrimSpace(o.task) == "":
		return "No task given."
	}
	return ""
}

// begin starts a run: with --bridge, the ready event and the reading of stdin; without it,
// nothing is shown and nobody is asked: prompts are denied.
func (st *stdio) begin(o *runOptions, sessionID, task string, config *string) error {
	if !o.bridge {
		st.w = scenario.NewLineWriter(discard{}, scenario.Faults{})
		st.eof = true
		return nil
	}
	agents := st.sc.Run.Agents
	if agents == nil {
		agents = []string{}
	}
	if err := st.emit("type", wire.TypeReady, "protocolVersion", st.sc.Faults.Version(), "sessionId", sessionID,
		"task", task, "config", config, "resumed", o.resume != "", "agents", agents); err != nil {
		return writeErr(err)
	}
	st.start()
	return nil
}

// outcome fills in what the steps played (out) and the scenario's result fields (res) make
// of the result.
func (r *runResult) outcome(out scenario.Outcome, res *scenario.Result) {
	switch {
	case out.Cancelled:
		msg := "The session was cancelled."
		r.succeeded, r.errMsg = false, &msg
	case out.Failed != nil:
		r.succeeded, r.errMsg = false, out.Failed
	}
	if res.Succeeded != nil && !out.Cancelled && out.Failed == nil {
		r.succeeded = *res.Succeeded
	}
	if res.ErrorMessage != nil && r.errMsg == nil {
		r.errMsg = res.ErrorMessage
	}
	if !r.succeeded {
		r.exitCode = 1
	}
	if res.ExitCode != nil && !out.Cancelled {
		r.exitCode = *res.ExitCode
	}
	setInt(&r.turns, res.Turns)
	if res.ElapsedSeconds != nil {
		r.elapsed = *res.ElapsedSeconds
	}
	setInt(&r.in, res.InputTokens)
	setInt(&r.out, res.OutputTokens)
}

func setInt(dst *int, src *int) {
	if src != nil {
		*dst = *src
	}
}

// ci applies fuseraft's --ci: the run went through, but a success criterion did not hold.
func (r *runResult) ci(c scenario.CI) {
	if r.exitCode != 0 || c.Passed == nil || *c.Passed {
		return
	}
	msg := c.Message
	if msg == "" {
		msg = "A --ci success criterion failed."
	}
	r.succeeded, r.errMsg, r.exitCode = false, &msg, 2
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// summary is run without --bridge: one snake_case line with --json, else a line of text.
func (st *stdio) summary(o *runOptions, r runResult) error {
	out := scenario.NewLineWriter(st.s.Out, scenario.Faults{})
	var err error
	if o.json {
		err = out.WriteLine(scenario.Marshal(scenario.NewObject("session_id", r.sessionID, "task", r.task,
			"succeeded", r.succeeded, "error_message", r.errMsg, "exit_code", r.exitCode, "turns", r.turns,
			"elapsed_seconds", r.elapsed, "input_tokens", r.in, "output_tokens", r.out)))
	} else {
		status := "completed"
		if !r.succeeded {
			status = "failed"
			if r.errMsg != nil {
				status += ": " + *r.errMsg
			}
		}
		err = out.WriteText(fmt.Sprintf("Session %s %s after %d turns.", deref(r.sessionID), status, r.turns))
	}
	if err != nil {
		return writeErr(err)
	}
	if r.exitCode != 0 {
		return cmdutil.Exit(r.exitCode)
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}

// datasetSession finds an incomplete orchestration session of fr-sim's dataset (FRSIM_STATE,
// else the embedded one) by id.
func datasetSession(getenv func(string) string, id string) (query.StoredSession, bool) {
	st, err := query.LoadState(getenv)
	if err != nil {
		return query.StoredSession{}, false
	}
	for _, s := range st.Sessions {
		if s.SessionID == id && !s.IsComplete {
			return s, true
		}
	}
	return query.StoredSession{}, false
}
