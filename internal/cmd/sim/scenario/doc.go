// Package scenario is fr-sim's script format and player: what a scripted fuseraft says in
// repl --vscode, run --bridge and serve, and the faults it injects on the way.
//
// # Format
//
// A scenario is a YAML file (JSON is accepted too, being YAML) with "version: 1". It is read
// strictly: an unknown key is an error naming its file and line. See docs/fr-sim.md for the
// full format, and DefaultYAML for a complete example, which Default loads.
//
//	version: 1
//	model: sim-small
//	repl:   {sessionId, title, autoTitle, midTurnCommands, sessions, notConfigured,
//	         turns: [{steps: [...]}], afterTurns: wrap|echo, replay: {...}, endDelay: 200ms}
//	run:    {sessionId, sessions, agents, steps: [...], result: {...}, failBeforeStart: "msg"}
//	serve:  {tasks: [{match: "regexp", steps: [...], result: {...}}]}
//	faults: {dotnet, crlf, noise, noiseEvery, split: {bytes, pause}, protocolVersion,
//	         unknownKind, big, crashAfter, crashExitCode, flood}
//
// Steps are described on [Step].
//
// # Playing steps
//
// Every transport implements [Peer]: Emit writes one encoded event line, and Ask writes a
// prompt and returns the next input line the client sends, which is consumed as the answer
// whatever it is (fuseraft has no request ids). A [Player] plays steps to a Peer:
//
//	pl := &scenario.Player{Peer: peer, Faults: sc.Faults, Questions: true}
//	out, err := pl.Play(ctx, task.Steps)
//
// Play returns when the steps end or stop early: ctx cancelled (an interrupt; the caller sends
// cancelled or a failed result), a crash step or the crashAfter fault (the caller writes
// Outcome.Crash.Partial with no line end, Message on stderr, and exits with ExitCode), a fail
// step (Outcome.Failed is the run's or task's errorMessage), or a hangup step (the Peer's
// Hangup was called). Only an exact {"type":"approval_response","approved":true} approves
// ([IsApproval]); anything else, and a client gone (Ask returning io.EOF), is a denial.
// Outcome also counts events, approvals and denials and collects tool_call names (for
// message_end) and the streamed token text (for a result's lastMessage).
//
// The Player applies the JSON-level faults; the line-level ones (crlf, noise, split) are for
// stream transports and live in [LineWriter]. Events a transport builds itself (ready, hello,
// result, ...) go through [Faults.Encode] so the dotnet fault reaches them too, and announce
// [Faults.Version]. [DotNetJSON] rewrites any JSON as .NET's default encoder writes it.
package scenario
