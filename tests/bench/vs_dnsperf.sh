#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoal-flood against dnsperf at equal CPU: each client pinned to the same one
# core with taskset, the same server pinned to another core, the same queries,
# the same client sockets and in-flight limit, interleaved rounds. Reports each
# client's queries per second and its own CPU time per answered query
# (user+system of the client process). The server is tests/bench/shoald-ceiling
# (one thread, echoes queries: fast enough that the clients are the limit) when
# it is built, else NSD (one server process); -S chooses.
#
# Usage: tests/bench/vs_dnsperf.sh [-r ROUNDS] [-l SECONDS] [-c SOCKETS] [-i INFLIGHT]
#                                  [-C CLIENT_CPU,SERVER_CPU] [-S ceiling|nsd] [BUILDDIR]
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
rounds=3 seconds=5 sockets=8 inflight=100 cpus=0,1 server=""
while getopts "r:l:c:i:C:S:h" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	l) seconds=$OPTARG ;;
	c) sockets=$OPTARG ;;
	i) inflight=$OPTARG ;;
	C) cpus=$OPTARG ;;
	S) server=$OPTARG ;;
	*) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
export SHOAL_BUILDDIR=${1:-${SHOAL_BUILDDIR:-$SRC/build/flood}} SHOAL_SRCDIR=$SRC
. "$SRC/tests/integration/lib.sh"
. "$SRC/tests/bench/servers.sh"
set +e
command -v dnsperf >/dev/null || { echo "vs_dnsperf: dnsperf missing (apt-get install dnsperf)" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "vs_dnsperf: needs 2 CPUs (client and server apart)" >&2; exit 1; }
client_cpu=${cpus%,*} server_cpu=${cpus#*,}

"$SRC/tests/bench/genzone.sh" bench.test. 10000 "$T_DIR/zone" "$T_DIR/queries" 100000 10
if [ -z "$server" ]; then
	server=nsd
	[ -x "$SHOALD_CEILING" ] && server=ceiling
fi
port=$(free_port) || exit 1
case $server in
ceiling) start_ceiling "$T_DIR/ceiling" "$port" 1 "$T_DIR/zone" bench.test. ;;
nsd) start_nsd "$T_DIR/nsd" "$port" 1 "$T_DIR/zone" bench.test. ;;
*) echo "vs_dnsperf: -S ceiling or nsd" >&2; exit 1 ;;
esac
wait_zone "$port" h0.bench.test. 30 "$SERVER_PID" >/dev/null ||
	{ echo "vs_dnsperf: $server did not start" >&2; exit 1; }
for p in $(tree "$SERVER_PID"); do taskset -pc "$server_cpu" "$p" >/dev/null; done

# cpu_of CMD...: run CMD, print its output then "CPU <user+sys seconds>".
cpu_of() {
	/usr/bin/time -f "CPU %U %S" "$@" 2>&1
}
results=$T_DIR/results.tsv
for r in $(seq 1 "$rounds"); do
	out=$(cpu_of taskset -c "$client_cpu" dnsperf -s 127.0.0.1 -p "$port" -d "$T_DIR/queries" \
		-l "$seconds" -c "$sockets" -q "$inflight" -T 1)
	q=$(printf '%s\n' "$out" | awk '/Queries completed:/ { print $3 }')
	qps=$(printf '%s\n' "$out" | awk '/Queries per second:/ { print $4 }')
	cpu=$(printf '%s\n' "$out" | awk '/^CPU/ { print $2 + $3 }')
	printf 'dnsperf\t%s\t%s\t%s\n' "$qps" "$q" "$cpu" >>"$results"
	out=$(cpu_of taskset -c "$client_cpu" "$SHOAL_FLOOD" -p "$port" -d "$T_DIR/queries" -l "$seconds" \
		-c "$sockets" -i "$inflight" -T 1 -e 0 --json)
	qps=$(printf '%s\n' "$out" | grep '^{' | jq -r .qps)
	q=$(printf '%s\n' "$out" | grep '^{' | jq -r .answered)
	cpu=$(printf '%s\n' "$out" | awk '/^CPU/ { print $2 + $3 }')
	printf 'shoal-flood\t%s\t%s\t%s\n' "$qps" "$q" "$cpu" >>"$results"
done
echo "client on CPU $client_cpu, $server (1 thread) on CPU $server_cpu; -c $sockets, $inflight in flight, $seconds s, $rounds rounds"
echo "| client | qps (median) | client CPU µs/answer (median) |"
echo "|---|---|---|"
for c in dnsperf shoal-flood; do
	awk -F'\t' -v c="$c" '$1 == c { print $2 }' "$results" | sort -g | awk '{ a[NR] = $1 } END { printf "%s", a[int((NR + 1) / 2)] }' >"$T_DIR/q.$c"
	awk -F'\t' -v c="$c" '$1 == c { print $4 * 1e6 / $3 }' "$results" | sort -g | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }' >"$T_DIR/c.$c"
	echo "| $c | $(cat "$T_DIR/q.$c") | $(cat "$T_DIR/c.$c") |"
done
awk -v a="$(cat "$T_DIR/q.shoal-flood")" -v b="$(cat "$T_DIR/q.dnsperf")" \
	-v ca="$(cat "$T_DIR/c.shoal-flood")" -v cb="$(cat "$T_DIR/c.dnsperf")" \
	'BEGIN { printf "shoal-flood/dnsperf: qps %.2f, answers per client CPU second %.2f\n", a / b, cb / ca }'
echo "raw (client, qps, answered, client CPU s):"
cat "$results"
