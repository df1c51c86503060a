#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shoald_reconfig_keep: a reconfig that changes one zone, and a global option of the
# secondaries' timers, leaves the others' transfer state alone. A secondary zone kept with
# the same primaries sends no refresh to its primary across it (issue 30: a change of
# min-retry-time refreshed them all), and its transfer held in flight goes on to its end; a
# NOTIFY not yet answered for a primary zone kept alike goes on being retried. The control
# runs: a secondary zone whose primaries change asks them at once, and its transfer in flight
# is given up - what every secondary zone went through at each reconfig before.
. "${SHOAL_SRCDIR:-.}/tests/integration/lib.sh"

if ! command -v perl >/dev/null; then
	echo "SKIP: perl is needed for the primary"
	exit 77
fi
# zone NAME ADDR [SERIAL [FILE]]: a zone file for NAME (in FILE.zone) whose www has ADDR
zone() {
	cat >"$T_DIR/$1.zone.new" <<ZONEFILE
\$ORIGIN $1.
\$TTL 300
@    IN SOA ns1 hostmaster ${3:-1} 3600 600 86400 300
@    IN NS  ns1
ns1  IN A   192.0.2.1
www  IN A   $2
ZONEFILE
	mv "$T_DIR/$1.zone.new" "$T_DIR/${4:-$1}.zone"
}
ctl() { "$SHOALCTL" -s "$T_DIR/ctl" "$@" 2>&1; }
# requests LABEL: how many transfer requests for zone LABEL.test reached the primary
requests() { grep -c "^request $1 " "$T_DIR/primary.out"; }
requests_are() { [ "$(requests "$1")" = "$2" ]; }
# asked LABEL: how many questions of any kind (a refresh's SOA query over UDP too)
asked() { grep -cE "^(request|query) $1 " "$T_DIR/primary.out"; }
asked_is() { [ "$(asked "$1")" = "$2" ]; }
# in_flight: a transfer connection to the primary is open
in_flight() { ss -Htn state established "( dport = :$PORTB )" | grep -q .; }
notify_out() { ctl stats json | grep -o '"notify_out": {[^}]*}'; }
unanswered() { [ "$(json_value "$(notify_out)" unanswered | tr -d " ")" = "$1" ]; }

PORT=$(free_port) || exit 99
PORTB=$(free_port) || exit 99
HOLD=$T_DIR/release
# the primary: k.test whole at once, hold.test's first message then the rest once $HOLD exists
perl "$SHOAL_SRCDIR/tests/xfr/bad_primary.pl" "$PORTB" "$HOLD" >"$T_DIR/primary.out" 2>&1 &
T_PIDS="$T_PIDS $!"
wait_until 10 grep -q ready "$T_DIR/primary.out" || {
	echo "bad_primary.pl did not start"
	exit 99
}
# NOTIFY of n.test goes to a port nothing answers on: it is retried until notify-retry
PORTN=$(free_port) || exit 99
zone a.test 192.0.2.10
zone n.test 192.0.2.50
# conf A-FILE K-PRIMARIES HOLD-PRIMARIES [RETRY]: k.test first, so its transfer is done
# before hold.test's holds a transfer thread; min-retry-time RETRY (5 unless given)
conf() {
	cat >"$T_DIR/shoald.conf.new" <<CONF
listen: 127.0.0.1@$PORT
threads: 1
control: $T_DIR/ctl
xfr-timeout: 600
xfr-message-timeout: 300
notify-retry: 4
min-retry-time: ${4:-5}
zones:
  - name: a.test
    file: $1
  - name: k.test
    primaries: [ $2 ]
  - name: hold.test
    primaries: [ $3 ]
  - name: n.test
    file: n.test.zone
    notify: [ 127.0.0.1@$PORTN NOKEY ]
CONF
	mv "$T_DIR/shoald.conf.new" "$T_DIR/shoald.conf"
}
P="127.0.0.1@$PORTB NOKEY"
conf a.test.zone "$P" "$P"
start_shoald "$PORT" -c "$T_DIR/shoald.conf" || exit 99
k_answers() { [ "$(q "$PORT" +short www.k.test A)" = 192.0.2.2 ]; }
if wait_until 60 k_answers; then
	pass "k.test transferred from its primary"
else
	fail "k.test transferred: [$(ctl zone-status)]"
fi
if wait_until 60 requests_are hold 1 && wait_until 30 in_flight; then
	pass "hold.test's transfer is held in flight"
else
	fail "hold.test's transfer is held in flight: [$(cat "$T_DIR/primary.out")]"
fi
check_eq "one request for k.test so far" 1 "$(requests k)"

# a NOTIFY for n.test, unanswered: a new serial, reloaded
zone n.test 192.0.2.51 2
ctl reload n.test >/dev/null
if wait_line "$T_DIR/shoald.log" "zone n\.test\.: serial 2: notifying"; then
	pass "n.test's NOTIFY was sent"
else
	fail "n.test's NOTIFY was sent: [$(grep -i notify "$T_DIR/shoald.log")]"
fi

# --- a reconfig that changes a.test, and the secondaries' min-retry-time ---
zone a.test 192.0.2.11 1 a2.test
conf a2.test.zone "$P" "$P" 6
out=$(ctl reconfig)
check_eq "reconfig changing a.test exits 0" 0 $?
check_match "it reloads a.test alone" "file: a\.test\.$" "$out"
check_eq "a.test's new data is served" 192.0.2.11 "$(q "$PORT" +short www.a.test A)"
if in_flight; then
	pass "hold.test's transfer is still in flight after the reconfig"
else
	fail "hold.test's transfer is still in flight after the reconfig"
fi
touch "$HOLD"
hold_answers() { [ "$(q "$PORT" +short www.hold.test A)" = 192.0.2.2 ]; }
if wait_until 60 hold_answers; then
	pass "the transfer held across the reconfig completed"
else
	fail "the transfer held across the reconfig completed: [$(ctl zone-status)]"
fi
check_eq "hold.test was asked for once: its transfer was not started again" 1 \
	"$(requests hold)"
# a marker: a refresh of hold.test comes after the scheduler has taken the reconfig over
ctl refresh hold.test >/dev/null
if wait_until 60 requests_are hold 2; then
	pass "the scheduler took the reconfig over"
else
	fail "the scheduler took the reconfig over: [$(cat "$T_DIR/primary.out")]"
fi
check_eq "k.test sent no refresh to its primary across the reconfig" 1 "$(asked k)"
check_match "the log says the zones were kept" "secondary zones: 2 kept with their timers" \
	"$(cat "$T_DIR/shoald.log")"
# 4 sends 1, 2 and 4 s apart, then 8 s for the last answer: given up 15 s after the first
if wait_until 120 unanswered 1; then
	pass "n.test's NOTIFY was retried to its end across the reconfig"
else
	fail "n.test's NOTIFY was retried to its end: [$(notify_out)]"
fi

# --- the control run: k.test's primaries change, so it is asked at once; hold.test's
# primaries change while its transfer is held, so that is given up ---
rm -f "$HOLD"
ctl refresh hold.test >/dev/null
if wait_until 60 requests_are hold 3 && wait_until 30 in_flight; then
	pass "hold.test's transfer is held in flight again"
else
	fail "hold.test's transfer is held in flight again: [$(cat "$T_DIR/primary.out")]"
fi
PORTX=$(free_port) || exit 99
conf a2.test.zone "$P, 127.0.0.1@$PORTX NOKEY" "$P, 127.0.0.1@$PORTX NOKEY" 6
out=$(ctl reconfig)
check_eq "reconfig changing k.test's and hold.test's primaries exits 0" 0 $?
# given up, hold.test (changed) asks again at once, and is held again
if wait_line "$T_DIR/shoald.log" "transfer from 127.0.0.1@$PORTB given up: a reconfig changed" &&
	wait_until 60 requests_are hold 4; then
	pass "control: the transfer of a zone changed was given up and started again"
else
	fail "control: the transfer of a zone changed was given up: [$(cat "$T_DIR/primary.out")]"
fi
if wait_until 60 asked_is k 2; then
	pass "control: a zone changed asks its primary at once (the restart spared the others)"
else
	fail "control: a zone changed asks its primary at once: [$(cat "$T_DIR/primary.out")]"
fi
touch "$HOLD"

stop_within "$SHOALD_PID"
check_eq "shoald exits 0 (no sanitizer report)" 0 $?
done_testing
