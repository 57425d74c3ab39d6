// Package wire implements fuseraft's JSON wire protocol, version 1, for programs that talk to
// fuseraft out of process: the --json resource queries, the JSONL event stream of a live session
// (repl --vscode, run --bridge) and the fuseraft serve daemon.
//
// Most of its exported names are the protocol's own: a struct for each event, input line and
// resource item the protocol page documents, and a constant for each event type. Beside them
// the package is deliberately small, and its API is pinned (testdata/api.txt, go doc -all):
//
//   - [Conn] is a live session, as a client: [Dial] connects to a serve daemon (and
//     reconnects), [Spawn] starts fuseraft repl --vscode or run --bridge ([Repl], [Run]) and
//     stops it with SIGTERM, then SIGKILL, on Close. Lines come from [Conn.Next]; input goes
//     in with [Conn.Send] and [Conn.Answer], through the Conn's [Gate]. [Start] gives a
//     started fuseraft's bare pipes, for a program that reads and writes them itself.
//   - [Reader] reads a live stream line by line with no 64 KiB ceiling, accepts \n and \r\n, and
//     classifies each line as an event, other JSON or noise without losing its bytes ([ParseLine]).
//   - [Writer] writes lines and flushes when its input has nothing more ready, so a reader in a
//     pipe sees each event at once while a bulk copy still runs at full speed.
//   - [Event] keeps an event's original bytes, so it can be passed on unchanged; [Event.Decode]
//     fills the typed structs ([Ready], [Hello], [ApprovalRequest], ...).
//   - [DecodeEnvelope], [ReadEnvelope] and [CheckVersion] handle the --json envelopes.
//   - [Gate] holds the prompt state shared by every client: while an approval_request or a
//     question is pending, only its answer may be sent, exactly once, in order. Answers pair
//     with prompts by their order (the k-th answer read is for the k-th prompt written), so
//     an answer to a prompt that died with its connection or turn never answers another.
//   - Encoders for every input line ([UserInput], [ApprovalResponse], [QuestionResponse],
//     [Interrupt]) with the limits on images.
//   - [SocketPath] finds the serve socket exactly as fuseraft attach does.
//   - [HTTPClient] talks to a daemon over HTTP (TLS from [LoadCA]) without following a
//     redirect to another origin, and [RedactURL] keeps credentials out of messages.
//
// Fields the protocol documents as nullable are pointers (or [json.RawMessage]) so that null
// stays apart from a value. Clients must ignore fields and event types they do not know; every
// type here keeps the raw line so nothing unknown is ever lost.
package wire

// ProtocolVersion is the version of the wire protocol this package was written for.
const ProtocolVersion = 1

// SupportedVersions lists the protocolVersion values this build understands.
var SupportedVersions = []int{ProtocolVersion}
