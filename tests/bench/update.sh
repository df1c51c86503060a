#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Dynamic update benchmark (not a test): UPDATES single-record updates (RFC 2136, TSIG)
# into one zone of about RECORDS records, sent one after another by one nsupdate, to Shoal
# and to Knot DNS (a zone allowing updates by the same key), each with one worker; the wall
# time for all of them, and the queries lost meanwhile (shoal-flood at a paced rate during
# the updates: answers that did not come back within its wait). Rounds interleaved.
#
# Usage: tests/bench/update.sh [-n RECORDS] [-u UPDATES] [-r ROUNDS] [-Q QPS] [BUILDDIR]
#   defaults: 1000000 records, 2000 updates, 3 rounds, 20000 queries a second,
#   $SHOAL_BUILDDIR or build/dev
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
records=1000000 updates=2000 rounds=3 qps=20000
while getopts "n:u:r:Q:h" opt; do
	case $opt in
	n) records=$OPTARG ;;
	u) updates=$OPTARG ;;
	r) rounds=$OPTARG ;;
	Q) qps=$OPTARG ;;
	*) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
export SHOAL_BUILDDIR=${1:-${SHOAL_BUILDDIR:-$SRC/build/dev}} SHOAL_SRCDIR=$SRC
. "$SRC/tests/integration/lib.sh"
. "$SRC/tests/bench/servers.sh"
. "$SRC/tests/xfr/peers.sh"
set +e
command -v nsupdate >/dev/null || { echo "nsupdate (bind9-dnsutils) is needed"; exit 1; }
ORIGIN=updbench.test.
names=$((records * 10 / 11)) # each name an A, every tenth an AAAA too
bash "$SRC/tests/bench/genzone.sh" "$ORIGIN" "$names" "$T_DIR/zone" "$T_DIR/queries" 100000 \
	>/dev/null
echo "update bench: $(grep -c ' IN ' "$T_DIR/zone") records, $updates updates; load:" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
SECRET=$(printf 'update benchmark secret 32 octet' | base64)

# Shoal and Knot, one worker each, updates by key upd; zone files never written meanwhile.
P_SHOAL=$(free_port) P_KNOT=$(free_port)
mkdir -p "$T_DIR/shoal" "$T_DIR/knot"
cp "$T_DIR/zone" "$T_DIR/shoal/zone"
cat >"$T_DIR/shoal/shoald.conf" <<CONF
listen: 127.0.0.1@$P_SHOAL
threads: 1
zonefile-sync: 86400
keys:
  - { name: upd, algorithm: hmac-sha256, secret: "$SECRET" }
zones:
  - name: $ORIGIN
    file: $T_DIR/shoal/zone
    allow-update:
      - key: upd
CONF
"$SHOALD" -c "$T_DIR/shoal/shoald.conf" >"$T_DIR/shoal/log" 2>&1 &
PID_shoal=$!
{
	knot_server_conf "$T_DIR/knot" "$P_KNOT" warning
	knot_keys upd "$SECRET"
	echo "acl:"
	knot_acl upd update upd
	knot_template "$T_DIR/knot" "$T_DIR/zone" "journal-content: changes" \
		"zonefile-load: whole"
	printf '  - domain: "%s"\n    acl: upd\n' "$ORIGIN"
} >"$T_DIR/knot/knot.conf"
knot_start "$T_DIR/knot" "$T_DIR/knot/stderr.log"
PID_knot=$PEER_PID
T_PIDS="$T_PIDS $PID_shoal $PID_knot"
for s in shoal knot; do
	eval "port=\$P_${s^^} pid=\$PID_$s"
	wait_zone "$port" "h1.$ORIGIN" 300 "$pid" >/dev/null || { echo "$s did not load"; exit 1; }
done

# batch ROUND: nsupdate's input, one update (one record added) per send
batch() {
	printf 'zone %s\n' "$ORIGIN"
	seq 1 "$updates" | awk -v r="$1" -v o="$ORIGIN" \
		'{ printf "update add u%s-%d.%s 300 TXT \"%d\"\nsend\n", r, $1, o, $1 }'
}
printf '%-6s %5s %10s %12s %12s %10s\n' server round seconds "updates/s" "queries" "lost"
for r in $(seq 1 "$rounds"); do
	for s in shoal knot; do
		eval "port=\$P_${s^^}"
		"$SHOAL_FLOOD" -p "$port" -d "$T_DIR/queries" -Q "$qps" -l 600 -w 1 --json \
			>"$T_DIR/flood.json" 2>&1 &
		fpid=$!
		sleep 0.5
		t0=$(date +%s.%N)
		{ printf 'server 127.0.0.1 %s\n' "$port"; batch "$s$r"; } |
			nsupdate -y "hmac-sha256:upd:$SECRET" >"$T_DIR/nsupdate.out" 2>&1
		t1=$(date +%s.%N)
		sleep 0.5
		kill -INT "$fpid"
		wait "$fpid"
		sent=$(json_value "$(cat "$T_DIR/flood.json")" sent | tr -d ' ')
		lost=$(json_value "$(cat "$T_DIR/flood.json")" lost | tr -d ' ')
		added=$("$DIG" @127.0.0.1 -p "$port" +short "u$s$r-$updates.$ORIGIN" TXT)
		printf '%-6s %5s %10.3f %12.0f %12s %10s  %s\n' "$s" "$r" "$(calc "$t1 - $t0")" \
			"$(calc "$updates / ($t1 - $t0)")" "${sent:-?}" \
			"${lost:-?}" \
			"$([ -n "$added" ] && echo "last update served" || echo "LAST UPDATE MISSING")"
		[ -s "$T_DIR/nsupdate.out" ] && head -3 "$T_DIR/nsupdate.out"
	done
done
for s in shoal knot; do eval "kill \$PID_$s; wait \$PID_$s 2>/dev/null"; done
