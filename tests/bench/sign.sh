#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Signing benchmark (not a test): Shoal and Knot DNS side by side, the same policy (ECDSA
# P-256, NSEC, one signing thread, one worker each), one unsigned zone of NAMES names. Per
# round, each server started fresh: the full signature at load (start to the signed SOA
# served: wall time and the server's CPU), then CHANGES records changed in the file (a third
# replaced, a third of new names, a third deleted), the serial moved on and the zone reloaded
# (shoalctl reload, knotc zone-reload; Knot with zonefile-load: difference-no-serial and
# journal-content: all, its incremental road): reload to the first new name answered, wall
# time and CPU. Medians.
#
# Usage: tests/bench/sign.sh [-n NAMES] [-c CHANGES] [-r ROUNDS] [BUILDDIR]
#   defaults: 200000 names, 2000 changes, 3 rounds, $SHOAL_BUILDDIR or build/dev
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
names=200000 changes=2000 rounds=3
while getopts "n:c:r:h" opt; do
	case $opt in
	n) names=$OPTARG ;;
	c) changes=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
export SHOAL_BUILDDIR=${1:-${SHOAL_BUILDDIR:-$SRC/build/dev}} SHOAL_SRCDIR=$SRC
. "$SRC/tests/integration/lib.sh"
. "$SRC/tests/bench/servers.sh"
set +e
[ -n "$KNOTD" ] && [ -n "$KNOTC" ] || { echo "knotd and knotc (knot) are needed"; exit 1; }
ORIGIN=signbench.test.
bash "$SRC/tests/bench/genzone.sh" "$ORIGIN" "$names" "$T_DIR/zone" "$T_DIR/queries" 10 \
	>/dev/null
# the changed file: h(3k) replaced, h(3k+1) deleted, n(k) added, for k < changes / 3
awk -v n="$((changes / 3))" '
	/^h[0-9]+ IN / { i = substr($1, 2) + 0
		if (i < 3 * n && i % 3 == 1) next
		if (i < 3 * n && i % 3 == 0 && $3 == "A") { print $1, "IN A 198.51.100." (i % 250); next } }
	/ IN SOA / { $7 = $7 + 1 }
	{ print }
	END { for (k = 0; k < n; k++) printf "n%d IN A 203.0.113.%d\n", k, k % 250 }
' "$T_DIR/zone" >"$T_DIR/zone.changed"
echo "sign bench: $(grep -c ' IN ' "$T_DIR/zone") records, $changes changed; load:" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"

# signed PORT: the SOA is served with its RRSIG
signed() {
	"$DIG" @127.0.0.1 -p "$1" +norec +dnssec +time=1 +tries=1 "$ORIGIN" SOA 2>/dev/null |
		grep -q "RRSIG"
}

# until_signed PORT PID LIMIT: waits; prints the seconds, fails past LIMIT or PID gone
until_signed() {
	local t0 now
	t0=$(date +%s.%N)
	while ! signed "$1"; do
		kill -0 "$2" 2>/dev/null || return 1
		now=$(date +%s.%N)
		awk -v a="$t0" -v b="$now" -v l="$3" 'BEGIN { exit !(b - a > l) }' && return 1
		sleep 0.05
	done
	now=$(date +%s.%N)
	awk -v a="$t0" -v b="$now" 'BEGIN { printf "%.3f\n", b - a }'
}

# start_signer NAME DIR PORT: the server signing DIR/zone; sets PID_NAME
start_signer() {
	local s=$1 dir=$2 port=$3
	mkdir -p "$dir"
	cp "$T_DIR/zone" "$dir/zone"
	if [ "$s" = shoal ]; then
		cat >"$dir/shoald.conf" <<-CONF
			listen: 127.0.0.1@$port
			threads: 1
			control: $dir/ctl
			keys-dir: $dir/keys
			dnssec-policies:
			  - { id: p, rrsig-lifetime: 1209600, rrsig-refresh: 604800, signing-threads: 1 }
			zones:
			  - { name: $ORIGIN, file: $dir/zone, dnssec-policy: p }
		CONF
		"$SHOALD" -c "$dir/shoald.conf" >"$dir/log" 2>&1 &
		PID_shoal=$!
		T_PIDS="$T_PIDS $PID_shoal"
	else
		{
			knot_server_conf "$dir" "$port" warning
			printf 'policy:\n  - id: p\n    algorithm: ecdsap256sha256\n    nsec3: off\n'
			printf '    rrsig-lifetime: 14d\n    rrsig-refresh: 7d\n    signing-threads: 1\n'
			knot_template "$dir" "$dir/zone" "journal-content: all" \
				"zonefile-load: difference-no-serial" "dnssec-signing: on" \
				"dnssec-policy: p"
			printf '  - domain: "%s"\n' "$ORIGIN"
		} >"$dir/knot.conf"
		knot_start "$dir" "$dir/stderr.log"
		PID_knot=$PEER_PID
	fi
}

# reload NAME DIR: the changed file in place, the zone reloaded by a command in the
# background (RELOAD_PID), so that the caller's clock starts with it
reload() {
	cp "$T_DIR/zone.changed" "$2/zone.new" && mv "$2/zone.new" "$2/zone"
	if [ "$1" = shoal ]; then
		"$SHOALCTL" -s "$2/ctl" reload "$ORIGIN" >/dev/null 2>&1 &
	else
		"$KNOTC" -c "$2/knot.conf" zone-reload "$ORIGIN" >/dev/null 2>&1 &
	fi
	RELOAD_PID=$!
}

declare -A r
for round in $(seq 1 "$rounds"); do
	for s in shoal knot; do
		dir=$T_DIR/$s.$round port=$(free_port)
		start_signer "$s" "$dir" "$port"
		eval "pid=\$PID_$s"
		t=$(until_signed "$port" "$pid" 600) || { echo "$s did not sign"; tail -5 "$dir"/*log; exit 1; }
		r[$s.load]+="$t " r[$s.load_cpu]+="$(awk -v n="$(cpu_ticks "$pid")" 'BEGIN { printf "%.2f", n / 100 }') "
		c0=$(cpu_ticks "$pid")
		reload "$s" "$dir"
		t=$(wait_zone "$port" "n0.$ORIGIN" 600 "$pid") || { echo "$s did not reload"; exit 1; }
		c1=$(cpu_ticks "$pid")
		r[$s.change]+="$t " r[$s.change_cpu]+="$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", (b - a) / 100 }') "
		wait "$RELOAD_PID"
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
done

# median "A B C": the middle value
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '\n| %s names, %s changes (medians of %s) | Shoal | Knot | Shoal / Knot |\n|---|---|---|---|\n' \
	"$names" "$changes" "$rounds"
for k in load load_cpu change change_cpu; do
	a=$(median "${r[shoal.$k]}") b=$(median "${r[knot.$k]}")
	case $k in
	load) label="full signature at load: start to the signed SOA, s" ;;
	load_cpu) label="full signature at load: server CPU, s" ;;
	change) label="changes re-signed: reload to served, s" ;;
	change_cpu) label="changes re-signed: server CPU, s" ;;
	esac
	printf '| %s | %s | %s | %s |\n' "$label" "$a" "$b" \
		"$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')"
done
echo "rounds: shoal load ${r[shoal.load]}/ change ${r[shoal.change]}; knot load ${r[knot.load]}/ change ${r[knot.change]}"
