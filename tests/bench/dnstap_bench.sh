#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# dnstap's cost: shoald's CPU time per answer (all its threads, the dnstap writer's included:
# /proc/PID/task/*/schedstat) with dnstap off, on at 1 in 1 and on at 1 in 100 (to a file),
# the same zone and query mix from shoal-flood, interleaved round by round; the medians and
# their ratios to off. Loopback, free high ports, every run bounded. Not part of make check.
#
# Usage: tests/bench/dnstap_bench.sh [-r ROUNDS] [-n QUERIES] [-Q QPS] [-A SCPU:FCPU] [BUILDDIR]
#   -r  rounds of off, 1-in-1, 1-in-100 (default 5)
#   -n  queries a run (default 200000)
#   -Q  paced rate of shoal-flood (default 50000 q/s; 0: unpaced)
#   -A  shoald on CPUs SCPU, shoal-flood on FCPU (taskset lists; default 0:1)
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
rounds=5 queries=200000 qps=50000 pin=0:1
while getopts "r:n:Q:A:h" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	n) queries=$OPTARG ;;
	Q) qps=$OPTARG ;;
	A) pin=$OPTARG ;;
	*) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	esac
done
shift $((OPTIND - 1))
. "$SRC/tests/bench/servers.sh"
build=$(bench_build "${1:-}")
SHOAL_SRCDIR=$SRC SHOAL_BUILDDIR=$build . "$SRC/tests/integration/lib.sh"
scpu=${pin%%:*} fcpu=${pin##*:}
"$SRC/tests/bench/genzone.sh" bench.test. 10000 "$T_DIR/zone" "$T_DIR/queries" 100000 10

# cpu_ns PID: nanoseconds on a CPU over all of PID's threads
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }'
}

# run MODE: one shoald (MODE off, or the sample), one flood; prints ns per answer
run() {
	local port tap="" pid before after answered report
	port=$(free_port) || exit 1
	[ "$1" != off ] && tap="dnstap-file: $T_DIR/tap.fstrm
dnstap-sample: $1"
	cat >"$T_DIR/shoald.conf" <<CONF
listen: [ 127.0.0.1@$port ]
threads: 1
$tap
zones:
  - name: bench.test
    file: $T_DIR/zone
CONF
	taskset -c "$scpu" "$SHOALD" -c "$T_DIR/shoald.conf" >>"$T_DIR/shoald.log" 2>&1 &
	pid=$!
	wait_until 30 answering 127.0.0.1 "$port" || { echo "shoald did not start" >&2; exit 1; }
	sleep 0.5
	before=$(cpu_ns "$pid")
	report=$(taskset -c "$fcpu" "$FLOOD" -p "$port" -d "$T_DIR/queries" -n "$queries" \
		${qps:+-Q "$qps"} -w 2 --json)
	after=$(cpu_ns "$pid")
	answered=$(json_value "$report" answered)
	kill -TERM "$pid"
	wait "$pid"
	rm -f "$T_DIR/tap.fstrm"
	awk -v a="$after" -v b="$before" -v n="$answered" 'BEGIN { printf "%.1f\n", (a - b) / n }'
}

[ "$qps" = 0 ] && qps=""
FLOOD=$build/tools/shoal-flood
declare -A all
for r in $(seq 1 "$rounds"); do
	for m in off 1 100; do
		v=$(run "$m")
		all[$m]="${all[$m]:-} $v"
		echo "round $r, dnstap $m: $v ns/answer"
	done
done
median() { printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
off=$(median "${all[off]}") one=$(median "${all[1]}") hundred=$(median "${all[100]}")
echo "median ns of CPU per answer: off $off, 1-in-1 $one, 1-in-100 $hundred"
awk -v o="$off" -v a="$one" -v h="$hundred" \
	'BEGIN { printf "ratio to off: 1-in-1 %.3f (target <= 1.3), 1-in-100 %.3f (target <= 1.02)\n", a / o, h / o }'
