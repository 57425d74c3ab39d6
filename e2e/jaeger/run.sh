#!/usr/bin/env bash
# e2e/jaeger/run.sh (make e2e-otel): sessions recorded from fr-sim in each mode (a chat, a run, a
# failed run, a daemon's task) sent by fr-otel to a real Jaeger v2, over OTLP/HTTP and OTLP/gRPC,
# and each trace read back through Jaeger's query API: every span fr-otel made is there, under
# the same trace, with the same names and parents.
#
# Jaeger v1.75.0 is built from the Go module proxy in a module of its own (e2e/jaeger/go.mod),
# so its dependencies never reach fr's go.mod. The first build takes long (half an hour on two
# busy cores); later ones come from the build cache. Everything listens on loopback.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BIN=$ROOT/bin
mkdir -p "$BIN"
say() { printf 'e2e-otel: %s\n' "$*" >&2; }

say "building jaeger (e2e/jaeger: github.com/jaegertracing/jaeger v1.75.0)"
(cd e2e/jaeger && go build -o "$BIN/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger)
go build -o "$BIN/" ./cmd/fr-otel ./cmd/fr-sim ./cmd/fr-stream ./cmd/fr-attach ./cmd/fr-filter
export PATH=$BIN:$PATH

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fr-e2e-otel.XXXXXX")
JPID="" DPID=""
cleanup() {
	for p in $JPID $DPID; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# four free loopback ports, below Linux's range of ephemeral ports (32768 and up), where a
# client's connection could hold one that nothing listens on
TAKEN=" "
free_port() {
	local p
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 12000))
		[[ $TAKEN == *" $p "* ]] && continue
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then TAKEN="$TAKEN$p "; echo "$p"; return; fi
	done
	say "no free port"; exit 1
}
E2E_OTLP_HTTP=$(free_port); TAKEN="$TAKEN$E2E_OTLP_HTTP "
E2E_OTLP_GRPC=$(free_port); TAKEN="$TAKEN$E2E_OTLP_GRPC "
E2E_QUERY_HTTP=$(free_port); TAKEN="$TAKEN$E2E_QUERY_HTTP "
E2E_QUERY_GRPC=$(free_port)
export E2E_OTLP_HTTP E2E_OTLP_GRPC E2E_QUERY_HTTP E2E_QUERY_GRPC
"$BIN/jaeger" --config "file:$ROOT/e2e/jaeger/config.yaml" >"$TMP/jaeger.log" 2>&1 &
JPID=$!
QUERY=http://127.0.0.1:$E2E_QUERY_HTTP
for i in $(seq 600); do
	curl -fsS "$QUERY/api/services" >/dev/null 2>&1 && break
	kill -0 "$JPID" 2>/dev/null || { cat "$TMP/jaeger.log" >&2; say "jaeger did not start"; exit 1; }
	[ "$i" = 600 ] && { say "jaeger not answering after 60s"; exit 1; }
	sleep 0.1
done
say "jaeger listening: OTLP http :$E2E_OTLP_HTTP grpc :$E2E_OTLP_GRPC, query $QUERY"

# ---- sessions, recorded from fr-sim with arrival times
export FUSERAFT_BIN=fr-sim FRSIM_PACE=0
cd "$TMP"
printf 'read the parser\n' | fr-stream --arrival-time repl >chat.jsonl
fr-stream --arrival-time run -c team.yaml "fix the parser" </dev/null >run-failed.jsonl || true
cat >pass.yaml <<'YAML'
version: 1
run:
  agents: [planner, coder]
  steps:
    - emit: {type: agent_starting, agent: planner}
    - emit: {type: tool_calling, agent: planner, tool: list_files, argsSummary: "."}
    - emit: {type: agent_starting, agent: coder}
    - emit: {type: tool_calling, agent: coder, tool: run_shell, argsSummary: "go test ./..."}
YAML
FRSIM_SCENARIO=$TMP/pass.yaml fr-stream --arrival-time run -c team.yaml "fix the parser" </dev/null >run.jsonl
fr-sim serve --socket "$TMP/d.sock" --ready-file "$TMP/ready.json" 2>/dev/null &
DPID=$!
for _ in $(seq 300); do [ -s "$TMP/ready.json" ] && break; sleep 0.1; done
fr-attach --socket "$TMP/d.sock" --arrival-time --task "fix the parser" --exit-on-result </dev/null >daemon.jsonl 2>/dev/null || true

# ---- each sent to Jaeger, and read back
fail=0
check() { # SESSION PROTOCOL ENDPOINT
	local s=$1 proto=$2 ep=$3
	fr-otel --signals traces --otlp-file "$s.otlp" "$s.jsonl" >/dev/null
	fr-otel --signals traces --strict --protocol "$proto" --endpoint "$ep" "$s.jsonl" >"$s.out" ||
		{ say "$s: fr-otel could not deliver to jaeger"; fail=1; return; }
	cmp -s "$s.jsonl" "$s.out" || { say "$s: fr-otel's stdout is not its input"; fail=1; }
	for id in $(fr-filter -r '.resourceSpans[].scopeSpans[].spans[].traceId' "$s.otlp" | sort -u); do
		local want got
		want=$(fr-filter -r --arg id "$id" '.resourceSpans[].scopeSpans[].spans[] | select(.traceId == $id)
			| "\(.spanId) \(.parentSpanId // "-") \(.name)"' "$s.otlp" | sort)
		for i in $(seq 300); do
			got=$(curl -fsS "$QUERY/api/traces/$id" 2>/dev/null | fr-filter -r '.data[].spans[]
				| "\(.spanID) \([.references[] | select(.refType == "CHILD_OF") | .spanID][0] // "-") \(.operationName)"' | sort) || true
			[ "$got" = "$want" ] && break
			sleep 0.1
		done
		if [ "$got" = "$want" ]; then
			say "$s ($proto): trace $id: $(printf '%s\n' "$want" | wc -l) spans, as sent"
		else
			say "$s ($proto): trace $id differs"; diff <(echo "$want") <(echo "$got") >&2 || true; fail=1
		fi
	done
}
check chat http/protobuf "http://127.0.0.1:$E2E_OTLP_HTTP"
check run grpc "http://127.0.0.1:$E2E_OTLP_GRPC"
check run-failed http/protobuf "http://127.0.0.1:$E2E_OTLP_HTTP"
check daemon grpc "http://127.0.0.1:$E2E_OTLP_GRPC"
[ $fail = 0 ] && say "all traces read back from jaeger as sent"
exit $fail
