#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Zone transfer benchmark (not a test): AXFR of one zone of about RECORDS
# records out of Shoal, Knot DNS and NSD to the same client (dig), rounds
# interleaved: the time to completion, the server's CPU time for it, and
# the worst answer time of UDP queries sent meanwhile (one worker/thread
# per server, so they go to the one that sends). Then Knot as the primary
# of Shoal, Knot and NSD as secondaries, side by side: CHANGES records
# changed, `knotc zone-reload`, and for each secondary the time from the
# NOTIFY to the new serial answered and its peak memory over the IXFR
# against its memory before; medians over the rounds.
#
# Usage: tests/bench/xfr.sh [-n RECORDS] [-r ROUNDS] [-c "CHANGES..."] [-A] [-I] [BUILDDIR]
#   defaults: 1000000 records, 3 rounds, changes "100 100000", $SHOAL_BUILDDIR or build/dev
#   -A: the AXFR part only; -I: the IXFR part only
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
records=1000000 rounds=3 ixfr=yes axfr=yes IXFR_CHANGES="100 100000"
while getopts "n:r:c:AIh" opt; do
	case $opt in
	n) records=$OPTARG ;;
	r) rounds=$OPTARG ;;
	c) IXFR_CHANGES=$OPTARG ;;
	A) ixfr=no ;;
	I) axfr=no ;;
	*) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
export SHOAL_BUILDDIR=${1:-${SHOAL_BUILDDIR:-$SRC/build/dev}} SHOAL_SRCDIR=$SRC
. "$SRC/tests/integration/lib.sh"
. "$SRC/tests/bench/servers.sh"
. "$SRC/tests/xfr/peers.sh"
SERIAL_WATCH=$SHOAL_BUILDDIR/tests/bench/serial-watch
set +e
ORIGIN=xfrbench.test.
names=$((records * 10 / 11)) # each name an A, every tenth an AAAA too
bash "$SRC/tests/bench/genzone.sh" "$ORIGIN" "$names" "$T_DIR/zone" "$T_DIR/queries" 10 >/dev/null
echo "xfr bench: $(grep -c ' IN ' "$T_DIR/zone") records; load: $(cut -d' ' -f1-3 /proc/loadavg)"

P_KNOT=$(free_port)
if [ "$axfr" = yes ]; then
# The three servers, one thread each, transfers allowed from loopback.
P_SHOAL=$(free_port) P_NSD=$(free_port)
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
fi


# IXFR in: Knot the primary of the zone, Shoal, Knot and NSD its
# secondaries, side by side. Each round changes CHANGES A records of the
# primary's file and reloads it; serial-watch stands as a fourth secondary
# the primary notifies, and times each secondary from that NOTIFY to its
# first answer with the new serial (polling every millisecond). Peak
# memory: each secondary's processes' VmHWM over the round (reset with
# clear_refs before it), against their VmRSS before.
[ "$ixfr" = yes ] || exit 0
mkdir -p "$T_DIR/kp" "$T_DIR/sec" "$T_DIR/ks" "$T_DIR/ns"
cp "$T_DIR/zone" "$T_DIR/kp/${ORIGIN}zone"
P_SEC=$(free_port) P_KS=$(free_port) P_NS=$(free_port) P_WATCH=$(free_port)
{
	knot_server_conf "$T_DIR/kp" "$P_KNOT" info
	echo "remote:"
	for r in "shoal $P_SEC" "knot $P_KS" "nsd $P_NS" "watch $P_WATCH"; do
		knot_remote ${r% *} ${r#* }
	done
	echo "acl:"
	knot_acl xfr transfer
	knot_template "$T_DIR/kp" "%s.zone" "zonefile-load: difference" "journal-content: changes" \
		"journal-max-usage: 4G"
	printf '  - domain: %s\n    notify: [watch, shoal, knot, nsd]\n    acl: xfr\n' "$ORIGIN"
} >"$T_DIR/kp/knot.conf"
knot_start "$T_DIR/kp" "$T_DIR/kp/log"
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
SEC_ZONES="${ORIGIN%.}:NOKEY"
knot_secondary "$T_DIR/ks" "$P_KS" "$P_KNOT"
PID_ks=$PEER_PID
# as nsd_secondary (tests/xfr/peers.sh), with no rate limit: serial-watch asks 1000 times a second
{
	nsd_server_conf "$T_DIR/ns" "$P_NS" "logfile: \"$T_DIR/ns/log\"" "verbosity: 2" \
		"rrl-ratelimit: 0"
	nsd_zone "${ORIGIN%.}" "${ORIGIN%.}.zone" "request-xfr: 127.0.0.1@$P_KNOT NOKEY" \
		"allow-notify: 127.0.0.1 NOKEY"
} >"$T_DIR/ns/nsd.conf"
nsd_start "$T_DIR/ns" "$T_DIR/ns/stderr"
PID_ns=$PEER_PID
serial=$(awk '/SOA/ {print $6; exit}' "$T_DIR/zone")
for p in $P_SEC $P_KS $P_NS; do
	wait_until 600 serial_is "$p" "$ORIGIN" "$serial" ||
		{ echo "no AXFR into the secondary on $p"; tail "$T_DIR/sec/log"; exit 1; }
done
# reset_peak PID: the peak resident set of PID's processes starts again from now.
reset_peak() {
	local p
	for p in $(tree "$1"); do echo 5 >"/proc/$p/clear_refs" 2>/dev/null; done
}
printf '%-6s %8s %5s %12s %10s %10s %6s\n' server changes round "notify->ms" "rss MB" \
	"peak MB" ratio
: >"$T_DIR/ixfr.tsv"
for changes in $IXFR_CHANGES; do
	for r in $(seq 1 "$rounds"); do
		serial=$((serial + 1))
		# the first CHANGES host names get an address of this round
		awk -v s="$serial" -v c="$changes" -v r="$r" '/ IN SOA / && !done { $6 = s; done = 1 }
			/^h[0-9]+ IN A / { n = substr($1, 2) + 0
				if (n < c) $4 = "10." (100 + r) "." int(n / 256) % 256 "." n % 256 }
			{ print }' "$T_DIR/kp/${ORIGIN}zone" >"$T_DIR/z.new"
		mv "$T_DIR/z.new" "$T_DIR/kp/${ORIGIN}zone"
		for s in sec ks ns; do
			eval "pid=\$PID_$s"
			eval "rss_$s=\$(rss_kib $pid)"
			reset_peak "$pid"
		done
		"$SERIAL_WATCH" "$ORIGIN" "$serial" "$P_WATCH" "${WATCH_SECONDS:-300}" "$P_SEC" "$P_KS" "$P_NS" \
			>"$T_DIR/watch" &
		wpid=$!
		sleep 0.2
		"$KNOTC" -c "$T_DIR/kp/knot.conf" zone-reload "${ORIGIN%.}" >/dev/null 2>&1
		wait "$wpid"
		for s in sec ks ns; do
			eval "pid=\$PID_$s port=\$P_$(echo $s | tr a-z A-Z) rss=\$rss_$s"
			name=$(case $s in sec) echo shoal ;; ks) echo knot ;; ns) echo nsd ;; esac)
			peak=$(hwm_kib "$pid")
			took=$(awk -v p="$port" '$1 == p { print $2 }' "$T_DIR/watch")
			ms=$([ "$took" = timeout ] && echo timeout || calc "$took * 1000")
			printf '%-6s %8s %5s %12s %10.1f %10.1f %6.2f\n' "$name" "$changes" "$r" "$ms" \
				"$(calc "$rss / 1024")" "$(calc "$peak / 1024")" "$(calc "$peak / $rss")"
			printf '%s\t%s\t%s\t%s\n' "$name" "$changes" "$ms" "$(calc "$peak / $rss")" \
				>>"$T_DIR/ixfr.tsv"
		done
	done
done
echo "medians of $rounds rounds: NOTIFY to the new serial answered, peak memory over RSS before"
# median COLUMN NAME CHANGES: the median of a column of ixfr.tsv for one server and size.
median() {
	awk -F'\t' -v n="$2" -v c="$3" -v f="$1" '$1 == n && $2 == c { print $f }' "$T_DIR/ixfr.tsv" |
		sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
for changes in $IXFR_CHANGES; do
	for name in shoal knot nsd; do
		printf '%-6s %8s changes: %10s ms, peak memory %s times\n' "$name" "$changes" \
			"$(median 3 "$name" "$changes")" "$(median 4 "$name" "$changes")"
	done
done
kill "$PID_sec" "$PID_ks" "$PID_ns" "$KP"
wait "$PID_sec" "$PID_ks" "$PID_ns" "$KP" 2>/dev/null
