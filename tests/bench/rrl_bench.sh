#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What response rate limiting and DNS cookies cost, and what RRL holds back,
# beside NSD and Knot DNS with their RRL set to the same numbers. Loopback
# only, free high ports, every run bounded; servers run side by side and the
# loads are interleaved round by round, medians reported.
#
#  1. CPU per answer, Shoal with one thread, on normal traffic (the
#     genzone.sh mix, paced at QPS): RRL off; RRL on at a rate no class
#     reaches (the cost of counting); cookies (a client cookie in every
#     query: the server makes a server cookie per answer); RRL on and a
#     valid server cookie in every query (checked, then exempt).
#  2. An RRL-limited flood: one name from one address at QPS, rate-limit 20,
#     slip 2, on shoald, knotd and nsd: answers (full and TC) per second and
#     server CPU per query.
#  3. Amplification: ANY and DNSKEY in turn for a signed zone's apex from one
#     address, RRL as in 2: octets received over octets sent.
#  In 2 and 3, shoal_norrl is shoald with RRL off: what RRL holds back.
#
# Usage: tests/bench/rrl_bench.sh [-r ROUNDS] [-l SECONDS] [-Q QPS] [BUILDDIR]
#   BUILDDIR   build with server/shoald and tools/shoal-flood (default build/dev)
#   -r         rounds (default 5)
#   -l         seconds of each load (default 3)
#   -Q         queries per second offered (default 20000)
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
rounds=5 seconds=3 qps=20000
while getopts "r:l:Q:h" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	l) seconds=$OPTARG ;;
	Q) qps=$OPTARG ;;
	*) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	esac
done
shift $((OPTIND - 1))
export SHOAL_BUILDDIR=${1:-$SRC/build/dev} SHOAL_SRCDIR=$SRC
. "$SRC/tests/integration/lib.sh"
. "$SRC/tests/bench/servers.sh"
trap t_cleanup EXIT
FLOOD_PL="perl $SRC/tests/integration/rrl_flood.pl"
ORIGIN=bench.test.

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
json_num() { sed -n "s/.*\"$1\": *\\([0-9.]*\\).*/\\1/p" | head -1; }

bash "$SRC/tests/bench/genzone.sh" "$ORIGIN" 10000 "$T_DIR/bench.zone" "$T_DIR/queries.txt" 100000 10 >/dev/null
# a signed copy for the amplification part (ECDSA P-256, NSEC3 as RFC 9276 asks)
(cd "$T_DIR" && zsk=$(ldns-keygen -a ECDSAP256SHA256 -r /dev/urandom $ORIGIN) &&
	ksk=$(ldns-keygen -a ECDSAP256SHA256 -r /dev/urandom -k $ORIGIN) &&
	ldns-signzone -n -t 0 -f signed.zone bench.zone "$zsk" "$ksk") || exit 1

echo "# rrl_bench: $rounds rounds, $seconds s each, $qps q/s offered; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 1. CPU per answer ----
declare -A PORT PID
start() { # NAME ARGS...: a one-thread shoald
	local name=$1
	shift
	PORT[$name]=$(free_port)
	start_shoal "$T_DIR/$name" "${PORT[$name]}" 1 "$T_DIR/bench.zone" "$ORIGIN" "$@"
	PID[$name]=$SERVER_PID
	wait_zone "${PORT[$name]}" h1.bench.test 30 "$SERVER_PID" >/dev/null || exit 1
}
start off
start rrl --rate-limit 1000000
start cookie
start rrl_cookie --rate-limit 1000000
valid=$(dig @127.0.0.1 -p "${PORT[rrl_cookie]}" -b 127.0.0.1 +norec +cookie=0102030405060708 \
	h1.bench.test A | sed -n 's/^; COOKIE: \([0-9a-f]*\).*/\1/p')
declare -A FLOOD_ARGS=([off]="" [rrl]="" [cookie]="--cookie 0102030405060708"
	[rrl_cookie]="--cookie $valid")
CONFIGS="off rrl cookie rrl_cookie"
for r in $(seq 1 "$rounds"); do
	for c in $CONFIGS; do
		before=$(cpu_ns "${PID[$c]}")
		# shellcheck disable=SC2086
		out=$("$SHOAL_FLOOD" -p "${PORT[$c]}" -d "$T_DIR/queries.txt" -Q "$qps" -l "$seconds" \
			-c 8 -i 2000 --json ${FLOOD_ARGS[$c]})
		used=$(($(cpu_ns "${PID[$c]}") - before))
		answered=$(printf '%s' "$out" | json_num answered)
		awk -v u="$used" -v a="$answered" 'BEGIN { printf "%.3f\n", u / a / 1000 }' >>"$T_DIR/cpu.$c"
		printf '%s %s\n' "$answered" "$(printf '%s' "$out" | json_num qps)" >>"$T_DIR/ans.$c"
	done
done
for c in $CONFIGS; do
	"$SHOALCTL" -s "$T_DIR/$c/control.sock" stats json | grep "\"total\"" |
		grep -o '"\(rrl_dropped\|rrl_slipped\|cookie_client\|cookie_valid\|cookie_invalid\)": [0-9]*' |
		tr '\n' ' ' >"$T_DIR/stats.$c"
	kill "${PID[$c]}"
	wait "${PID[$c]}" 2>/dev/null
done
off=$(median <"$T_DIR/cpu.off")
echo
echo "## 1. Shoal, CPU per answer (us, median of $rounds; all rounds in brackets)"
echo "| configuration | us/answer | vs off | rounds | counters |"
echo "|---|---|---|---|---|"
for c in $CONFIGS; do
	m=$(median <"$T_DIR/cpu.$c")
	printf '| %s | %s | %s | %s | %s |\n' "$c" "$m" \
		"$(awk -v m="$m" -v o="$off" 'BEGIN { printf "%+.1f%%", (m / o - 1) * 100 }')" \
		"$(tr '\n' ' ' <"$T_DIR/cpu.$c")" "$(cat "$T_DIR/stats.$c")"
done

# ---- 2 and 3: the same RRL on shoald, knotd and nsd ----
# shoal_norrl: the control, the same flood with RRL off
SERVERS="shoal knot nsd shoal_norrl"
for s in $SERVERS; do
	PORT[$s]=$(free_port)
	case $s in
	shoal) start_shoal "$T_DIR/s-$s" "${PORT[$s]}" 1 "$T_DIR/signed.zone" "$ORIGIN" \
		--rate-limit 20 --rate-limit-slip 2 ;;
	shoal_norrl) start_shoal "$T_DIR/s-$s" "${PORT[$s]}" 1 "$T_DIR/signed.zone" "$ORIGIN" ;;
	knot) start_knot "$T_DIR/s-$s" "${PORT[$s]}" 1 "$T_DIR/signed.zone" "$ORIGIN" 20 2 ;;
	nsd) start_nsd "$T_DIR/s-$s" "${PORT[$s]}" 1 "$T_DIR/signed.zone" "$ORIGIN" 20 2 ;;
	esac
	PID[$s]=$SERVER_PID
	wait_zone "${PORT[$s]}" h1.bench.test 60 "$SERVER_PID" >/dev/null || {
		echo "$s did not start"
		exit 1
	}
done
for r in $(seq 1 "$rounds"); do
	for s in $SERVERS; do
		# 2. one name, one address, QPS: a class far over 20/s
		before=$(cpu_ns "${PID[$s]}")
		out=$("$SHOAL_FLOOD" -p "${PORT[$s]}" -q h1.bench.test -Q "$qps" -l "$seconds" -c 1 \
			-i 1000000 -w 0.5 --json)
		used=$(($(cpu_ns "${PID[$s]}") - before))
		sent=$(printf '%s' "$out" | json_num sent)
		answered=$(printf '%s' "$out" | json_num answered)
		echo "$((answered / seconds)) $(awk -v u="$used" -v n="$sent" 'BEGIN { printf "%.2f", u / n / 1000 }') $((sent / seconds))" >>"$T_DIR/flood.$s"
		# 3. ANY and DNSKEY in turn at the apex, 2000 in one second
		out=$($FLOOD_PL "${PORT[$s]}" bench.test 2000 1 127.0.0.1 - - 255,48)
		o=$(printf '%s\n' "$out" | sed -n 's/.*octets_out \([0-9]*\).*/\1/p')
		i=$(printf '%s\n' "$out" | sed -n 's/.*octets_in \([0-9]*\).*/\1/p')
		awk -v i="$i" -v o="$o" 'BEGIN { printf "%.3f\n", i / o }' >>"$T_DIR/amp.$s"
		sleep 1 # the next round starts with fresh classes
	done
done
echo
echo "## 2. RRL-limited flood: one name from one address, rate-limit 20, slip 2 (median of $rounds)"
echo "| server | answers/s (full + TC) | server CPU us/query | offered q/s | rounds (answers/s) |"
echo "|---|---|---|---|---|"
for s in $SERVERS; do
	printf '| %s | %s | %s | %s | %s |\n' "$s" "$(cut -d' ' -f1 "$T_DIR/flood.$s" | median)" \
		"$(cut -d' ' -f2 "$T_DIR/flood.$s" | median)" "$(cut -d' ' -f3 "$T_DIR/flood.$s" | median)" \
		"$(cut -d' ' -f1 "$T_DIR/flood.$s" | tr '\n' ' ')"
done
echo
echo "## 3. Amplification: ANY and DNSKEY at a signed apex, 2000 queries in 1 s from one address"
echo "| server | answer octets / query octets (median) | rounds |"
echo "|---|---|---|"
for s in $SERVERS; do
	printf '| %s | %s | %s |\n' "$s" "$(median <"$T_DIR/amp.$s")" "$(tr '\n' ' ' <"$T_DIR/amp.$s")"
done
echo
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
