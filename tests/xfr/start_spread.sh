#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/start_spread: secondary zones at start do not all ask their primary at once (issue 30).
# ZONES secondary zones (4,000 here: CONF_ZONES_MAX; tests/bench/start_spread.sh runs
# 100,000), each served from its saved copy, share one primary (tests/xfr/soa_primary.pl,
# which counts the SOA queries over UDP and the TCP connections it gets, by second). At
# start their refreshes are spread over a window that grows with their number, and no
# second brings the primary more than serial-query-rate questions (with the burst of a
# tenth of it). Before, one thread asked every zone in turn by TCP, as fast as it could.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

ZONES=${ZONES:-4000}
RATE=${RATE:-200}
WATCH=${WATCH:-5}
command -v perl >/dev/null || { echo "SKIP: perl is not installed"; exit 77; }
PORT=$(free_port) || exit 99
PRIMARY=$(free_port) || exit 99
perl "$SHOAL_SRCDIR/tests/xfr/soa_primary.pl" "$PRIMARY" 1 >"$T_DIR/primary.out" 2>&1 &
T_PIDS="$T_PIDS $!"
wait_until 10 grep -q ready "$T_DIR/primary.out" || { echo "soa_primary.pl did not start"; exit 99; }
mkdir "$T_DIR/zones"
awk -v n="$ZONES" -v dir="$T_DIR/zones" -v primary="$PRIMARY" -v port="$PORT" -v t="$T_DIR" -v rate="$RATE" 'BEGIN {
	printf "listen: 127.0.0.1@%s\nthreads: 1\ncontrol: %s/ctl\nserial-query-rate: %s\nzones:\n", port, t, rate >(t "/shoald.conf")
	for (i = 1; i <= n; i++) {
		f = dir "/z" i ".zone"
		printf "$ORIGIN z%d.test.\n$TTL 300\n@ SOA ns1 hm 1 3600 600 86400 300\n@ NS ns1\nns1 A 192.0.2.1\n", i >f
		close(f)
		printf "  - name: z%d.test\n    file: %s\n    primaries: [ 127.0.0.1@%s NOKEY ]\n", i, f, primary >(t "/shoald.conf")
	}
}'
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
sleep "$WATCH"
# what the primary got each second since the first question: "SECOND COUNT", busiest first
busiest=$(awk '{ n[$2]++ } END { for (s in n) print s, n[s] }' "$T_DIR/primary.out" | sort -k2,2nr | head -1)
total=$(grep -cE "^(soa|tcp) " "$T_DIR/primary.out")
echo "busiest second: ${busiest:-none}; questions in ${WATCH} s: $total; TCP: $(grep -c '^tcp ' "$T_DIR/primary.out")"
if [ "$total" -gt 0 ]; then pass "the primary is asked ($total questions)"
else fail "the primary is asked: [$(tail -3 "$T_DIR/shoald.log")]"; fi
most=${busiest#* }
if [ "${most:-0}" -le $((RATE + RATE / 10 + 1)) ]; then
	pass "no second brings it more than serial-query-rate $RATE (the busiest: ${most:-0})"
else
	fail "a second brought it ${most} questions, more than serial-query-rate $RATE"
fi
if [ "$total" -lt "$ZONES" ]; then pass "not all $ZONES zones asked within $WATCH s"
else fail "all $ZONES zones asked within $WATCH s: not spread"; fi
check_eq "over UDP (SOA queries), no transfer: each zone is up to date" 0 \
	"$(grep -c '^tcp ' "$T_DIR/primary.out")"
stop_within "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
