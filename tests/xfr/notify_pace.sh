#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/notify_pace: NOTIFY out has a cap in flight and paces (issue 30). A reload that changes
# the serial of 1,000 zones with a notify list tells their secondary (tests/xfr/soa_primary.pl,
# which answers at once and counts the NOTIFYs it gets by second) of each, every one answered,
# but never more than 32 sends a tenth of a second: no second brings it more than 320 (and one
# tick's worth on top, for the second's edges).
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

ZONES=1000
command -v perl >/dev/null || { echo "SKIP: perl is not installed"; exit 77; }
PORT=$(free_port) || exit 99
PEER=$(free_port) || exit 99
perl "$SHOAL_SRCDIR/tests/xfr/soa_primary.pl" "$PEER" 1 >"$T_DIR/peer.out" 2>&1 &
T_PIDS="$T_PIDS $!"
wait_until 10 grep -q ready "$T_DIR/peer.out" || { echo "soa_primary.pl did not start"; exit 99; }
mkdir "$T_DIR/zones"
# zones SERIAL: every zone file at SERIAL
zones() {
	awk -v n="$ZONES" -v dir="$T_DIR/zones" -v serial="$1" 'BEGIN {
		for (i = 1; i <= n; i++) {
			f = dir "/p" i ".zone"
			printf "$ORIGIN p%d.test.\n$TTL 300\n@ SOA ns1 hm %d 3600 600 86400 300\n@ NS ns1\nns1 A 192.0.2.1\n", i, serial >f
			close(f)
		}
	}'
}
zones 1
awk -v n="$ZONES" -v dir="$T_DIR/zones" -v peer="$PEER" -v port="$PORT" -v t="$T_DIR" 'BEGIN {
	printf "listen: 127.0.0.1@%s\nthreads: 1\ncontrol: %s/ctl\nzones:\n", port, t
	for (i = 1; i <= n; i++)
		printf "  - name: p%d.test\n    file: %s/p%d.zone\n    notify: [ 127.0.0.1@%s NOKEY ]\n", i, dir, i, peer
}' >"$T_DIR/shoald.conf"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
zones 2
"$SHOALCTL" -s "$T_DIR/ctl" reload >/dev/null
told() { [ "$(grep -c '^notify ' "$T_DIR/peer.out")" -ge "$ZONES" ]; }
if wait_until 60 told; then pass "all $ZONES zones NOTIFYed"
else fail "all $ZONES zones NOTIFYed: $(grep -c '^notify ' "$T_DIR/peer.out")"; fi
answered() { json_value "$("$SHOALCTL" -s "$T_DIR/ctl" stats json | grep -o '"notify_out": {[^}]*}')" answered | tr -d ' '; }
all_answered() { [ "$(answered)" = "$ZONES" ]; }
if wait_until 30 all_answered; then pass "... each answered once"
else fail "... each answered once: $(answered)"; fi
busiest=$(awk '$1 == "notify" { n[$2]++ } END { for (s in n) print n[s] }' "$T_DIR/peer.out" | sort -n | tail -1)
echo "busiest second: $busiest NOTIFYs"
if [ "${busiest:-0}" -le 352 ]; then pass "no second brought more than 352 (the busiest: $busiest)"
else fail "a second brought $busiest NOTIFYs: not paced"; fi
stop_within "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
