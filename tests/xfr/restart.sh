#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# xfr/restart: zone timers survive a restart (issue 30). A secondary zone whose primary has
# gone expires when it would have had shoald kept running, not expire seconds after the
# restart; its next refresh is the one planned before. A primary zone whose serial changed
# while shoald was down is NOTIFYed at start; one that did not change is not. The timers are
# in state-dir, which shoald makes; without it they started afresh at every start.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"
. "$SHOAL_SRCDIR/tests/xfr/peers.sh"

start_bad_primary BAD
PORT=$(free_port) || exit 99
NOTE=$(free_port) || exit 99 # where the NOTIFYs go: nothing listens there before the restart
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
# zone NAME SERIAL: a primary zone file
zone() {
	printf '$ORIGIN %s.\n$TTL 300\n@ IN SOA ns1 hostmaster %s 3600 600 86400 60\n@ IN NS ns1\nns1 IN A 192.0.2.1\n' \
		"$1" "$2" >"$T_DIR/$1.zone.new"
	mv "$T_DIR/$1.zone.new" "$T_DIR/$1.zone"
}
zone p.test 1
zone q.test 1
# e.test expires 15 s after its last refresh (its SOA's 86400, bounded by max-expire-time)
cat >"$T_DIR/shoald.conf" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
state-dir: state
min-expire-time: 1
max-expire-time: 15
zones:
  - name: e.test
    file: e.test.zone
    primaries: [ 127.0.0.1@$BAD NOKEY ]
  - name: p.test
    file: p.test.zone
    notify: [ 127.0.0.1@$NOTE NOKEY ]
  - name: q.test
    file: q.test.zone
    notify: [ 127.0.0.1@$NOTE NOKEY ]
CONF
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
served() { [ "$(peer_serial "$PORT" e.test)" = 2 ]; }
if wait_until 60 served; then pass "e.test transferred (serial 2)"
else fail "e.test transferred: [$(ctl zone-status)]"; fi
# field NAME WHAT: WHAT's value in NAME's line of zone-status
field() { ctl zone-status | grep "^$1\. " | sed -n "s/.* $2 \([^ ]*\).*/\1/p"; }
expires=$(field e.test expires)
next=$(field e.test next-refresh)
check_match "zone-status shows when e.test expires" "^20[0-9-]+T[0-9:]+Z$" "$expires"
# the primary goes: no refresh can succeed any more
kill "$BAD_PID"
stop_within "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
check_match "the timers were saved" "^shoal-state 1$" "$(sed -n 2p "$T_DIR/state/timers" 2>&1)"

# while down: p.test changes, q.test does not; a secondary listens where the NOTIFYs go
zone p.test 2
perl "$SHOAL_SRCDIR/tests/xfr/bad_primary.pl" "$NOTE" >"$T_DIR/NOTE.out" 2>&1 &
T_PIDS="$T_PIDS $!"
wait_until 10 grep -q ready "$T_DIR/NOTE.out" || exit 99
sleep 4 # so that expiring 15 s after the restart would be later than planned
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
check_eq "after the restart e.test expires when it would have" "$expires" \
	"$(field e.test expires)"
check_eq "... and is refreshed when it would have" "$next" "$(field e.test next-refresh)"
notified() { grep -q "^request p 6 2" "$T_DIR/NOTE.out"; }
if wait_until 30 notified; then pass "p.test, changed while down, is NOTIFYed at start"
else fail "p.test is NOTIFYed at start: [$(cat "$T_DIR/NOTE.out")]"; fi
check_eq "q.test, unchanged, is not" 0 "$(grep -c "^request q " "$T_DIR/NOTE.out")"
servfail() { q "$PORT" e.test SOA | grep -q "status: SERVFAIL"; }
if wait_until 30 servfail; then pass "e.test expires"
else fail "e.test expires: [$(ctl zone-status)]"; fi
# when it did, against when it was due (both to the second)
at=$(date -u +%s)
due=$(date -u -d "$expires" +%s)
if [ "$at" -le $((due + 2)) ]; then pass "... by its planned time ($((at - due)) s after it)"
else fail "... $((at - due)) s after its planned time: its expiry started again at the restart"; fi
stop_within "$SHOALD_PID"
check_eq "shoald stops cleanly" 0 $?
done_testing
