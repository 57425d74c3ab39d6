#!/usr/bin/env bash
# fr demo: a fuseraft daemon (fr-sim serve, playing its embedded scenario), a task dispatched
# to it with fr-attach, its approval prompts answered by a policy with fr-approve through a
# named pipe, and the session rendered for a person with fr-filter --pretty.
#
#   make build && bash demo/run.sh        (or: make demo)
#
# It uses ./bin when `make build` has filled it, else the fr commands already on PATH. It exits
# with the task's outcome (fr-attach --exit-on-result: 0 succeeded, 1 failed) and leaves
# nothing behind: the daemon is stopped and the temporary directory removed on every exit.
#
# Environment: FR_DEMO_TASK (the task text), FR_DEMO_POLICY (another policy file),
# FR_DEMO_SCENARIO (an fr-sim scenario file to play instead of the embedded one),
# NO_COLOR (no colour even on a terminal).
set -eu

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -x "$root/bin/fr-sim" ]; then
	PATH="$root/bin:$PATH"
fi
for cmd in fr-sim fr-attach fr-approve fr-filter; do
	if ! command -v "$cmd" >/dev/null 2>&1; then
		echo "demo: error: $cmd not found in ./bin or on PATH" >&2
		echo "demo: hint: run 'make build' first, or use 'make demo'" >&2
		exit 10
	fi
done

policy=${FR_DEMO_POLICY:-$root/demo/policy.yaml}
task=${FR_DEMO_TASK:-make Parse keep quoted words together}

# The daemon plays fr-sim's embedded scenario (or FR_DEMO_SCENARIO), whatever the caller's
# environment says.
unset FRSIM_SCENARIO FRSIM_FAULTS FRSIM_RECORD FUSERAFT_SERVE_TOKEN
if [ -n "${FR_DEMO_SCENARIO:-}" ]; then
	export FRSIM_SCENARIO=$FR_DEMO_SCENARIO
fi

# Colour for the summary only when stdout is a terminal (fr-filter decides the same way).
bold='' dim='' green='' red='' off=''
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ] && [ "${TERM:-dumb}" != dumb ]; then
	bold=$'\033[1m' dim=$'\033[2m' green=$'\033[32m' red=$'\033[31m' off=$'\033[0m'
fi

# A short directory: a Unix socket path must fit in 104 bytes.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fr-demo.XXXXXX")
if [ ${#tmp} -gt 80 ]; then
	rmdir "$tmp"
	tmp=$(mktemp -d /tmp/fr-demo.XXXXXX)
fi
daemon='' approver=''
cleanup() {
	trap '' INT TERM
	# Stopping the daemon ends fr-attach (--max-reconnects 0), and so the whole pipeline.
	for pid in $daemon $approver; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	# A reader for the events pipe, so that tee never waits for an approver that is gone.
	if [ -p "$tmp/events" ]; then exec 3<>"$tmp/events"; fi
	wait 2>/dev/null || true
	exec 3<&-
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

sock=$tmp/d.sock
log=$tmp/session.jsonl
audit=$tmp/audit.jsonl
export FUSERAFT_HOME=$tmp/home

# 0. The policy's own tests must pass before it answers anything.
fr-approve test --policy "$policy" >/dev/null

# 1. The daemon. It writes --ready-file once it listens; wait for that, not for a guess.
fr-sim serve --socket "$sock" --ready-file "$tmp/ready.json" 2>"$tmp/daemon.err" &
daemon=$!
tries=0
until [ -s "$tmp/ready.json" ]; do
	if ! kill -0 "$daemon" 2>/dev/null || [ $tries -ge 200 ]; then
		echo "demo: error: fr-sim serve did not start" >&2
		cat "$tmp/daemon.err" >&2
		exit 10
	fi
	tries=$((tries + 1))
	sleep 0.05
done

echo "${bold}fr demo${off}: task \"$task\", policy $(basename "$policy")"
echo

# 2. The approver reads the events from one named pipe and writes its answers to another,
#    which fr-attach reads as its input: one approval_response per approval_request, in order.
mkfifo "$tmp/events" "$tmp/answers"
fr-approve --policy "$policy" --audit "$audit" --input "$tmp/events" --output "$tmp/answers" &
approver=$!

# decisions follows the events to the renderer and, after each approval_request, waits for
# the approver's decision of it in the audit log (one record a prompt, in order) and adds it
# under the prompt, with the rule that decided: "┃ ✓ allowed · rule go-tools". The next event
# cannot come before that decision anyway: the task waits for the answer.
decisions() {
	local n=0 line tries
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		'{"type":"approval_request"'* | '{"type": "approval_request"'*) ;;
		*) continue ;;
		esac
		n=$((n + 1))
		tries=0
		until [ -s "$audit" ] && [ "$(wc -l <"$audit")" -ge $n ]; do
			tries=$((tries + 1))
			if ! kill -0 "$approver" 2>/dev/null || [ $tries -ge 600 ]; then
				continue 2 # the approver is gone (fr-attach says so), or stuck
			fi
			sleep 0.05
		done
		sed -n "${n}p" "$audit" | fr-filter -c '{type: "text", text: ("┃ " + (if .decision == "allow" then "✓ allowed" else "✗ denied" end) + " · " + (if .rule then "rule " + .rule else .decider end) + (if .part and .part != (.summary | ltrimstr("shell: ")) then " on: " + .part else "" end))}'
	done
}

# 3. The task: its events go to the log, to the approver and, rendered with the decisions, to
#    the person. (In the background, so that an interrupt is acted on at once; fr-attach's exit
#    status, the task's outcome, and its messages are kept for the end.)
{
	fr-attach --socket "$sock" --task "$task" --exit-on-result --input "$tmp/answers" \
		--max-reconnects 0 2>"$tmp/attach.err"
	echo $? >"$tmp/status"
} | tee "$log" "$tmp/events" | decisions | fr-filter --pretty &

# The approver ends with the event stream. If the stream was cut short (the reader of the
# output went away), fr-attach may still be waiting for an answer: stopping the daemon ends it.
approver_status=0
wait "$approver" || approver_status=$?
approver=''
exec 3<>"$tmp/events" # should the approver have ended early, tee must not wait for a reader
kill -TERM "$daemon" 2>/dev/null || true
wait
daemon=''
exec 3<&-
status=$(cat "$tmp/status" 2>/dev/null || echo 1)
if [ "$approver_status" -ne 0 ]; then
	echo "demo: error: fr-approve failed (exit $approver_status)" >&2
	exit "$approver_status"
fi

# 4. What the policy decided, and why, from fr-approve's hash-chained audit log.
echo
echo "${bold}decisions${off} (fr-approve --audit):"
fr-filter -r '"\(.decision)\t\(.summary)\t\(if .rule then "rule " + .rule else .decider end)\(if .part and .part != (.summary | ltrimstr("shell: ")) then " on: " + .part else "" end)"' "$audit" |
	while IFS=$'\t' read -r decision what why; do
		case $decision in
		allow) mark="${green}allowed${off}" ;;
		*) mark="${red}denied ${off}" ;;
		esac
		printf '  %s  %s  %s(%s)%s\n' "$mark" "$what" "$dim" "$why" "$off"
	done
if fr-approve verify-audit "$audit" >/dev/null; then
	echo "  ${dim}audit chain verified: $(wc -l <"$audit" | tr -d ' ') decisions, $(wc -l <"$log" | tr -d ' ') events logged${off}"
fi
echo
cat "$tmp/attach.err" >&2
denied=$(fr-filter -s 'map(select(.type == "approval_request" and .decision == "deny")) | length' "$audit")
case $status in
0)
	if [ "${denied:-0}" -gt 0 ]; then
		# The task's own result decides: an agent that is denied something goes on without it.
		echo "${bold}task ${green}succeeded${off} (exit 0), with $denied of $(wc -l <"$audit" | tr -d ' ') prompts denied:"
		echo "  the agent finished without what was denied; its last message (above) says what came of it"
	else
		echo "${bold}task ${green}succeeded${off} (exit 0)"
	fi
	;;
1) echo "${bold}task ${red}failed${off} (exit 1)" ;;
*) echo "${bold}fr-attach ended with exit $status${off}" ;;
esac
exit "$status"
