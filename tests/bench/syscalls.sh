#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Syscalls per answer: each server pinned to one CPU, shoal-flood on another
# at a paced rate, perf counting the server's system calls (tracepoints,
# which neither noise nor a busy machine moves) over the flood's run. Also
# per answer: the server's context switches (its wake-ups) and, where the
# kernel has the ipi tracepoints, the interprocessor interrupts it sent: one
# each time an answer wakes the flood on its idle CPU. Those depend on
# timing (how soon the answer comes after the flood went to sleep), not on
# the server alone.
#
# Usage: tests/bench/syscalls.sh [-Q QPS] [-l SECONDS] [-S "SERVERS"] [-B BUILDDIR] [BUILDDIR]
#   -Q    paced rate (default 40000; 0: unpaced, saturation)
#   -l    seconds of load (default 3)
#   -S    among shoal ceiling echo base (default "shoal ceiling echo")
#   -B    build whose shoald is "base" (a change against the code before it)
#   -A    SCPU:FCPU, as bench.sh -A (default 0:1)
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
qps=40000 seconds=3 servers="shoal ceiling echo" base_build="" pinned=0:1
while getopts "Q:l:S:B:A:h" opt; do
	case $opt in
	Q) qps=$OPTARG ;;
	l) seconds=$OPTARG ;;
	S) servers=$OPTARG ;;
	B) base_build=$OPTARG ;;
	A) pinned=$OPTARG ;;
	*) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	esac
done
shift $((OPTIND - 1))
. "$SRC/tests/bench/servers.sh"
export SHOAL_BUILDDIR=$(bench_build "${1:-}") SHOAL_SRCDIR=$SRC
. "$SRC/tests/integration/lib.sh"
[ -n "$base_build" ] && SHOALD_BASE=$(cd "$base_build" && pwd)/server/shoald
command -v perf >/dev/null || { echo "syscalls: perf missing (apt-get install linux-perf)" >&2; exit 1; }
export SERVER_WRAP="taskset -c ${pinned%%:*}"
origin=bench.test.
"$SRC/tests/bench/genzone.sh" "$origin" 10000 "$T_DIR/zone" "$T_DIR/queries" 100000 10
events=raw_syscalls:sys_enter
for c in recvmmsg sendmmsg epoll_wait epoll_pwait read write poll futex; do
	events=$events,syscalls:sys_enter_$c
done
events=$events,context-switches
ipi=no
if have_ipi_count; then
	events=$events,ipi:ipi_send_cpu
	ipi=yes
fi
pace=()
[ "$qps" != 0 ] && pace=(-Q "$qps")
printf '%-8s %8s %9s %9s %9s' server answers "sys/ans" switches IPIs
for c in recvmmsg sendmmsg epoll_wait epoll_pwait read write poll futex; do printf ' %9s' "$c"; done
printf '\n'
for s in $servers; do
	port=$(free_port) || exit 1
	"start_$s" "$T_DIR/$s" "$port" 1 "$T_DIR/zone" "$origin"
	pid=$SERVER_PID
	wait_zone "$port" "h0.$origin" 60 "$pid" >/dev/null || { echo "syscalls: $s did not start" >&2; exit 1; }
	perf stat -x, -e "$events" -p "$pid" -o "$T_DIR/$s.perf" &
	perf_pid=$!
	sleep 0.2
	taskset -c "${pinned#*:}" "$SHOAL_FLOOD" -s 127.0.0.1 -p "$port" -d "$T_DIR/queries" \
		-l "$seconds" "${pace[@]}" -T 1 -c 100 -i 200 -e 1232 -w 1 --json >"$T_DIR/$s.json" 2>/dev/null
	kill -INT "$perf_pid"
	wait "$perf_pid"
	stop_pid "$pid" >/dev/null 2>&1
	answered=$(jq -r .answered "$T_DIR/$s.json")
	awk -F, -v s="$s" -v a="$answered" -v ipi="$ipi" '
		$3 ~ /raw_syscalls/ { total = $1 }
		$3 ~ /sys_enter_/ { n = $3; sub(/.*sys_enter_/, "", n); c[n] = $1 }
		$3 == "context-switches" { sw = $1 }
		$3 ~ /^ipi:/ { ipis += $1 }
		END { printf "%-8s %8d %9.3f %9.3f", s, a, total / a, sw / a;
			if (ipi == "yes") printf " %9.3f", ipis / a; else printf " %9s", "-"

			split("recvmmsg sendmmsg epoll_wait epoll_pwait read write poll futex", k, " ");
			for (i = 1; i <= 8; i++) printf " %9.3f", c[k[i]] / a; printf "\n" }' "$T_DIR/$s.perf"
done
