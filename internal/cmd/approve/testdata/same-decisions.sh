#!/bin/bash
# same-decisions.sh OLD NEW POLICY... -- STREAM...: the decisions of two fr-approve builds,
# byte for byte, with each policy on each recorded stream: `check` (one row per prompt, with
# the rule, part and reason) and the answers of the daemon. Run it from the directory that is
# the root for file_write paths. Exit 1 when any output differs.
#
#   go run ./bench/gen -kind policy -rules 2000 -seed 1 > /tmp/p2000.yaml
#   internal/cmd/approve/testdata/same-decisions.sh /tmp/old/fr-approve ./fr-approve \
#     bench/corpus/policy-s1-200.yaml /tmp/p2000.yaml -- bench/corpus/prompts-s1-50000.jsonl
set -u
old=$1 new=$2
shift 2
policies=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do policies+=("$1"); shift; done
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
for pol in "${policies[@]}"; do
	for in in "$@"; do
		for bin in old new; do
			b=${!bin}
			"$b" check --policy "$pol" < "$in" > "$out/$bin.check" 2> "$out/$bin.err"
			"$b" --policy "$pol" --tty /dev/null < "$in" > "$out/$bin.serve" 2>> "$out/$bin.err"
		done
		for x in check serve err; do
			if cmp -s "$out/old.$x" "$out/new.$x"; then
				echo "same: $pol $in $x ($(wc -l < "$out/new.$x") lines)"
			else
				echo "DIFFERENT: $pol $in $x"
				fail=1
			fi
		done
	done
done
exit $fail
