#!/usr/bin/env bash
# fr fleet demo: one machine, three fuseraft daemons (fr-sim serve), a worker beside each, the
# first running an embedded NATS server with JetStream; 30 tasks dispatched to the pool and
# collected, one result line per task, and how the three hosts shared them.
#
#   make build && bash demo/fleet.sh        (or: make demo-fleet)
#
# It uses ./bin when `make build` has filled it, else the fr commands on PATH, and nothing
# else: no NATS to install. It exits 0 when every task succeeded, and leaves nothing behind.
# Environment: FR_DEMO_TASKS (how many tasks, default 30).
set -eu

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -x "$root/bin/fr-worker" ]; then
	PATH="$root/bin:$PATH"
fi
for cmd in fr-sim fr-worker fr-dispatch fr-filter; do
	if ! command -v "$cmd" >/dev/null 2>&1; then
		echo "demo: error: $cmd not found in ./bin or on PATH" >&2
		echo "demo: hint: run 'make build' first, or use 'make demo-fleet'" >&2
		exit 10
	fi
done
n=${FR_DEMO_TASKS:-30}
unset FRSIM_FAULTS FRSIM_RECORD FUSERAFT_SERVE_TOKEN FR_NATS_URL
export FRSIM_SCENARIO=$root/demo/fleet-scenario.yaml

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fr-fleet.XXXXXX")
if [ ${#tmp} -gt 80 ]; then
	rmdir "$tmp"
	tmp=$(mktemp -d /tmp/fr-fleet.XXXXXX)
fi
pids=''
cleanup() {
	trap '' INT TERM
	# Workers first (they drain), the one with the embedded server last, then the daemons.
	for pid in $pids; do kill -TERM "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# waitfile FILE PID WHAT: wait until FILE has content, or PID is gone.
waitfile() {
	local tries=0
	until [ -s "$1" ]; do
		if ! kill -0 "$2" 2>/dev/null || [ $tries -ge 600 ]; then
			echo "demo: error: $3 did not start" >&2
			cat "$tmp"/*.err >&2 2>/dev/null || true
			exit 10
		fi
		tries=$((tries + 1))
		sleep 0.05
	done
}

# 1. Three daemons, each with its own home, socket and state.
for i in 1 2 3; do
	FUSERAFT_HOME=$tmp/home$i fr-sim serve --socket "$tmp/d$i.sock" --ready-file "$tmp/d$i.json" 2>"$tmp/d$i.err" &
	pid=$!
	pids="$pid $pids"
	waitfile "$tmp/d$i.json" "$pid" "daemon $i"
done

# 2. The first worker runs the NATS server (a free port on loopback); the others join it.
fr-worker --embedded-nats 127.0.0.1:0 --nats-store "$tmp/nats" --ready-file "$tmp/nats.json" \
	--socket "$tmp/d1.sock" --host host1 2>"$tmp/w1.err" &
pid=$!
pids="$pid $pids"
waitfile "$tmp/nats.json" "$pid" "the first worker"
url=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$tmp/nats.json")
for i in 2 3; do
	fr-worker --nats "$url" --socket "$tmp/d$i.sock" --host "host$i" --ready-file "$tmp/w$i.json" 2>"$tmp/w$i.err" &
	pid=$!
	pids="$pid $pids"
	waitfile "$tmp/w$i.json" "$pid" "worker $i"
done
echo "fleet demo: NATS JetStream at $url, 3 daemons, 3 workers, $n tasks" >&2

# 3. Dispatch and collect: one result line per task, in the order they finish.
status=0
seq 1 "$n" | sed 's/^/fix the lint in package /' |
	fr-dispatch --nats "$url" run --parallel "$n" >"$tmp/results.jsonl" || status=$?
fr-filter -c '{taskId, host, status, lastMessage}' <"$tmp/results.jsonl"
echo >&2
echo "tasks per host:" >&2
fr-filter -r .host <"$tmp/results.jsonl" | sort | uniq -c >&2
echo "$(wc -l <"$tmp/results.jsonl") results for $n tasks; fr-dispatch exited $status" >&2
exit $status
