#!/usr/bin/env bash
# bench/run.sh: the fr toolkit measured side by side with what users would use instead.
#
#   bench/run.sh            full run (about 5-10 minutes on 2 cores)
#   bench/run.sh --quick    smoke run on small corpora (under a minute)
#   bench/run.sh --only filter,approve   run some sections only
#
# Sections: startup filter filterperf dotnet ls approve report roundtrip attach stream otel latency fleet approvals
# Corpora are generated (deterministic, seeded) into bench/corpus/, tools are built into
# bench/results/bin/, and each run writes bench/results/RUN/results.md (Markdown tables)
# and results.jsonl (every figure as JSON). Nothing is installed: when jq or gojq is
# missing the script says how to get them and skips their rows.
set -uo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
QUICK=0
ONLY=""
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) QUICK=1 ;;
	--only) ONLY=",$2,"; shift ;;
	--only=*) ONLY=",${1#--only=},";;
	-h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench: unknown argument $1 (want --quick, --only SECTIONS)" >&2; exit 2 ;;
	esac
	shift
done

SEED=1
if [ $QUICK = 1 ]; then
	STREAM_SIZE=10MB ENVELOPE_SIZE=16MiB PROMPTS=2000 RUNS=2 WARM=0 REPORT_SIZE=50MB
	LAT_N=100 STREAM_LAT_N=300 TASKS=20 FLOOD=20000 RT_ROUNDS=1 STARTUP_RUNS=5
	FLEET_TASKS=200 FLEET_EVENTS=20000 FLEET_N=5000
	tag=quick
else
	STREAM_SIZE=200MB ENVELOPE_SIZE=1GiB PROMPTS=50000 RUNS=5 WARM=1 REPORT_SIZE=1GB
	LAT_N=500 STREAM_LAT_N=2000 TASKS=200 FLOOD=200000 RT_ROUNDS=2 STARTUP_RUNS=20
	FLEET_TASKS=1000 FLEET_EVENTS=20000 FLEET_N=50000
	tag=full
fi
# A run of some sections only is kept apart, so latest-full is always a whole run.
[ -n "$ONLY" ] && tag=$tag-only

BIN=$ROOT/bench/results/bin
CORPUS=$ROOT/bench/corpus
OUT=$ROOT/bench/results/$(date -u +%Y%m%dT%H%M%SZ)-$tag
mkdir -p "$BIN" "$CORPUS" "$OUT"
MD=$OUT/results.md
JSON=$OUT/results.jsonl
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fr-bench.XXXXXX")
DAEMON_PID="" LAT_PID=""
cleanup() {
	for p in $DAEMON_PID $LAT_PID; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export PATH=$BIN:$PATH
# every latency sample of harness lat, "label seq sent-µs latency-µs", to look into outliers
export HARNESS_DUMP=$OUT/latency-samples.txt

say() { printf '%s\n' "$*" | tee -a "$MD"; }
note() { printf 'bench: %s\n' "$*" >&2; }
want() { [ -z "$ONLY" ] || [[ $ONLY == *",$1,"* ]]; }
# table runs the harness and appends its Markdown to the results.
table() { local sub=$1; shift; harness "$sub" -json "$JSON" "$@" | tee -a "$MD"; }

start=$(date +%s)
note "writing $OUT"

# ---- build: the harness, the stand-in child, and every tool that builds today
go build -o "$BIN/" ./bench/harness ./bench/fakeraft ./bench/gen || { note "cannot build bench/"; exit 1; }
declare -A AVAIL
for t in fr-filter fr-ls fr-approve fr-stream fr-attach fr-sim fr-report fr-worker fr-dispatch fr-otel; do
	if go build -o "$BIN/" "./cmd/$t" 2>"$TMP/build-$t.err"; then
		AVAIL[$t]=1
	else
		AVAIL[$t]=0
		note "$t does not build: $(head -1 "$TMP/build-$t.err")"
	fi
done
# probes: a tool that builds but cannot do the job yet counts as not available
probe() { # TOOL INPUT WANT ARGS...
	local t=$1 in=$2 wantOut=$3
	shift 3
	[ "${AVAIL[$t]}" = 1 ] || return
	local got
	got=$(printf '%s\n' "$in" | timeout 10 "$t" "$@" 2>"$TMP/probe-$t.err")
	if [ "$got" != "$wantOut" ]; then
		AVAIL[$t]=0
		note "$t fails its probe ($t $*): got '${got:0:80}' $(head -1 "$TMP/probe-$t.err")"
	fi
}
probe fr-filter '{"type":"approval_request","kind":"x"}' '{"type":"approval_request","kind":"x"}' --type approval_request
probe fr-ls '{"protocolVersion":1,"items":[{"a":1},{"b":"é"}]}' "$(printf '{"a":1}\n{"b":"é"}')" -
probe fr-approve '{"type":"approval_request","kind":"shell_command","command":"rm -rf /"}' '{"type":"approval_response","approved":false}' --policy "$ROOT/examples/ci-go.yaml" --tty /dev/null
probe fr-otel '{"type":"token","text":"x"}' '{"type":"token","text":"x"}' --otlp-file /dev/null
for t in fr-stream fr-attach fr-sim fr-report fr-otel; do [ "${AVAIL[$t]}" = 1 ] && { timeout 10 "$t" --version >/dev/null 2>&1 || AVAIL[$t]=0; }; done
have() { [ "${AVAIL[$1]:-0}" = 1 ]; }
skip() { say ""; say "_$1 not available in this build: rows skipped._"; say ""; }

HAVE_JQ=0 HAVE_GOJQ=0
if command -v jq >/dev/null; then HAVE_JQ=1; else note "jq not found: its rows are skipped (get it with: apt-get install jq)"; fi
if command -v gojq >/dev/null; then HAVE_GOJQ=1; else note "gojq not found: its rows are skipped (get it with: go install github.com/itchyny/gojq/cmd/gojq@v0.12.19)"; fi

# ---- the machine
{
	echo "# fr benchmark results ($tag run)"
	echo
	echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (tree with changes)')"
	echo "- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/{print $2}') GiB memory, $(uname -sr)"
	echo "- $(go version)"
	echo "- jq: $([ $HAVE_JQ = 1 ] && jq --version || echo 'not installed (apt-get install jq)')"
	echo "- gojq: $([ $HAVE_GOJQ = 1 ] && gojq --version || echo 'not installed (go install github.com/itchyny/gojq/cmd/gojq@v0.12.19)')"
	echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	na=$(for t in "${!AVAIL[@]}"; do [ "${AVAIL[$t]}" = 1 ] || printf '%s ' "$t"; done)
	echo "- not available: ${na:-none}"
	echo
} | tee "$MD"

# ---- corpora (generated once per seed and size; bench/corpus/ is git-ignored)
corpus() { # NAME GEN-ARGS...
	local f=$CORPUS/$1
	shift
	if [ ! -s "$f" ]; then
		note "generating $f"
		gen -seed $SEED "$@" -o "$f" || { note "cannot generate $f"; exit 1; }
	fi
	echo "$f"
}
STREAM=$(corpus "stream-s$SEED-$STREAM_SIZE.jsonl" -size "$STREAM_SIZE")

# ---- start-up
if want startup; then
	rows=(true=true)
	for t in fr-filter fr-ls fr-approve fr-stream fr-attach fr-sim; do have $t && rows+=("$t=$t --version"); done
	[ $HAVE_JQ = 1 ] && rows+=("jq=jq --version")
	[ $HAVE_GOJQ = 1 ] && rows+=("gojq=gojq --version")
	table run -runs "$STARTUP_RUNS" -warmup 2 -title "Start-up: --version against true" "${rows[@]}"
fi

# ---- fr-filter against jq, gojq and the floors
if want filter; then
	if ! have fr-filter; then skip fr-filter; fi
	sel='select(.type=="approval_request")'
	rows=()
	have fr-filter && rows+=("fr-filter=fr-filter --type approval_request")
	[ $HAVE_JQ = 1 ] && rows+=("jq=jq -c '$sel'")
	[ $HAVE_GOJQ = 1 ] && rows+=("gojq=gojq -c '$sel'")
	rows+=("go-scan=harness scan -type approval_request" "cat=cat" "wc-l=wc -l")
	table run -runs $RUNS -warmup $WARM -in "$STREAM" -title "fr-filter --type approval_request (= jq -c '$sel')" "${rows[@]}"

	f='select(.type=="tool_result" and .ok==false) | {id,name}'
	rows=()
	have fr-filter && rows+=("fr-filter=fr-filter '$f'")
	[ $HAVE_JQ = 1 ] && rows+=("jq=jq -c '$f'")
	[ $HAVE_GOJQ = 1 ] && rows+=("gojq=gojq -c '$f'")
	[ ${#rows[@]} -gt 1 ] && table run -runs $RUNS -warmup $WARM -in "$STREAM" -base gojq -title "fr-filter '$f'" "${rows[@]}"

	f='select(.type=="token") | .text'
	rows=()
	have fr-filter && rows+=("fr-filter=fr-filter -r '$f'")
	[ $HAVE_JQ = 1 ] && rows+=("jq=jq -r '$f'")
	[ $HAVE_GOJQ = 1 ] && rows+=("gojq=gojq -r '$f'")
	[ ${#rows[@]} -gt 1 ] && table run -runs $RUNS -warmup $WARM -in "$STREAM" -base gojq -title "fr-filter -r '$f'" "${rows[@]}"
fi

# ---- fr-filter's three costs beside jq and gojq: a parameterised select, a 200 MB line, start-up
if want filterperf; then
	rows=()
	have fr-filter && rows+=("fr-filter-literal=fr-filter 'select(.type == \"tool_call\")'" "fr-filter-arg=fr-filter --arg t tool_call 'select(.type == \$t)'")
	[ $HAVE_JQ = 1 ] && rows+=("jq-literal=jq -c 'select(.type == \"tool_call\")'" "jq-arg=jq -c --arg t tool_call 'select(.type == \$t)'")
	[ $HAVE_GOJQ = 1 ] && rows+=("gojq-literal=gojq -c 'select(.type == \"tool_call\")'" "gojq-arg=gojq -c --arg t tool_call 'select(.type == \$t)'")
	[ ${#rows[@]} -gt 0 ] && table run -runs $RUNS -warmup $WARM -in "$STREAM" -title "select(.type == \$t) with --arg t tool_call against the literal" "${rows[@]}"

	BIG=$(corpus "bigline-s$SEED-200MB.jsonl" -kind bigline -size 200MB)
	rows=()
	have fr-filter && rows+=("fr-filter-dropped=fr-filter --type token" "fr-filter-passed=fr-filter .")
	[ $HAVE_JQ = 1 ] && rows+=("jq-dropped=jq -c 'select(.type == \"token\")'" "jq-passed=jq -c .")
	[ $HAVE_GOJQ = 1 ] && rows+=("gojq-dropped=gojq -c 'select(.type == \"token\")'" "gojq-passed=gojq -c .")
	[ ${#rows[@]} -gt 0 ] && table run -runs 2 -warmup 0 -in "$BIG" -title "A 200 MB tool_result line between two tokens: dropped (--type token) and passed (.); see max RSS" "${rows[@]}"

	rows=(true=true)
	have fr-filter && rows+=("fr-filter=fr-filter ." "fr-filter-version=fr-filter --version")
	[ $HAVE_JQ = 1 ] && rows+=("jq=jq ." "jq-version=jq --version")
	[ $HAVE_GOJQ = 1 ] && rows+=("gojq=gojq ." "gojq-version=gojq --version")
	table run -runs "$STARTUP_RUNS" -warmup 2 -title "Start-up: '.' on empty input, and --version" "${rows[@]}"
fi

# ---- .NET-style JSON with noise lines: jq needs -R and fromjson? to survive the noise
if want dotnet; then
	DOTNET=$(corpus "stream-s$SEED-$STREAM_SIZE-dotnet-noise.jsonl" -size "$STREAM_SIZE" -dotnet -noise)
	sel='select(.type=="approval_request")'
	rows=()
	have fr-filter && rows+=("fr-filter=fr-filter --type approval_request" "fr-filter-decode=fr-filter -c '$sel'")
	[ $HAVE_JQ = 1 ] && rows+=("jq=jq -cR 'fromjson? | objects | $sel'")
	[ $HAVE_GOJQ = 1 ] && rows+=("gojq=gojq -cR 'fromjson? | objects | $sel'")
	rows+=("go-scan=harness scan -type approval_request")
	table run -runs $RUNS -warmup $WARM -in "$DOTNET" -title "approval_request from .NET-escaped JSON with 1% noise lines" "${rows[@]}"
fi

# ---- fr-ls on a large envelope
if want ls; then
	ENVELOPE=$(corpus "sessions-s$SEED-$ENVELOPE_SIZE.json" -kind envelope -size "$ENVELOPE_SIZE")
	if have fr-ls; then
		rows=("fr-ls=fr-ls -")
		[ $HAVE_JQ = 1 ] && rows+=("jq=jq -c '.items[]'")
		[ $QUICK = 1 ] && [ $HAVE_GOJQ = 1 ] && rows+=("gojq=gojq -c '.items[]'")
		rows+=("cat=cat")
		# Three runs even in a full run (jq takes over half a minute each): one run is at the
		# mercy of a single slow moment of the machine.
		if [ $QUICK = 1 ]; then lr=$RUNS; else lr=3; fi
		table run -runs $lr -warmup 0 -in "$ENVELOPE" -title "fr-ls - on one envelope of Session items (= jq -c '.items[]')" "${rows[@]}"
	else
		skip fr-ls
	fi
fi

# ---- fr-report: a whole session reported, in bounded memory, beside jq reading it
if want report; then
	SESSION=$(corpus "stream-s$SEED-$REPORT_SIZE.jsonl" -size "$REPORT_SIZE")
	if have fr-report; then
		rows=("fr-report-markdown=fr-report" "fr-report-json=fr-report --format json")
		[ $HAVE_JQ = 1 ] && rows+=("jq-results=jq -c 'select(.type==\"result\" or .type==\"message_end\")'")
		[ $HAVE_GOJQ = 1 ] && rows+=("gojq-results=gojq -c 'select(.type==\"result\" or .type==\"message_end\")'")
		rows+=("cat=cat")
		table run -runs 2 -warmup 0 -in "$SESSION" -title "fr-report over a $REPORT_SIZE session (max RSS: bounded memory), beside jq and gojq only reading it" "${rows[@]}"
	else
		skip fr-report
	fi
fi

# ---- fr-otel: a whole session passed on and exported, beside cat and fr-filter --type
if want otel; then
	SESSION=$(corpus "stream-s$SEED-$REPORT_SIZE.jsonl" -size "$REPORT_SIZE")
	if have fr-otel && have fr-filter; then
		# a collector that is there (OTLP JSON to a file) and one that is not (nothing listens)
		DEAD=http://127.0.0.1:9
		rows=("cat=cat" "fr-filter-type=fr-filter --type approval_request"
			"fr-otel-file=fr-otel --otlp-file $TMP/otel.jsonl"
			"fr-otel-dead=fr-otel --endpoint $DEAD --shutdown-timeout 1s")
		table run -runs 2 -warmup 0 -in "$SESSION" -base cat -title "fr-otel over a $REPORT_SIZE session (CPU beside fr-filter --type; max RSS: bounded memory)" "${rows[@]}"
		say "fr-otel-file writes every span, metric and log record as OTLP JSON to a file; fr-otel-dead sends to a port where nothing listens (everything dropped and counted, the pipe unchanged). Each fr-otel row ends with its export's shutdown (at most 1 s for the dead collector)."
		say ""
		rows=("direct=-" "cat=cat" "fr-filter-type=fr-filter --type token"
			"fr-otel=fr-otel --otlp-file $TMP/otel-lat.jsonl" "fr-otel-dead=fr-otel --endpoint $DEAD --shutdown-timeout 1s")
		# fr-otel, like fr-filter, takes 100 to 250 ms to start on a busy machine: lines written
		# in its first half second wait for its start, and are not counted
		OTEL_LAT_N=$((STREAM_LAT_N + 500))
		table lat -rate 1000 -n "$OTEL_LAT_N" -runs 2 -warmup 500 -title "fr-otel added latency per line: token events at 1,000/s through a pipe" "${rows[@]}"
		# approval requests: each one decoded, a span ended and one started, a log record made
		rows=("direct=-" "cat=cat" "fr-otel=fr-otel --otlp-file $TMP/otel-lat.jsonl" "fr-otel-dead=fr-otel --endpoint $DEAD --shutdown-timeout 1s")
		table lat -event approval -rate 1000 -n "$OTEL_LAT_N" -runs 2 -warmup 500 -title "fr-otel added latency per line: approval requests (each one a span and a log record) at 1,000/s through a pipe" "${rows[@]}"
	else
		skip "fr-otel or fr-filter"
	fi
fi

# ---- fr-approve: decisions per second and decision latency with a 200-rule policy
if want approve; then
	POLICY=$(corpus "policy-s$SEED-200.yaml" -kind policy -rules 200)
	PROMPTS_F=$(corpus "prompts-s$SEED-$PROMPTS.jsonl" -kind prompts -n "$PROMPTS")
	if have fr-approve; then
		rows=("fr-approve=fr-approve --policy $POLICY --tty /dev/null"
			"fr-approve-check=fr-approve check --policy $POLICY"
			"answer-decode=harness answer -decode"
			"answer-all=harness answer")
		[ $HAVE_JQ = 1 ] && rows+=("jq-answer-all=jq -c 'select(.type==\"approval_request\") | {type:\"approval_response\",approved:true}'")
		table run -runs $RUNS -warmup $WARM -in "$PROMPTS_F" -items "$PROMPTS" -items-name decisions \
			-title "fr-approve: $PROMPTS prompts of all four kinds, 200-rule policy" "${rows[@]}"
		rows=("direct=-" "answer-all=harness answer" "fr-approve=fr-approve --policy $POLICY --tty /dev/null")
		table lat -rate 1000 -n $((LAT_N * 2)) -runs 2 -warmup 20 -event approval \
			-title "fr-approve decision latency: shell_command prompts at 1,000/s, 200-rule policy" "${rows[@]}"
	else
		skip fr-approve
	fi
fi

# ---- fr-sim serve for the daemon sections
start_daemon() {
	[ -n "$DAEMON_PID" ] && return 0
	sed "s/FLOOD_COUNT/$FLOOD/" "$ROOT/bench/serve-scenario.yaml" >"$TMP/scenario.yaml"
	export FUSERAFT_HOME=$TMP/home
	fr-sim --scenario "$TMP/scenario.yaml" serve --socket "$TMP/serve.sock" --port 0 --ready-file "$TMP/ready.json" 2>"$TMP/serve.err" &
	DAEMON_PID=$!
	for _ in $(seq 100); do [ -s "$TMP/ready.json" ] && break; sleep 0.05; done
	if [ ! -s "$TMP/ready.json" ]; then note "fr-sim serve did not start: $(head -2 "$TMP/serve.err")"; return 1; fi
	SOCK=$TMP/serve.sock
	URL=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$TMP/ready.json")
}

# ---- a whole pipeline: fr-sim serve | fr-attach | fr-filter | fr-approve, answers back through a FIFO
if want roundtrip; then
	if have fr-sim && have fr-attach && have fr-filter && have fr-approve && start_daemon; then
		POLICY=$(corpus "policy-s$SEED-200.yaml" -kind policy -rules 200)
		{ cat "$POLICY"; printf '  - name: bench-echo\n    decision: allow\n    shell: [echo]\n'; } >"$TMP/policy.yaml"
		tasks=()
		for i in $(seq "$TASKS"); do tasks+=(--task "approve $i"); done
		RT=$OUT/roundtrip.jsonl
		pipeline() { # VARIANT
			rm -f "$TMP/answers"
			mkfifo "$TMP/answers"
			case $1 in
			fr) timeout 300 fr-attach --socket "$SOCK" --input "$TMP/answers" --exit-on-result "${tasks[@]}" |
				harness tap -label "fr-filter + fr-approve" -o "$RT" |
				fr-filter --type approval_request |
				fr-approve --policy "$TMP/policy.yaml" --tty /dev/null --output "$TMP/answers" ;;
			jq) timeout 300 fr-attach --socket "$SOCK" --input "$TMP/answers" --exit-on-result "${tasks[@]}" |
				harness tap -label "jq --unbuffered (approves all)" -o "$RT" |
				jq --unbuffered -c 'select(.type=="approval_request") | {type:"approval_response",approved:true}' >"$TMP/answers" ;;
			floor) timeout 300 fr-attach --socket "$SOCK" --input "$TMP/answers" --exit-on-result "${tasks[@]}" |
				harness tap -label "Go answer-all (floor)" -o "$RT" |
				harness answer -o "$TMP/answers" ;;
			esac
			local rc=("${PIPESTATUS[@]}")
			[ "${rc[0]}" = 0 ] || note "round trip $1: fr-attach exit ${rc[0]} (pipeline ${rc[*]})"
		}
		variants=(fr floor)
		[ $HAVE_JQ = 1 ] && variants+=(jq)
		for _ in $(seq "$RT_ROUNDS"); do for v in "${variants[@]}"; do pipeline "$v"; done; done
		harness report -title "Approval round trip through fr-sim serve, fr-attach, the answerer and a FIFO ($TASKS tasks x $RT_ROUNDS rounds)" "$RT" | tee -a "$MD"
		cat "$RT" | sed 's/,"samples":\[[^]]*\]//' >>"$JSON"
		say "Measured by \`harness tap\` right after fr-attach: time from an approval_request line to the next line, which the daemon sends only after it has the answer (fr-attach → answerer → FIFO → fr-attach → socket → daemon → socket → fr-attach → tap). Pipeline: \`fr-attach --socket S --input FIFO --exit-on-result --task 'approve 1' ... | harness tap | fr-filter --type approval_request | fr-approve --policy P --output FIFO\`."
		say ""
	else
		skip "fr-sim, fr-attach, fr-filter or fr-approve"
	fi
fi

# ---- fr-attach on a flood against a raw client
if want attach; then
	if have fr-sim && have fr-attach && start_daemon; then
		rows=("raw-socket=harness sock -socket $SOCK -task flood"
			"fr-attach-socket=fr-attach --socket $SOCK --task flood --exit-on-result"
			"raw-websocket=harness ws -batch -url $URL -task flood"
			"fr-attach-websocket=fr-attach --url $URL --task flood --exit-on-result")
		table run -runs $RUNS -warmup $WARM -items "$FLOOD" -title "fr-attach: a flood of $FLOOD token events from fr-sim serve, to stdout" "${rows[@]}"
	else
		skip "fr-sim or fr-attach"
	fi
	if have fr-attach; then
		# fr-sim's events carry no send time: a small daemon of the harness stamps each one.
		harness serve -socket "$TMP/lat.sock" -ready-file "$TMP/lat.json" -rate 1000 -n "$STREAM_LAT_N" 2>"$TMP/lat.err" &
		LAT_PID=$!
		for _ in $(seq 100); do [ -s "$TMP/lat.json" ] && break; sleep 0.05; done
		LURL=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$TMP/lat.json")
		rows=("raw-socket=harness sock -socket $TMP/lat.sock -task lat"
			"fr-attach-socket=fr-attach --socket $TMP/lat.sock --task lat --exit-on-result"
			"raw-websocket=harness ws -url $LURL -task lat"
			"fr-attach-websocket=fr-attach --url $LURL --task lat --exit-on-result")
		table lat -child -runs 2 -title "fr-attach per-event latency: $STREAM_LAT_N events at 1,000/s from a daemon stamping each one" "${rows[@]}"
		kill "$LAT_PID" 2>/dev/null
		wait "$LAT_PID" 2>/dev/null
		LAT_PID=""
	fi
fi

# ---- fr-stream: throughput on a flood, and added latency at 1,000 events/s
if want stream; then
	if have fr-stream; then
		# Floors of a relay: the child's stdout copied by a second process, every line looked
		# at and moved out as fr-stream does (tee and splice, no validation), and its lines
		# passed on when encoding/json.Valid accepts them (what fr-stream must at least do).
		rows=("direct=fakeraft repl --vscode --no-banner" "fr-stream=fr-stream repl --fuseraft $BIN/fakeraft"
			"relay-copy=harness relay fakeraft repl --vscode --no-banner"
			"relay-peek=harness relay -peek fakeraft repl --vscode --no-banner"
			"relay-json-valid=harness relay -valid fakeraft repl --vscode --no-banner")
		table run -runs $RUNS -warmup $WARM -env "FAKERAFT_FILE=$STREAM" -in /dev/null \
			-title "fr-stream: a child flooding the events of $(basename "$STREAM") ($STREAM_SIZE)" "${rows[@]}"
		if have fr-sim; then
			printf 'hello\n' >"$TMP/hello.txt"
			rows=("fr-sim-direct=fr-sim repl --vscode --no-banner" "fr-stream=fr-stream repl --fuseraft $BIN/fr-sim"
				"relay-copy=harness relay fr-sim repl --vscode --no-banner"
				"relay-peek=harness relay -peek fr-sim repl --vscode --no-banner")
			table run -runs $RUNS -warmup $WARM -env "FRSIM_FAULTS=flood=$FLOOD" -env FRSIM_PACE=0 -in "$TMP/hello.txt" -items "$FLOOD" \
				-title "fr-stream: fr-sim repl flooding $FLOOD token events" "${rows[@]}"
		fi
		rows=("direct=fakeraft repl --vscode --no-banner" "fr-stream=fr-stream repl --fuseraft $BIN/fakeraft")
		table lat -child -runs 2 -env "FAKERAFT_N=$STREAM_LAT_N" -env FAKERAFT_RATE=1000 \
			-title "fr-stream added latency: $STREAM_LAT_N token events at 1,000/s from the child" "${rows[@]}"
	else
		skip fr-stream
	fi
fi

# ---- fr-filter added latency through a pipe at 100 events/s
if want latency; then
	rows=("direct=-" "cat=cat")
	have fr-filter && rows+=("fr-filter-type=fr-filter --type token" "fr-filter-jq=fr-filter -r .text")
	[ $HAVE_JQ = 1 ] && rows+=("jq-unbuffered=jq --unbuffered -r .text")
	table lat -rate 100 -n "$LAT_N" -runs 2 -warmup 10 -title "Latency through a pipe at 100 events/s" "${rows[@]}"
fi

# ---- the fleet: tasks over 10 daemons and workers against one daemon, events through a worker
if want fleet; then
	if have fr-sim && have fr-worker && have fr-dispatch; then
		harness fleet -tasks "$FLEET_TASKS" -daemons 10 -events "$FLEET_EVENTS" -lat-n "$STREAM_LAT_N" \
			-scenario bench/fleet-scenario.yaml -json "$JSON" | tee -a "$MD"
		say "Measured by \`harness fleet\` (bench/harness/fleet.go) on an embedded NATS server with JetStream (file store): fr-sim daemons playing bench/fleet-scenario.yaml (100ms a task), one fr-worker each; the one-daemon row is \`fr-dispatch --url MCP run --parallel 100 --poll 20ms --max-poll 200ms\` on the same tasks. Relay latency: harness serve stamps each event as it writes it; the direct row reads the daemon's socket, the fleet row a NATS subscriber behind fr-worker."
	else
		skip "fr-sim, fr-worker or fr-dispatch"
	fi
fi

# ---- a fleet's decisions through NATS (two fr-approve --nats) beside fr-approve on a pipe
if want approvals; then
	POLICY=$(corpus "policy-s$SEED-200.yaml" -kind policy -rules 200)
	PROMPTS_F=$(corpus "prompts-s$SEED-$PROMPTS.jsonl" -kind prompts -n "$PROMPTS")
	if have fr-approve; then
		table lat -rate 1000 -n $((LAT_N * 2)) -runs 1 -warmup 20 -event approval \
			-title "fleet: fr-approve on a pipe, shell_command prompts at 1,000/s, 200-rule policy" "fr-approve-pipe=fr-approve --policy $POLICY --tty /dev/null"
		table approvals -approver "fr-approve --policy $POLICY --tty /dev/null --root $TMP" -approvers 2 -workers 3 \
			-n "$FLEET_N" -inflight 128 -lat-n $((LAT_N * 2)) -rate 1000 -in "$PROMPTS_F" \
			-title "fleet: decisions through NATS, two fr-approve --nats, 200-rule policy"
	else
		skip fr-approve
	fi
fi

harness goals "$JSON" | tee -a "$MD"

end=$(date +%s)
say ""
say "Total time: $((end - start)) s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
ln -sfn "$(basename "$OUT")" "$ROOT/bench/results/latest-$tag"
note "results: $MD"
