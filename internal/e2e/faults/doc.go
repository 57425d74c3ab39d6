// Package faults is fr's fault suite: it runs the real commands (fr-sim serve, fr-attach,
// fr-approve, the demo pipeline) as processes and breaks what they stand on: the daemon is
// killed with SIGKILL, stopped with SIGTERM or frozen with SIGSTOP while an approval waits
// for an answer that comes late, restarted again and again during a long task, attached by
// many clients at once over both transports, and flooded into a client whose reader stopped.
//
// What each test asserts is what a user would check afterwards: every approval was decided
// once, by the answer written for it (the scenario's daemon reports each decision); each
// result reached its own client exactly once; no process and no temporary file was left
// behind; no process's memory grew past a bound.
//
// `make test` runs each fault once, small. `make chaos` (FR_CHAOS=full) runs the long
// version: the demo 100 times, every fault with answers 0, 0.2, 0.5, 1 and 2 s late, 20
// restarts during a 40-approval task, 200 clients, a flood of a million events.
package faults
