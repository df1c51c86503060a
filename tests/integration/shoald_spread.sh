#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_spread: with 2 threads (SO_REUSEPORT), many client ports spread evenly over the
# workers and one client port always reaches the same worker (NSID shows which answered).
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

PORT=$(free_port) || exit 99
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --nsid spread \
	--zone "example.com=$EXAMPLES/example.com.zone" || exit 99

# 400 queries, each from a new socket (dig's batch mode opens one per query): 400 ports.
# The kernel hashes random source ports, so each thread's count is binomial: one round
# passes max/min <= 1.3 in about 99% of runs by chance alone. A second round of new ports
# is allowed: a daemon that does not spread fails both, an even one fails both ~1 in 10^4.
for i in $(seq 1 400); do echo "www.example.com A"; done >"$T_DIR/batch"
spread_round() {
	"$DIG" @127.0.0.1 -p "$PORT" +norec +nsid +time=2 +tries=2 -f "$T_DIR/batch" >"$T_DIR/many.out" 2>&1
	n0=$(grep -c '("spread/0")' "$T_DIR/many.out")
	n1=$(grep -c '("spread/1")' "$T_DIR/many.out")
	ratio=999
	if [ "$n0" -gt 0 ] && [ "$n1" -gt 0 ]; then
		max=$((n0 > n1 ? n0 : n1))
		min=$((n0 > n1 ? n1 : n0))
		ratio=$(awk -v a="$max" -v b="$min" 'BEGIN { printf "%.3f", a / b }')
	fi
	echo "spread: thread 0 $n0, thread 1 $n1, max/min $ratio"
	awk -v r="$ratio" 'BEGIN { exit !(r <= 1.3) }'
}
spread_round || spread_round
check_eq "400 answers carry a thread NSID" 400 $((n0 + n1))
if [ "$n0" -gt 0 ] && [ "$n1" -gt 0 ]; then
	pass "both threads answered ($n0 / $n1)"
	if awk -v r="$ratio" 'BEGIN { exit !(r <= 1.3) }'; then
		pass "max/min share $ratio <= 1.3"
	else
		fail "max/min share $ratio > 1.3"
	fi
else
	fail "one thread answered nothing ($n0 / $n1)"
fi

# 50 queries from one fixed source port: one 4-tuple, one socket, one thread.
SPORT=$(free_port) || exit 99
for i in $(seq 1 50); do echo "www.example.com A"; done >"$T_DIR/batch50"
"$DIG" @127.0.0.1 -p "$PORT" -b "127.0.0.1#$SPORT" +norec +nsid +time=2 +tries=2 \
	-f "$T_DIR/batch50" >"$T_DIR/one.out" 2>&1
total=$(grep -c '("spread/[01]")' "$T_DIR/one.out")
distinct=$(grep -o '("spread/[01]")' "$T_DIR/one.out" | sort -u | wc -l)
check_eq "50 answers from one source port" 50 "$total"
check_eq "all answered by one thread" 1 "$distinct"

stop_pid "$SHOALD_PID"
check_eq "SIGTERM exits 0" 0 $?
done_testing
