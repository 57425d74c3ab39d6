package serve

// What of the protocol page's serve transport this package emulates, and the test that
// checks each item (*_test.go here; the scripts in internal/cmd/attach/testdata/script drive
// it with fr-attach):
//
//	Unix socket at the path fuseraft attach derives     TestSocketPathTooLong, socket_derived.txtar
//	WebSocket at ws://127.0.0.1:PORT/attach            TestHello, websocket_tokens.txtar
//	hello: protocolVersion, clientId, readOnly,         TestHello, drop_mid_approval.txtar,
//	  inFlight, pendingResults                          pending_results.txtar, restart.txtar
//	bearer tokens: FUSERAFT_SERVE_TOKEN, tokens file    TestHandshakeRules, TestTokensFile,
//	  (401 without or with a bad one)                   websocket_tokens.txtar, token_rotated.txtar
//	read-only token: readOnly, user_input -> error      TestReadOnlyTokenGetsAnError
//	a handshake with an Origin header is refused (403)  TestHandshakeRules
//	Fuseraft-Client-Id validated (400), scoped per      TestHandshakeRules,
//	  token; a newer connection closes the older        TestNewerConnectionClosesTheOlder, replaced.txtar
//	each line of an idle client is a task; plain text   TestQueueBroadcastAndPrivatePrompts,
//	  works; queued with its position                   socket_derived.txtar
//	progress broadcast; approvals and results only to   TestQueueBroadcastAndPrivatePrompts
//	  the dispatching client
//	the next line after approval_request answers it;    TestStrayLineIsADenial, held_task.txtar
//	  anything but approved:true denies, consumed
//	interrupt cancels the running task, else dropped    TestInterrupt, limits_duration.txtar
//	  (an uncancellable task: dropped too)
//	a result's inputTokens, outputTokens when the        limits_tokens.txtar
//	  scenario gives them (a newer daemon's fields)
//	--reconnect-grace: asked again after the next       drop_mid_approval.txtar, TestHangupStep,
//	  hello; nobody within it: denied                   TestGraceAndPendingResults
//	restart keeps unfinished tasks (task_resumed) and   TestRestartResumesAndKeepsResults,
//	  uncollected results; pidfile                      TestResumedSocketTaskHasNoClient, restart.txtar
//	faults: dotnet, version, crash, hangup,             TestDotnetFault, version.txtar, TestCrashFaultKeepsState,
//	  --drop-after-approval, flood                      TestHangupStep, drop_mid_approval.txtar
//	the input record (FRSIM_RECORD)                     TestStrayLineIsADenial, held_task.txtar
//	sending never blocks: a queue per connection of     TestStuckReaderIsDisconnected,
//	  --send-queue bytes, a --write-timeout per write;   TestWriteTimeoutClosesAStuckClient,
//	  a slow client is disconnected with an error event  TestStuckClientDoesNotWedgeTheDaemon
//	  (and a stderr line); replacing a stuck connection,
//	  new clients and SIGTERM go on while one is stuck
//	a task's events are paced to the clients that read  flood.txtar, TestStuckReaderIsDisconnected
//	a result stays saved until written to its client    TestKilledTwentyTimesEachApprovalAnsweredOnce,
//	  (sent again rather than lost after SIGKILL)       pending_results.txtar
//	an answered prompt is saved before it is recorded:  TestKilledTwentyTimesEachApprovalAnsweredOnce
//	  never asked again after a restart (SIGKILL too);
//	  the one pending at the kill asked once more
//	--trace: connections, prompts asked / answered /    TestKilledTwentyTimesEachApprovalAnsweredOnce,
//	  replayed, results delivered, per connection       TestTrace
//	a socket file, pidfile or half-written state a      TestRestartAfterSIGKILL, TestCrashFaultKeepsState
//	  killed daemon left does not stop the next start
//	no goroutine or open file left per connection       TestNoLeakPerConnection
//	the MCP tools at /mcp of --port: dispatch_task,      TestMCPTools, recipe-8.txtar (internal/e2e/docexamples)
//	  get_status, get_result; an unknown id; tokens
//	  (a read token cannot dispatch); finished tasks
//	  remembered across restarts
//	--unattended-policy deny|allow for tasks nobody      TestMCPTools
//	  attends (dispatch_task, objectives, A2A calls)
