#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Queries lost when a server is restarted under load: Shoal taken over
# (shoald --takeover), Shoal restarted by shoalctl restart, and Shoal, NSD
# and Knot DNS stopped and started again. shoal-flood sends a fixed rate over
# many sockets for a bounded time; one second in, the server is restarted;
# the flood's lost count (no answer within -w seconds) is the figure.
# Interleaved rounds, medians. Loopback only, free high ports.
#
# Usage: tests/bench/restart_bench.sh [options] [BUILDDIR]
#   -r ROUNDS    rounds of every case (default 3)
#   -q QPS       the flood's rate (default 20000)
#   -l SECONDS   the flood's length (default 4)
#   -t THREADS   server threads (default 2)
#   -S "CASES"   among shoal-takeover shoal-restart shoal-stop nsd-stop knot-stop
#                (default: all whose server exists)
#   -o DIR       results folder (default tests/bench/results)
#   -h           this text
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }

rounds=3 qps=20000 seconds=4 threads=2 cases="" outdir=$SRC/tests/bench/results
while getopts "r:q:l:t:S:o:h" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	q) qps=$OPTARG ;;
	l) seconds=$OPTARG ;;
	t) threads=$OPTARG ;;
	S) cases=$OPTARG ;;
	o) outdir=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
. "$SRC/tests/bench/servers.sh"
build=$(bench_build "${1:-}")
if [ -z "$build" ] || [ ! -x "$build/tools/shoal-flood" ] || [ ! -x "$build/server/shoald" ]; then
	echo "restart_bench: no build folder with shoald and shoal-flood; give it as an argument" >&2
	exit 1
fi
export SHOAL_BUILDDIR=$build SHOAL_SRCDIR=$SRC
. "$SRC/tests/integration/lib.sh"
set +e

if [ -z "$cases" ]; then
	cases="shoal-takeover shoal-restart shoal-stop"
	command -v nsd >/dev/null && cases="$cases nsd-stop"
	command -v knotd >/dev/null && cases="$cases knot-stop"
fi
zone=$EXAMPLES/example.com.zone
origin=example.com.

# start SERVER DIR PORT [ARGS...]: start it and wait until it answers from the zone.
start() {
	local server=$1 dir=$2 port=$3
	shift 3
	"start_$server" "$dir" "$port" "$threads" "$zone" "$origin" "$@"
	wait_zone "$port" www.example.com 30 "$SERVER_PID" >/dev/null
}

# stop_tree PID: SIGTERM and wait for it (and, for NSD, its children) to end.
stop_tree() {
	kill -TERM "$1" 2>/dev/null
	wait_until 30 gone "$1" || kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# one_case CASE: one flood with one restart in it; prints the flood's lost count.
one_case() {
	local c=$1 port dir json pid server=${1%%-*}
	port=$(free_port) || return 1
	dir=$T_DIR/$c.$RANDOM
	start "$server" "$dir" "$port" || { echo "start failed" >&2; return 1; }
	pid=$SERVER_PID
	"$SHOAL_FLOOD" -p "$port" -q www.example.com -c 200 -i "$qps" -Q "$qps" -l "$seconds" \
		-w 2 --json >"$dir/flood.json" 2>&1 &
	local flood=$!
	sleep 1
	case $c in
	shoal-takeover)
		"$SHOALD" --listen "127.0.0.1@$port" --threads "$threads" \
			--zone "${origin%.}=$zone" --nsid shoal --control "$dir/control.sock" \
			--takeover "$dir/control.sock" >>"$dir/stderr.log" 2>&1 &
		SERVER_PID=$!
		T_PIDS="$T_PIDS $SERVER_PID"
		wait_until 30 gone "$pid"
		pid=$SERVER_PID
		;;
	shoal-restart)
		local reply
		reply=$("$SHOALCTL" -s "$dir/control.sock" restart)
		wait_until 30 gone "$pid"
		wait "$pid" 2>/dev/null
		pid=$(printf '%s\n' "$reply" | sed -n 's/^restarted: pid \([0-9]*\) .*/\1/p')
		T_PIDS="$T_PIDS $pid"
		;;
	*)
		stop_tree "$pid"
		start "$server" "$dir" "$port"
		pid=$SERVER_PID
		;;
	esac
	wait "$flood"
	stop_tree "$pid"
	json=$(cat "$dir/flood.json")
	echo "$(json_value "$json" lost) $(json_value "$json" sent)"
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

mkdir -p "$outdir"
out=$outdir/restart-$(date -u +%Y%m%d-%H%M).md
declare -A lost sent
for r in $(seq "$rounds"); do
	for c in $cases; do
		read -r l s < <(one_case "$c")
		echo "round $r $c: lost ${l:-?} of ${s:-?}" >&2
		lost[$c]="${lost[$c]:-} ${l:-}"
		sent[$c]="${sent[$c]:-} ${s:-}"
	done
done
{
	echo "# Queries lost to a restart under load"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs (shared with other work)."
	echo "shoal-flood -c 200 -Q $qps -i $qps -l $seconds -w 2; restart 1 s in; $threads server"
	echo "threads; $rounds rounds, interleaved; lost = no answer within 2 s."
	echo
	echo "| case | lost (median) | lost per round | sent per round |"
	echo "|---|---|---|---|"
	for c in $cases; do
		echo "| $c | $(printf '%s\n' ${lost[$c]} | median) |${lost[$c]} |${sent[$c]} |"
	done
} | tee "$out"
echo "written: $out" >&2
