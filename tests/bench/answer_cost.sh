#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Instructions per answer of answer_query, no network: tests/bench/answer-bench
# under valgrind --tool=callgrind, counting only its answer loop, over the
# benchmark's zone and query mix (genzone.sh: 90% names that exist, 10%
# NXDOMAIN). Instruction counts do not move with the machine's load.
#
# With -c, the data cache lines one answer misses on a cold CPU instead:
# answer-bench -c evicts the caches before each answer (as the kernel's work
# between two wake-ups does at a moderate load) and callgrind's cache
# simulation (32 KiB first level, 1 MiB last level, both evicted) counts the
# lines each answer reads and writes again. Instruction fetches are not
# evicted by the data written, so this counts data lines only.
#
# Usage: tests/bench/answer_cost.sh [-c] [-s NAMES] [-n QUERIES] [-D] [-A] [-B BUILDDIR] [BUILDDIR]
#   -c    cache lines a cold answer misses: data read, written, code (default -n 1000)
#   -s    names in the zone (default 10000)
#   -n    queries in the mix, each answered once (default 20000)
#   -D    every query with DO (the zone is not signed: the DO path without RRSIGs)
#   -A    also the build with allow-query set on the zone (answer-bench -a: two entries,
#         the client in the second), on a line of its own
#   -B    another build with tests/bench/answer-bench, measured beside it
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
names=10000 queries="" dnssec="" base="" cold=no allow=""
while getopts "cs:n:DAB:h" opt; do
	case $opt in
	c) cold=yes ;;
	s) names=$OPTARG ;;
	n) queries=$OPTARG ;;
	D) dnssec=DO ;;
	A) allow=yes ;;
	B) base=$OPTARG ;;
	*) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	esac
done
[ -n "$queries" ] || { [ "$cold" = yes ] && queries=1000 || queries=20000; }
shift $((OPTIND - 1))
. "$SRC/tests/bench/servers.sh"
build=$(bench_build "${1:-}")
command -v valgrind >/dev/null || { echo "answer_cost: valgrind missing" >&2; exit 1; }
dir=$(mktemp -d /tmp/shoal-answer-cost.XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$SRC/tests/bench/genzone.sh" bench.test. "$names" "$dir/zone" "$dir/queries" "$queries" 10
if [ "$cold" = yes ]; then
	printf '%-40s %8s %12s %12s %12s\n' build answers "data read" "data written" code
	for b in $build $base; do
		prog=$b/tests/bench/answer-bench
		[ -x "$prog" ] || { echo "answer_cost: $prog missing" >&2; exit 1; }
		valgrind --tool=callgrind --simulate-cache=yes --I1=32768,8,64 --D1=32768,8,64 \
			--LL=1048576,16,64 --toggle-collect='*answer_cold*' --dump-instr=yes \
			--dump-line=no --compress-pos=no --callgrind-out-file="$dir/cg.out" "$prog" -c 1280 \
			"$dir/zone" bench.test. "$dir/queries" 1 $dnssec >"$dir/out" 2>"$dir/err" ||
			{ cat "$dir/err" >&2; exit 1; }
		# Events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw. Code lines: for
		# each 64-octet line of instructions, the share of answers that ran
		# it (its most run instruction's count over the answers, at most 1),
		# summed. A cost line right after calls= is the call's, not an
		# instruction's own.
		awk -v b="$b" -v n="$queries" '
			function hex(s,   i, v) {
				for (i = 1; i <= length(s); i++)
					v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
				return v
			}
			/^calls=/ { call = 1; next }
			/^0x[0-9a-f]+ / {
				if (!call) {
					a = substr($1, 3)
					key = substr(a, 1, length(a) - 2) "/" int(hex(substr(a, length(a) - 1)) / 64)
					if ($2 > most[key])
						most[key] = $2
				}
				call = 0
				next
			}
			{ call = 0 }
			/^summary:/ { read = $6; written = $7 }
			END {
				for (k in most)
					code += most[k] < n ? most[k] / n : 1
				printf "%-40s %8d %12.1f %12.1f %12.1f\n", b, n, read / n, written / n, code
			}' "$dir/cg.out"
	done
	exit 0
fi
printf '%-40s %12s %10s %14s\n' build answers instructions "per answer"
# a run is BUILD, or BUILD+a: the same with answer-bench -a (allow-query set)
for run in $build ${allow:+$build+a} $base; do
	b=${run%+a} flag=""
	[ "$run" != "$b" ] && flag=-a
	prog=$b/tests/bench/answer-bench
	[ -x "$prog" ] || { echo "answer_cost: $prog missing" >&2; exit 1; }
	valgrind --tool=callgrind --toggle-collect='*answer_rounds*' \
		--callgrind-out-file="$dir/cg.out" "$prog" $flag "$dir/zone" bench.test. \
		"$dir/queries" 1 $dnssec >"$dir/out" 2>"$dir/err" || { cat "$dir/err" >&2; exit 1; }
	answers=$(awk '{ print $2 }' "$dir/out")
	ir=$(awk '/^summary:/ { print $2 }' "$dir/cg.out")
	printf '%-40s %12s %10s %14.1f\n' "$run" "$answers" "$ir" "$(awk -v i="$ir" -v a="$answers" 'BEGIN { print i / a }')"
done
