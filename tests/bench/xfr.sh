#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Zone transfer benchmark (not a test): AXFR of one zone of about RECORDS
# records out of Shoal, Knot DNS and NSD to the same client (dig), rounds
# interleaved: the time to completion, the server's CPU time for it, and
# the worst answer time of UDP queries sent meanwhile (one worker/thread
# per server, so they go to the one that sends). Then Knot as Shoal's
# primary: 100 records changed, `knotc zone-reload`, and the time from the
# NOTIFY Shoal logs to the new serial it logs as published, and from the
# reload to the new serial answered.
#
# Usage: tests/bench/xfr.sh [-n RECORDS] [-r ROUNDS] [-A] [BUILDDIR]
#   defaults: 1000000 records, 3 rounds, $SHOAL_BUILDDIR or build/dev
#   -A: the AXFR part only
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
records=1000000 rounds=3 ixfr=yes
while getopts "n:r:Ah" opt; do
	case $opt in
	n) records=$OPTARG ;;
	r) rounds=$OPTARG ;;
	A) ixfr=no ;;
	*) sed -n '2,14s/^# \{0,1\}//p' "$0"; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
export SHOAL_BUILDDIR=${1:-${SHOAL_BUILDDIR:-$SRC/build/dev}} SHOAL_SRCDIR=$SRC
. "$SRC/tests/integration/lib.sh"
. "$SRC/tests/bench/servers.sh"
. "$SRC/tests/xfr/peers.sh"
set +e
ORIGIN=xfrbench.test.
names=$((records * 10 / 11)) # each name an A, every tenth an AAAA too
bash "$SRC/tests/bench/genzone.sh" "$ORIGIN" "$names" "$T_DIR/zone" "$T_DIR/queries" 10 >/dev/null
echo "xfr bench: $(grep -c ' IN ' "$T_DIR/zone") records; load: $(cut -d' ' -f1-3 /proc/loadavg)"

# The three servers, one thread each, transfers allowed from loopback.
P_SHOAL=$(free_port) P_KNOT=$(free_port) P_NSD=$(free_port)
mkdir -p "$T_DIR/shoal"
cat >"$T_DIR/shoal/shoald.conf" <<CONF
listen: 127.0.0.1@$P_SHOAL
threads: 1
zones:
  - name: $ORIGIN
    file: $T_DIR/zone
    provide-xfr: ["127.0.0.0/8 NOKEY"]
CONF
"$SHOALD" -c "$T_DIR/shoal/shoald.conf" >"$T_DIR/shoal/log" 2>&1 &
PID_shoal=$!
# Knot and NSD as the benchmark starts them (tests/bench/servers.sh), and
# providing the zone by transfer to loopback.
mkdir -p "$T_DIR/knot" "$T_DIR/nsd"
{
	knot_server_conf "$T_DIR/knot" "$P_KNOT" warning 'nsid: "knot"'
	echo "acl:"
	knot_acl xfr transfer
	knot_template "$T_DIR/knot" "$T_DIR/zone" "journal-content: none" "zonefile-load: whole"
	printf '  - domain: "%s"\n    acl: xfr\n' "$ORIGIN"
} >"$T_DIR/knot/knot.conf"
start_knot_again() {
	knot_start "$T_DIR/knot" "$T_DIR/knot/stderr.log"
	PID_knot=$PEER_PID
}
start_knot_again
{
	nsd_server_conf "$T_DIR/nsd" "$P_NSD" "reuseport: yes" "rrl-ratelimit: 0" "verbosity: 0" \
		'nsid: "ascii_nsd"'
	nsd_zone "$ORIGIN" "$T_DIR/zone" "provide-xfr: 127.0.0.1 NOKEY"
} >"$T_DIR/nsd/nsd.conf"
nsd_start "$T_DIR/nsd" "$T_DIR/nsd/stderr.log"
PID_nsd=$PEER_PID
T_PIDS="$T_PIDS $PID_shoal $PID_knot $PID_nsd"
for s in shoal knot nsd; do
	eval "port=\$P_${s^^} pid=\$PID_$s"
	wait_zone "$port" "h1.$ORIGIN" 300 "$pid" >/dev/null || { echo "$s did not load"; exit 1; }
done

# prober PORT OUT: UDP queries one after another until killed; dig's times to OUT.
prober() {
	while :; do
		"$DIG" @127.0.0.1 -p "$1" +norec +time=5 +tries=1 "h$((RANDOM % 1000)).$ORIGIN" A |
			sed -n 's/^;; Query time: \([0-9]*\) msec/\1/p' >>"$2"
	done
}
hz=$(getconf CLK_TCK)
printf '%-6s %5s %10s %10s %12s %10s\n' server round seconds "cpu s" "worst ms" "median ms"
for r in $(seq 1 "$rounds"); do
	for s in shoal knot nsd; do
		eval "port=\$P_${s^^} pid=\$PID_$s"
		: >"$T_DIR/probe"
		c0=$(cpu_ticks "$pid")
		prober "$port" "$T_DIR/probe" &
		ppid=$!
		t0=$(date +%s.%N)
		n=$("$DIG" @127.0.0.1 -p "$port" +time=30 +tries=1 "$ORIGIN" AXFR | grep -c $'\tIN\t')
		t1=$(date +%s.%N)
		kill "$ppid"; wait "$ppid" 2>/dev/null
		c1=$(cpu_ticks "$pid")
		worst=$(sort -n "$T_DIR/probe" | tail -1)
		med=$(sort -n "$T_DIR/probe" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
		printf '%-6s %5s %10.2f %10.2f %12s %10s  (%s records, %s probes)\n' "$s" "$r" \
			"$(calc "$t1 - $t0")" "$(calc "($c1 - $c0) / $hz")" "$worst" "$med" \
			"$n" "$(wc -l <"$T_DIR/probe")"
	done
done
for s in shoal knot nsd; do eval "kill \$PID_$s; wait \$PID_$s 2>/dev/null"; done

# IXFR in: Knot primary of the zone, Shoal its secondary; 100 records change.
[ "$ixfr" = yes ] || exit 0
echo "IXFR of 100 changed records into Shoal from Knot:"
mkdir -p "$T_DIR/kp" "$T_DIR/sec"
cp "$T_DIR/zone" "$T_DIR/kp/$ORIGIN"zone
P_SEC=$(free_port)
PRI_ZONES="${ORIGIN%.}:NOKEY"
knot_primary "$T_DIR/kp" "$P_KNOT" "$P_SEC"
T_PIDS="$T_PIDS $PEER_PID"
KP=$PEER_PID
cat >"$T_DIR/sec/shoald.conf" <<CONF
listen: 127.0.0.1@$P_SEC
threads: 1
zones:
  - name: $ORIGIN
    primaries: ["127.0.0.1@$P_KNOT NOKEY"]
CONF
"$SHOALD" -c "$T_DIR/sec/shoald.conf" >"$T_DIR/sec/log" 2>&1 &
PID_sec=$!
T_PIDS="$T_PIDS $PID_sec"
serial=$(awk '/SOA/ {print $6; exit}' "$T_DIR/zone")
wait_until 300 serial_is "$P_SEC" "$ORIGIN" "$serial" || { echo "no AXFR into Shoal"; tail "$T_DIR/sec/log"; exit 1; }
ms() { date -d "$1" +%s.%N; }
for r in $(seq 1 "$rounds"); do
	serial=$((serial + 1))
	awk -v s="$serial" -v r="$r" '/ IN SOA / && !done { $6 = s; done = 1 }
		/^h[0-9]+ IN A / { split($0, f, " "); n = substr(f[1], 2) + 0
			if (n < 100) { $4 = "10.99." r "." n } } { print }' "$T_DIR/kp/${ORIGIN}zone" >"$T_DIR/z.new"
	mv "$T_DIR/z.new" "$T_DIR/kp/${ORIGIN}zone"
	t0=$(date +%s.%N)
	"$KNOTC" -c "$T_DIR/kp/knot.conf" zone-reload "${ORIGIN%.}" >/dev/null 2>&1
	wait_until 300 serial_is "$P_SEC" "$ORIGIN" "$serial"
	t1=$(date +%s.%N)
	nt=$(grep "NOTIFY $ORIGIN serial $serial " "$T_DIR/sec/log" | head -1 | cut -d' ' -f1)
	pt=$(grep "serial $serial from .* by IXFR" "$T_DIR/sec/log" | head -1 | cut -d' ' -f1)
	printf 'round %s: reload to served %.2f s; NOTIFY to published %s s\n' "$r" \
		"$(calc "$t1 - $t0")" \
		"$([ -n "$nt" ] && [ -n "$pt" ] && calc "$(ms "$pt") - $(ms "$nt")" || echo "? (not by IXFR)")"
done
kill "$PID_sec" "$KP"
wait "$PID_sec" "$KP" 2>/dev/null
