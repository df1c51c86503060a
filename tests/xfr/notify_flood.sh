#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/notify_flood: NOTIFYs schedule refreshes, they do not each make one (issue 30). 1,000
# NOTIFYs with the serial served (as a primary repeats them, or anyone who forges its
# address) cause no query to the primary and a few log lines; 200 with a newer serial are
# answered all the same, and cause a few SOA queries over UDP (coalesced: one refresh pending
# per zone) and no transfer, as the primary still has the serial served. Before, each NOTIFY
# logged a line and most made a TCP IXFR.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

start_bad_primary BAD
PORT=$(free_port) || exit 99
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
zones:
  - name: n.test
    file: $T_DIR/n.test.zone
    primaries: [ 127.0.0.1@$BAD NOKEY ]
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
served() { [ "$(peer_serial "$PORT" n.test)" = 2 ]; }
if wait_until 60 served; then pass "n.test transferred (serial 2)"
else fail "n.test transferred: [$("$SHOALCTL" -s "$T_DIR/ctl" zone-status)]"; fi
# asked: what reached the primary about n.test (transfers, NOTIFYs, SOA queries)
asked() { grep -cE "^(request|query) n " "$T_DIR/BAD.out"; }
transfers() { grep -cE "^request n (251|252)" "$T_DIR/BAD.out"; }
notify_lines() { grep -c "NOTIFY n.test" "$T_DIR/shoald.log"; }
sleep 1 # the first refresh's questions all in
before=$(asked)
lines_before=$(notify_lines)

out=$(perl "$SHOAL_SRCDIR/tests/xfr/notify_flood.pl" "$PORT" n.test 2 1000)
check_eq "1000 NOTIFYs of the serial served are answered NOERROR" "answered 1000 rcode0=1000" "$out"
sleep 1 # what they would have caused, given the time to come
check_eq "... and ask the primary nothing" "$before" "$(asked)"
lines=$(($(notify_lines) - lines_before))
if [ "$lines" -le 5 ]; then pass "... and log $lines lines (at most 5)"
else fail "... and log $lines lines: $(grep "NOTIFY n.test" "$T_DIR/shoald.log" | tail -3)"; fi
check_match "... counted as ignored" "\"notify_ignored\": 1000" \
	"$("$SHOALCTL" -s "$T_DIR/ctl" stats json)"

transfers_before=$(transfers)
soa_before=$(grep -c "^query n soa" "$T_DIR/BAD.out")
lines_before=$(notify_lines)
out=$(perl "$SHOAL_SRCDIR/tests/xfr/notify_flood.pl" "$PORT" n.test 3 200)
check_eq "200 NOTIFYs of a newer serial are answered NOERROR" "answered 200 rcode0=200" "$out"
soa_asked() { [ "$(grep -c "^query n soa" "$T_DIR/BAD.out")" -gt "$soa_before" ]; }
if wait_until 30 soa_asked; then pass "... and the primary is asked for its SOA"
else fail "... and the primary is asked for its SOA: [$(tail -5 "$T_DIR/BAD.out")]"; fi
sleep 1
soa=$(($(grep -c "^query n soa" "$T_DIR/BAD.out") - soa_before))
if [ "$soa" -le 10 ]; then pass "... $soa times (at most 10: one refresh pending at a time)"
else fail "... $soa times: not coalesced"; fi
check_eq "... over UDP only: the primary has the serial served, no transfer" \
	"$transfers_before" "$(transfers)"
lines=$(($(notify_lines) - lines_before))
if [ "$lines" -le 12 ]; then pass "... and $lines log lines (at most 12)"
else fail "... and $lines log lines: $(grep "NOTIFY n.test" "$T_DIR/shoald.log" | tail -3)"; fi
check_eq "n.test still serves serial 2" 2 "$(peer_serial "$PORT" n.test)"
stop_within "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
