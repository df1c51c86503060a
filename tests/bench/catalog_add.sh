#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A producer catalog of N members (default 100,000): what one member added or removed
# costs, beside one zone added or removed outside any catalog. shoald serves zones
# z0.bench .. zN-1.bench, each a member of cat.bench (catalog-role producer); each round
# times, command to reply as shoalctl sees them: zone-add of a zone in no catalog,
# zone-remove of it, zone-add --catalog cat.bench (the reply waits until the catalog is
# made and read again) and zone-remove of that member; and the catalog's serial moved
# once by each. Medians over rounds, printed as a Markdown table.
# Usage: tests/bench/catalog_add.sh [-n MEMBERS] [-r ROUNDS] [BUILDDIR]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
n=100000 rounds=5
while getopts "n:r:" o; do
	case $o in
	n) n=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) sed -n '10p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
T_NAME=bench-catalog-add
# shellcheck source=servers.sh
. "$SRC/tests/bench/servers.sh"
SHOAL_BUILDDIR=$(bench_build "${1:-}")
export SHOAL_BUILDDIR
# shellcheck source=../integration/lib.sh
. "$SRC/tests/integration/lib.sh"
chmod 755 "$T_DIR"

ms_of() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
serial() { "$DIG" @127.0.0.1 -p "$PORT" +short +time=2 cat.bench SOA | awk '{ print $3 }'; }

PORT=$(free_port)
mkdir -p "$T_DIR/state"
cp "$SRC/tests/integration/zones/small.zone" "$T_DIR/zone.db"
{
	printf 'listen: 127.0.0.1@%s\nthreads: 1\ncontrol: %s/ctl\n' "$PORT" "$T_DIR"
	printf 'state-dir: %s/state\nzones-dir: %s\nzones:\n' "$T_DIR" "$T_DIR"
	printf '  - {name: cat.bench, catalog-role: producer}\n'
	awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++)
		printf "  - {name: z%d.bench, file: zone.db, catalog-member-of: cat.bench}\n", i }'
} >"$T_DIR/shoald.conf"
t0=$(date +%s%N)
start_shoald "$PORT" -c "$T_DIR/shoald.conf" >/dev/null
start_ms=$((($(date +%s%N) - t0) / 1000000))
ctl=(-s "$T_DIR/ctl")
: >"$T_DIR/plain_add" >"$T_DIR/plain_remove" >"$T_DIR/cat_add" >"$T_DIR/cat_remove"
moved=0
for r in $(seq "$rounds"); do
	ms_of "$SHOALCTL" "${ctl[@]}" zone-add "plain$r.bench" "$T_DIR/zone.db" >>"$T_DIR/plain_add"
	ms_of "$SHOALCTL" "${ctl[@]}" zone-remove "plain$r.bench" >>"$T_DIR/plain_remove"
	s0=$(serial)
	ms_of "$SHOALCTL" "${ctl[@]}" zone-add "m$r.bench" "$T_DIR/zone.db" --catalog cat.bench \
		>>"$T_DIR/cat_add"
	s1=$(serial)
	ms_of "$SHOALCTL" "${ctl[@]}" zone-remove "m$r.bench" >>"$T_DIR/cat_remove"
	s2=$(serial)
	[ "$s1" -gt "$s0" ] && [ "$s2" -gt "$s1" ] && moved=$((moved + 1))
done
stop_pid "$SHOALD_PID"
echo "| members | start to served (ms) | zone-add (ms) | zone-remove (ms) | zone-add --catalog (ms) | zone-remove of a member (ms) | catalog serial moved |"
echo "|---|---|---|---|---|---|---|"
echo "| $n | $start_ms | $(median <"$T_DIR/plain_add") | $(median <"$T_DIR/plain_remove") | $(median <"$T_DIR/cat_add") | $(median <"$T_DIR/cat_remove") | $moved of $rounds rounds, twice each |"
