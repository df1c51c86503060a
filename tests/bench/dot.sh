#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# DNS over TLS and zone transfers over TLS benchmark (not a test; issue 36).
# 1. CPU per answer, DoT against plain TCP, the same client (tlsclient, -T for
#    TCP: CONNS connections one after another, QUERIES pipelined queries on
#    each, a full handshake each, or resumed with -R), Shoal and BIND 9.18
#    (its DoT: listen-on tls ephemeral), one worker each, rounds interleaved:
#    the server's CPU time (schedstat of every thread) over the answers.
#    Knot 3.2 (Debian 12) has no DoT: not run.
# 2. AXFR of a zone of about RECORDS records out of Shoal, kdig +tcp against
#    kdig +tls, interleaved: time to completion and Shoal's CPU time.
#
# Usage: tests/bench/dot.sh [-c CONNS] [-q QUERIES] [-n RECORDS] [-r ROUNDS] [BUILDDIR]
#   defaults: 100 connections, 100 queries each, 1000000 records, 5 rounds
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
conns=100 queries=100 records=1000000 rounds=5
while getopts "c:q:n:r:h" opt; do
	case $opt in
	c) conns=$OPTARG ;;
	q) queries=$OPTARG ;;
	n) records=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) sed -n '2,15s/^# \{0,1\}//p' "$0"; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
export SHOAL_BUILDDIR=${1:-${SHOAL_BUILDDIR:-$SRC/build/dev}} SHOAL_SRCDIR=$SRC
. "$SRC/tests/integration/lib.sh"
. "$SRC/tests/bench/servers.sh"
. "$SRC/tests/xfr/peers.sh"
set +e
TLSCLIENT=$SHOAL_BUILDDIR/tests/integration/tlsclient
KDIG=$(command -v kdig)
ORIGIN=dotbench.test.
names=$((records * 10 / 11))
bash "$SRC/tests/bench/genzone.sh" "$ORIGIN" "$names" "$T_DIR/zone" "$T_DIR/queries" 10 >/dev/null
echo "dot bench: $conns connections x $queries queries; AXFR of $(grep -c ' IN ' "$T_DIR/zone")" \
	"records; $rounds rounds; load: $(cut -d' ' -f1-3 /proc/loadavg)"

P_SHOAL=$(free_port) T_SHOAL=$(free_port) P_BIND=$(free_port) T_BIND=$(free_port)
mkdir -p -m 700 "$T_DIR/shoal/state"
cat >"$T_DIR/shoal/shoald.conf" <<CONF
listen: 127.0.0.1@$P_SHOAL
listen-tls: 127.0.0.1@$T_SHOAL
threads: 1
state-dir: $T_DIR/shoal/state
tcp-max-per-address: 0
zones:
  - name: $ORIGIN
    file: $T_DIR/zone
    provide-xfr: ["127.0.0.0/8 NOKEY"]
CONF
"$SHOALD" -c "$T_DIR/shoal/shoald.conf" >"$T_DIR/shoal/log" 2>&1 &
PID_shoal=$!
T_PIDS="$T_PIDS $PID_shoal"
PID_bind=""
if [ -n "$NAMED" ]; then
	mkdir -p "$T_DIR/bind"
	{
		named_server_conf "$T_DIR/bind" "$P_BIND" |
			sed "s/^\\( *\\)listen-on port $P_BIND .*/&\\n\\1listen-on port $T_BIND tls ephemeral { 127.0.0.1; };/"
		printf 'zone "%s" { type primary; file "%s"; };\n' "$ORIGIN" "$T_DIR/zone"
	} >"$T_DIR/bind/named.conf"
	# one worker, as Shoal's one thread; its log quiet
	"$NAMED" -g -n 1 -c "$T_DIR/bind/named.conf" >"$T_DIR/bind/log" 2>&1 &
	PID_bind=$!
	T_PIDS="$T_PIDS $PID_bind"
fi
loaded() { "$DIG" @127.0.0.1 -p "$1" +short +time=1 +tries=1 "$ORIGIN" SOA | grep -q .; }
wait_until 300 loaded "$P_SHOAL" || { echo "shoald did not load"; tail "$T_DIR/shoal/log"; exit 1; }
[ -z "$PID_bind" ] || wait_until 300 loaded "$P_BIND" || { echo "named did not load"; PID_bind=""; }

# run SERVER TRANSPORT [ARGS]: one load; prints "µs-per-answer answers"
run() {
	local pid port args=() c0 c1 out
	case $1 in
	shoal) pid=$PID_shoal port=$P_SHOAL ;;
	bind) pid=$PID_bind port=$P_BIND ;;
	esac
	[ "$2" = tls ] && port=$([ "$1" = shoal ] && echo "$T_SHOAL" || echo "$T_BIND")
	[ "$2" = tcp ] && args+=(-T)
	[ "$2" = tls-resumed ] && args+=(-R) && port=$([ "$1" = shoal ] && echo "$T_SHOAL" || echo "$T_BIND")
	c0=$(cpu_ns "$pid")
	out=$("$TLSCLIENT" "${args[@]}" -c "$conns" -n "$queries" -w 20 127.0.0.1 "$port" h1."$ORIGIN")
	c1=$(cpu_ns "$pid")
	local answers
	answers=$(echo "$out" | sed -n 's/.* answers \([0-9]*\) .*/\1/p')
	awk -v d=$((c1 - c0)) -v a="${answers:-0}" 'BEGIN { printf "%.2f %d\n", a ? d / a / 1000 : 0, a }'
}

servers="shoal"
[ -n "$PID_bind" ] && servers="shoal bind"
declare -A res
for r in $(seq 1 "$rounds"); do
	for s in $servers; do
		for t in tcp tls tls-resumed; do
			res[$s.$t]+="$(run "$s" "$t" | cut -d' ' -f1) "
		done
	done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo
echo "## CPU per answer (µs, median of $rounds), $conns connections x $queries pipelined queries"
echo
echo "| server | TCP | DoT | DoT/TCP | DoT resumed | resumed/TCP |"
echo "|---|---|---|---|---|---|"
for s in $servers; do
	tcp=$(echo "${res[$s.tcp]}" | median) tls=$(echo "${res[$s.tls]}" | median)
	rsm=$(echo "${res[$s.tls-resumed]}" | median)
	echo "| $s | $tcp | $tls | $(calc "$tls / $tcp") | $rsm | $(calc "$rsm / $tcp") |"
done
for s in $servers; do
	for t in tcp tls tls-resumed; do echo "raw $s $t: ${res[$s.$t]}"; done
done

# 2. AXFR, kdig +tcp against kdig +tls, out of Shoal
[ -n "$PID_bind" ] && kill "$PID_bind"
axfr() {
	local port=$P_SHOAL flag=+tcp c0 c1 t0 t1 n
	[ "$1" = tls ] && port=$T_SHOAL flag=+tls
	c0=$(cpu_ns "$PID_shoal")
	t0=$(date +%s.%N)
	n=$("$KDIG" @127.0.0.1 -p "$port" $flag "$ORIGIN" AXFR +noall +answer 2>/dev/null | wc -l)
	t1=$(date +%s.%N)
	c1=$(cpu_ns "$PID_shoal")
	echo "$(calc "$t1 - $t0") $(calc "($c1 - $c0) / 1000000000") $n"
}
declare -A wall cpu
for r in $(seq 1 "$rounds"); do
	for t in tcp tls; do
		read -r w c n < <(axfr $t)
		wall[$t]+="$w " cpu[$t]+="$c "
		echo "raw axfr $t: ${w}s wall, ${c}s shoald CPU, $n lines"
	done
done
echo
echo "## AXFR of $(grep -c ' IN ' "$T_DIR/zone") records out of Shoal (median of $rounds)"
echo
echo "| | TCP | TLS | TLS/TCP |"
echo "|---|---|---|---|"
wt=$(echo "${wall[tcp]}" | median) ws=$(echo "${wall[tls]}" | median)
ct=$(echo "${cpu[tcp]}" | median) cs=$(echo "${cpu[tls]}" | median)
echo "| time to completion (kdig), s | $wt | $ws | $(calc "$ws / $wt") |"
echo "| shoald CPU, s | $ct | $cs | $(calc "$cs / $ct") |"
