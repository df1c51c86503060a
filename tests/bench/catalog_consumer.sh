#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A consumer catalog of N members (default 100,000): what one member added or removed costs,
# beside one zone added or removed by shoalctl on the same server. The catalog cat.bench is
# a primary loaded from a file (catalog-role consumer); its members are secondaries of a
# template whose primary never answers (each member costs the consumer's step only). Each
# round: zone-add and zone-remove of a zone in no catalog; the catalog's file with one
# member more, `shoalctl reload cat.bench`; then with it removed again. Times from the log's
# millisecond stamps: zone-add/zone-remove from "requested", a member from the catalog's
# publication ("reload of cat.bench. done"); to the change published ("... done": the main
# loop's part) and to the scheduler taking the new secondary table ("secondary zones: ...
# kept"). Medians over rounds, printed as a Markdown table. Not run by make check.
# Usage: tests/bench/catalog_consumer.sh [-n MEMBERS] [-r ROUNDS] [BUILDDIR]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
n=100000 rounds=5
while getopts "n:r:" o; do
	case $o in
	n) n=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) sed -n '13p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
T_NAME=bench-catalog-consumer
# shellcheck source=servers.sh
. "$SRC/tests/bench/servers.sh"
SHOAL_BUILDDIR=$(bench_build "${1:-}")
export SHOAL_BUILDDIR
# shellcheck source=../integration/lib.sh
. "$SRC/tests/integration/lib.sh"
chmod 755 "$T_DIR"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# catalog SERIAL EXTRA: the catalog's file, members m0 .. m(n-1), and EXTRA if not ""
catalog() {
	awk -v n="$n" -v s="$1" -v x="$2" 'BEGIN {
		printf "$ORIGIN cat.bench.\n$TTL 0\n@ SOA invalid. invalid. %d 3600 600 86400 0\n", s
		printf "@ NS invalid.\nversion TXT \"2\"\n"
		for (i = 0; i < n; i++) printf "u%d.zones PTR m%d.bench.\n", i, i
		if (x != "") printf "x.zones PTR %s.\n", x }' >"$T_DIR/cat.zone.new"
	mv "$T_DIR/cat.zone.new" "$T_DIR/cat.zone"
}
# ms_between FROM TO: milliseconds between the last log line matching FROM and the first
# after it matching TO (both extended regular expressions)
ms_between() {
	awk -v a="$1" -v b="$2" '
		function ms(t) { split(substr(t, 12, 12), p, ":"); return (p[1] * 3600 + p[2] * 60 + p[3]) * 1000 }
		$0 ~ a { t0 = ms($1); armed = 1; next }
		armed && $0 ~ b { t1 = ms($1); armed = 0 }
		END { printf "%d\n", t1 - t0 }' "$T_DIR/shoald.log"
}
# log_count RE COUNT: the log has COUNT lines matching RE
log_count() { [ "$(grep -cE -- "$1" "$T_DIR/shoald.log")" -ge "$2" ]; }

PORT=$(free_port)
mkdir -p "$T_DIR/state"
cp "$SRC/tests/integration/zones/small.zone" "$T_DIR/zone.db"
catalog 1 ""
{
	printf 'listen: 127.0.0.1@%s\nthreads: 1\ncontrol: %s/ctl\n' "$PORT" "$T_DIR"
	printf 'state-dir: %s/state\nzones-dir: %s\nserial-query-rate: 10\n' "$T_DIR" "$T_DIR"
	printf 'templates:\n  - id: t\n    primaries: 127.0.0.1@9 NOKEY\nzones:\n'
	printf '  - {name: cat.bench, file: cat.zone, catalog-role: consumer, catalog-template: t}\n'
} >"$T_DIR/shoald.conf"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" >/dev/null
wait_until 300 log_count "catalog cat\.bench\. done" 1
ctl=(-s "$T_DIR/ctl")
kept="secondary zones: .* kept"
: >"$T_DIR/times"
serial=1 steps=1 takes=0
# measure WHAT FROM DONE: after the change, until the scheduler took it; one line to times:
# WHAT, ms from FROM to DONE (the main loop's part), ms from FROM to the table taken
measure() {
	takes=$((takes + 1))
	wait_until 120 log_count "$kept" "$takes"
	echo "$1 $(ms_between "$2" "$3") $(ms_between "$2" "$kept")" >>"$T_DIR/times"
}
for r in $(seq "$rounds"); do
	"$SHOALCTL" "${ctl[@]}" zone-add "plain$r.bench" "$T_DIR/zone.db" >/dev/null
	measure zone-add "zone-add .*: requested" "zone-add done"
	"$SHOALCTL" "${ctl[@]}" zone-remove "plain$r.bench" >/dev/null
	measure zone-remove "zone-remove .*: requested" "zone-remove done"
	for x in "added$r.bench" ""; do
		serial=$((serial + 1)) steps=$((steps + 1))
		catalog "$serial" "$x"
		"$SHOALCTL" "${ctl[@]}" reload cat.bench >/dev/null
		wait_until 120 log_count "catalog cat\.bench\. done" "$steps"
		measure "member-$([ -n "$x" ] && echo added || echo removed)" \
			"reload of cat\.bench\. done" "catalog cat\.bench\. done"
	done
done
stop_pid "$SHOALD_PID"
# column WHAT N: the median of column N of WHAT's lines
column() { awk -v w="$1" -v c="$2" '$1 == w { print $c }' "$T_DIR/times" | median; }
echo "| $n members | main loop (ms) | until the scheduler took it (ms) |"
echo "|---|---|---|"
for w in zone-add zone-remove member-added member-removed; do
	echo "| $w | $(column $w 2) | $(column $w 3) |"
done
