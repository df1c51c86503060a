#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_affinity: cpu-affinity pins worker i to the CPUs whose number modulo the
# threads is i and steers each UDP datagram to the worker of the CPU it came in on.
# On loopback a datagram is received on the CPU of the process that sends it, so dig
# pinned to CPU c is answered by worker c (NSID shoal/c). The control: without it the
# kernel's 4-tuple hash spreads one CPU's queries over both workers. A takeover keeps
# the steering, and after the old process has gone the program is attached again.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then
	echo "SKIP: needs 2 CPUs and taskset"
	exit 77
fi
ZONE="example.com=$EXAMPLES/example.com.zone"

# threads_seen CPU PORT N: the distinct NSID thread indexes of N answers to dig on CPU.
threads_seen() {
	local i
	for i in $(seq "$3"); do
		taskset -c "$1" "$DIG" @127.0.0.1 -p "$2" +norec +time=2 +tries=1 +nsid \
			www.example.com A | grep -o 'shoal/[0-9]*'
	done | sort -u | tr '\n' ' '
}

PORT=$(free_port) || exit 99
ctl=$T_DIR/control.sock
args=(--listen "127.0.0.1@$PORT" --threads 2 --nsid shoal --zone "$ZONE" --cpu-affinity yes)
start_shoald "$PORT" "${args[@]}" --control "$ctl" || exit 99
check_eq "CPU 0's queries: worker 0 alone" "shoal/0 " "$(threads_seen 0 "$PORT" 12)"
check_eq "CPU 1's queries: worker 1 alone" "shoal/1 " "$(threads_seen 1 "$PORT" 12)"
pinned=$(cat /proc/"$SHOALD_PID"/task/*/status | awk '$1 == "Cpus_allowed_list:" { print $2 }' |
	sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')
check_match "each worker's threads pinned to its CPU (loop and receiver)" "(^| )0:2 .*1:2 " "$pinned"

# a takeover by the same configuration: the new process steers by CPU too
"$SHOALD" "${args[@]}" --control "$T_DIR/control2.sock" --takeover "$ctl" \
	>"$T_DIR/taker.log" 2>&1 &
TAKER=$!
T_PIDS="$T_PIDS $TAKER"
if wait_until 60 grep -q "took over from pid $SHOALD_PID" "$T_DIR/taker.log" &&
	wait_until 60 gone "$SHOALD_PID"; then
	pass "a takeover with cpu-affinity"
else
	fail "a takeover with cpu-affinity: $(cat "$T_DIR/taker.log")"
fi
check_eq "after the takeover, CPU 0: worker 0 alone" "shoal/0 " "$(threads_seen 0 "$PORT" 12)"
check_eq "after the takeover, CPU 1: worker 1 alone" "shoal/1 " "$(threads_seen 1 "$PORT" 12)"
stop_pid "$TAKER"
check_eq "SIGTERM exits 0" 0 $?

# the control: the kernel's hash spreads one CPU's queries (40 ports: both, but 2^-39)
PORT=$(free_port) || exit 99
start_shoald "$PORT" --listen "127.0.0.1@$PORT" --threads 2 --nsid shoal --zone "$ZONE" || exit 99
check_eq "without cpu-affinity, CPU 0's queries reach both workers" "shoal/0 shoal/1 " \
	"$(threads_seen 0 "$PORT" 40)"
stop_pid "$SHOALD_PID"
done_testing
